/**
 * The send pipeline: where a sent message goes (routing to the queue's backlog or the matching
 * subscriptions, DST-2), whether it may go in now (quotas and throttling, DLV-7, DLV-8), when it
 * becomes deliverable (DLV-5), and the tail every send ends with, written once: store it, wait
 * for the commit, add it to its backlogs, page it out if the engine holds too much (PER-1, PER-4).
 */
import { Entry, type StoredMessage } from '../destination/entry.js';
import type { DestinationState, QueueState } from '../destination/destination-state.js';
import type { DeliveryTimes } from '../delivery/delivery-times.js';
import type { Admission, AdmissionPart, FlowControl } from '../delivery/flow-control.js';
import type { StoreOperation } from '../store-port.js';
import type { Paging } from './paging.js';
import type { Routed, StoreLink } from './store-link.js';

/** What a send that completed at once returns: settled already, shared, so it costs no allocation. */
const SENT: Promise<void> = Promise.resolve();

/** A transacted session's sends: held uncommitted until its commit stores and adds them (SES-2). */
export interface SendTransaction {
  hold(stored: StoredMessage, routed: Routed[]): void;
}

/** What the send pipeline needs of the engine. */
export interface SendPipelineContext {
  readonly storeLink: StoreLink;
  readonly flowControl: FlowControl;
  readonly deliveryTimes: DeliveryTimes;
  readonly paging: Paging;
}

export class SendPipeline {
  readonly #context: SendPipelineContext;

  constructor(context: SendPipelineContext) {
    this.#context = context;
  }

  /** The absolute delivery time of a send (DLV-5): a destination's TimeToDeliverOverride wins. */
  deliveryTime(state: DestinationState, now: number, deliveryDelay: number): number {
    return this.#context.deliveryTimes.timeFor(state, now, deliveryDelay);
  }

  /**
   * A message sent to expire at or before its delivery time: counted, never stored (DLV-5).
   * Nothing of the message is stored, but what rides with it is.
   */
  expiredAtSend(state: DestinationState, storeWith: readonly StoreOperation[]): Promise<void> {
    state.messagesExpiredAtSend++;
    return storeWith.length > 0 ? this.#context.storeLink.write(storeWith) : Promise.resolve();
  }

  /**
   * Sends a stored message to `state` (and, for a distributed topic or a member of one, to the
   * other members in `alsoTo`, DST-8): admitted, routed, then stored and added to its backlogs,
   * or held in `transaction`. `storeWith` is written in the same commit as the message (the
   * producer's option); `timeoutMs` is how long it may wait for room (DLV-7). Resolves once a
   * persistent message is stored (PER-1). Arguments rather than an options object: this is the
   * hot path, and the send waits across awaits, so an object per send would be an allocation.
   */
  send(
    state: DestinationState,
    alsoTo: readonly DestinationState[],
    stored: StoredMessage,
    storeWith: readonly StoreOperation[],
    timeoutMs: number,
    transaction: SendTransaction | undefined,
  ): Promise<void> {
    if (state.kind === 'queue' && alsoTo.length === 0)
      return this.#sendToQueue(state, stored, storeWith, timeoutMs, transaction);
    return this.#sendToTopics(state, alsoTo, stored, storeWith, timeoutMs, transaction);
  }

