/**
 * The send pipeline: where a sent message goes (routing to the queue's backlog or the matching
 * subscriptions, DST-2), whether it may go in now (quotas and throttling, DLV-7, DLV-8), when it
 * becomes deliverable (DLV-5), and the tail every send ends with, written once: store it, wait
 * for the commit, add it to its backlogs, page it out if the engine holds too much (PER-1, PER-4).
 */
import { Entry, type StoredMessage } from '../destination/entry.js';
import type { DestinationState } from '../destination/destination-state.js';
import type { DeliveryTimes } from '../delivery/delivery-times.js';
import type { Admission, AdmissionPart, FlowControl } from '../delivery/flow-control.js';
import type { StoreOperation } from '../store-port.js';
import type { Paging } from './paging.js';
import type { Routed, StoreLink } from './store-link.js';

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

  /** A message sent to expire at or before its delivery time: counted, never stored (DLV-5). */
  expiredAtSend(state: DestinationState): void {
    state.messagesExpiredAtSend++;
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