  /**
   * Not async itself: a plain non-persistent send to a queue that has room (the hot path) adds
   * its entry at once and returns a promise already settled, allocating neither a promise nor
   * an async frame; everything else goes on to {@link #sendAdmittedToQueue}.
   */
  #sendToQueue(
    state: QueueState,
    stored: StoredMessage,
    storeWith: readonly StoreOperation[],
    timeoutMs: number,
    transaction: SendTransaction | undefined,
  ): Promise<void> {
    let admission: Admission | Promise<Admission>;
    try {
      admission = this.admit(state, 1, stored.size, timeoutMs);
      if (admission instanceof Promise || stored.persistent || transaction || storeWith.length > 0)
        return this.#sendAdmittedToQueue(state, admission, stored, storeWith, transaction);
    } catch (error) {
      return Promise.reject(error);
    }
    // The room admission reserved is given back once the entry holds it, or when the send fails.
    try {
      stored.holders = 1;
      state.backlog.add(new Entry(stored));
      return SENT;
    } catch (error) {
      return Promise.reject(error);
    } finally {
      admission.release();
    }
  }

  async #sendAdmittedToQueue(
    state: QueueState,
    admission: Admission | Promise<Admission>,
    stored: StoredMessage,
    storeWith: readonly StoreOperation[],
    transaction: SendTransaction | undefined,
  ): Promise<void> {
    if (admission instanceof Promise) admission = await admission;
    // The room admission reserved is given back once the entry holds it, or when the send fails.
    try {
      if (!stored.persistent && !transaction && storeWith.length === 0) {
        // A plain non-persistent send that had to wait for room: nothing to store, no fan-out.
        stored.holders = 1;
        state.backlog.add(new Entry(stored));
        return;
      }
      const delivered = this.#deliver(stored, this.route(state, stored), storeWith, transaction);
      if (delivered) await delivered;
    } finally {
      admission.release();
    }
  }

  /**
   * A topic send is routed before it is admitted, so admission reserves room for one entry per
   * subscription it goes to (DLV-7). It counts as published only once admitted.
   */
  #sendToTopics(
    state: DestinationState,
    alsoTo: readonly DestinationState[],
    stored: StoredMessage,
    storeWith: readonly StoreOperation[],
    timeoutMs: number,
    transaction: SendTransaction | undefined,
  ): Promise<void> {
    if (alsoTo.length === 0) {
      const routed = this.entriesFor(state, stored);
      const admission = this.admit(state, routed.length, stored.size, timeoutMs);
      return this.#sendRouted(stored, admission, routed, storeWith, transaction, () =>
        this.published(state, routed.length),
      );
    }
    // A distributed topic, or a member of one, delivers to all its members (DST-8): each must have room.
    const targets = [state, ...alsoTo];
    const routes = targets.map((target) => this.entriesFor(target, stored));
    const parts = targets.map((target, i) => ({ target, entries: routes[i]!.length }));
    const admission = this.admitAll(parts, stored.size, timeoutMs);
    return this.#sendRouted(stored, admission, routes.flat(), storeWith, transaction, () => {
      for (const { target, entries } of parts) this.published(target, entries);
    });
  }

  async #sendRouted(
    stored: StoredMessage,
    admission: Admission | Promise<Admission>,
    routed: Routed[],
    storeWith: readonly StoreOperation[],
    transaction: SendTransaction | undefined,
    published: () => void,
  ): Promise<void> {
    if (admission instanceof Promise) {
      admission = await admission;
      // Subscriptions that ended while the send waited do not take it.
      routed = routed.filter((r) => !r.backlog.closed);
    }
    try {
      published();
      const delivered = this.#deliver(stored, routed, storeWith, transaction);
      if (delivered) await delivered;
    } finally {
      admission.release();
    }
  }

  /** Hands routed entries on: held as uncommitted in a transaction, else stored and added. */
  #deliver(
    stored: StoredMessage,
    routed: Routed[],
    storeWith: readonly StoreOperation[],
    transaction: SendTransaction | undefined,
  ): Promise<void> | undefined {
    if (transaction) {
      transaction.hold(stored, routed);
      return undefined;
    }
    return this.storeAndAdd(stored, routed, storeWith);
  }

  /**
   * Admits a send of `size` bytes taking `entries` entries in the destination (DLV-7, DLV-8):
   * the room it reserves, at once when it may go in (the hot path does not wait), else a promise
   * of it. The sender releases it once the entries are held, or when the send fails.
   */
  admit(
    state: DestinationState,
    entries: number,
    size: number,
    timeoutMs: number,
  ): Admission | Promise<Admission> {
    return this.#context.flowControl.admit(state, entries, size, timeoutMs);
  }

  /** Admits a send that goes to several destinations at once (a distributed topic). */
  admitAll(parts: readonly AdmissionPart[], size: number, timeoutMs: number): Admission | Promise<Admission> {
    return this.#context.flowControl.admitAll(parts, size, timeoutMs);
  }

  /** Where a message sent to a destination goes, as {@link entriesFor}, counted as published. */
  route(state: DestinationState, stored: StoredMessage): Routed[] {
    const routed = this.entriesFor(state, stored);
    this.published(state, routed.length);
    return routed;
  }

  /**
   * Where a message sent to a destination goes, not yet counted as published: the queue's
   * backlog, or each matching subscription of the topic, each with its own entry.
   */
  entriesFor(state: DestinationState, stored: StoredMessage): Routed[] {
    if (state.kind === 'queue') {
      stored.holders++;
      return [{ backlog: state.backlog, entry: new Entry(stored) }];
    }
    const routed = state
      .route(stored)
      .map((subscription) => ({ backlog: subscription.backlog, entry: new Entry(stored) }));
    stored.holders += routed.length;
    return routed;
  }

  /** Counts a message published to a topic that went to `subscriptions` subscriptions. */
  published(state: DestinationState, subscriptions: number): void {
    if (state.kind === 'queue') return;
    state.messagesPublished++;
    if (subscriptions === 0) state.messagesUnrouted++;
  }

  /**
   * The tail of a send outside a transaction: a persistent message (and `storeWith`, in the same
   * group commit) is stored first, then added to its backlogs. Returns a promise only when it
   * waits for the store.
   */
  storeAndAdd(
    stored: StoredMessage,
    routed: readonly Routed[],
    storeWith: readonly StoreOperation[],
  ): Promise<void> | undefined {
    const storeLink = this.#context.storeLink;
    const operations = stored.persistent ? storeLink.sendRecords(stored, routed) : [];
    if (operations.length > 0 || storeWith.length > 0)
      return storeLink.write([...operations, ...storeWith]).then(() => this.addToBacklogs(stored, routed));
    this.addToBacklogs(stored, routed);
    return undefined;
  }

  /** Adds a stored (or committed) send to its backlogs, paging it out if the engine holds too much. */
  addToBacklogs(stored: StoredMessage, routed: readonly Routed[]): void {
    for (const { backlog, entry } of routed) backlog.add(entry);
    if (stored.persistent) this.#context.paging.pageOutIfOverThreshold(stored);
  }
}
