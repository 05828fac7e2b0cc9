/**
 * A backlog: the messages of one queue or one topic subscription, and the dispatch of them to
 * its consumers. This is where the engine's ordering lives: available entries are kept in the
 * destination's order (priority, then send order, unless the destination declares keys), a
 * returned message goes back to where its sequence puts it, and each consumer takes the first
 * available entry it may have.
 *
 * Dispatch never rescans the backlog on the hot path: a consumer without a selector reads the
 * shared ordered set from its head; a consumer with a selector keeps its own ordered set of the
 * entries its selector matched when they became available (SEL-7 for those already there).
 */
import type { ScheduledTimer, TimerQueue } from '../clock.js';
import type { MessageSelector } from '../selector/index.js';
import { BacklogStatistics, type SharedTally } from './backlog-statistics.js';
import type { DestinationKey } from './destination-key.js';
import type { Entry, EntryState } from './entry.js';
import type { Undelivered } from './undelivered.js';
import { DEFAULT_UNIT_OF_ORDER_PROPERTY, unitOfOrderOf } from './unit-of-order.js';
import { type OrderedEntries, SortedEntries, bySeq, createOrderedEntries } from './ordered-entries.js';

/** What a backlog needs of a consumer. */
export interface BacklogConsumer {
  /** Its selector; null takes everything. */
  readonly selector: MessageSelector | null;
  /** Whether it can take one more entry now (a pending receive, or room in its window). */
  hasCapacity(): boolean;
  /** Hands over an entry, already in state `delivered`. */
  accept(entry: Entry): void;
  /** Whether it has a message only once its session commits (throttling counts it until then, DLV-8). */
  readonly transacted: boolean;
  /** The backlog was closed under it (its destination or subscription was deleted, DST-6). */
  backlogClosed(): void;
}

/** What a backlog asks of its owner. */
export interface BacklogHooks {
  readonly timers: TimerQueue;
  now(): number;
  /** An entry is gone for good (expired, purged, moved): forget it in the store. Acknowledgements are stored by whoever acknowledges. */
  removed(backlog: Backlog, entry: Entry): void;
  /** An entry's time to live ran out; the owner applies the expiration policy (and removes it). */
  expired(backlog: Backlog, entry: Entry): void;
  /** Messages left the backlog (acknowledged or removed): blocked sends may go on. */
  drained(): void;
  /** Gateway-wide held counts, kept up to date by every backlog. */
  readonly total: SharedTally;
}

interface ConsumerSlot {
  consumer: BacklogConsumer;
  /** Entries its selector matched, in order; undefined when it has no selector. */
  candidates: OrderedEntries | undefined;
}

/** Options that shape a backlog. */
export interface BacklogOptions {
  /** Sort order other than priority-then-send-order (DST-1). */
  keys?: readonly DestinationKey[] | undefined;
  /**
   * The property naming a message's unit of order (ORD-4): messages sharing its value are
   * handed out one at a time, in order. Default `JMSXGroupID`; null turns units of order off.
   */
  unitOfOrderProperty?: string | null | undefined;
  /** Its destination's held counts: a queue's own, or the one a topic's subscriptions share. */
  tally?: SharedTally | undefined;
  /** Its destination's undelivered messages, counted while producer throttling is on (DLV-8). */
  undelivered?: Undelivered | undefined;
}

export class Backlog {
  readonly stats: BacklogStatistics;
  readonly #available: OrderedEntries;
  readonly #keys: readonly DestinationKey[] | undefined;
  readonly #slots: ConsumerSlot[] = [];
  /** Entries waiting on a timer (delivery time, redelivery delay), so a purge can reach them. */
  readonly #waiting = new Map<Entry, ScheduledTimer>();
  /** Entries parked for room in a full error destination (DLV-3), so a purge can reach them. */
  readonly #parked = new Set<Entry>();
  #nextConsumer = 0;
  #takes = 0;
  #dispatching = false;
  #dispatchAgain = false;
  #closed = false;

  constructor(
    /** The store key: `queue://name` or the subscription key. */
    readonly key: string,
    private readonly hooks: BacklogHooks,
    options: BacklogOptions = {},
  ) {
    this.stats = new BacklogStatistics(hooks.total, options.tally, options.undelivered);
    this.#keys = options.keys;
    this.#available = createOrderedEntries(options.keys);
    this.#unitOfOrderProperty =
      options.unitOfOrderProperty === undefined
        ? DEFAULT_UNIT_OF_ORDER_PROPERTY
        : options.unitOfOrderProperty;
  }

  // --- units of order (ORD-4) ---
  //
  // Entries of a unit wait in the unit's own send-ordered queue; only its head is published to
  // consumers, and only while no message of the unit is out (delivered, waiting out a redelivery
  // delay, or parked for room in its error destination). So a busy unit costs dispatch nothing,
  // however many messages it has.

  readonly #unitOfOrderProperty: string | null;
  /** Units with entries queued or out; a unit is forgotten once it has neither. */
  readonly #units = new Map<string, UnitOfOrder>();

  #unitOf(entry: Entry): string | null {
    if (this.#unitOfOrderProperty === null) return null;
    const stored = entry.stored;
    if (stored.unitOfOrder === undefined)
      stored.unitOfOrder = unitOfOrderOf(stored.message, this.#unitOfOrderProperty);
    return stored.unitOfOrder;
  }

  #unit(key: string): UnitOfOrder {
    let unit = this.#units.get(key);
    if (!unit) this.#units.set(key, (unit = new UnitOfOrder()));
    return unit;
  }

  /**
   * Keeps a unit's count of messages out in step with an entry's state: a unit is busy while one
   * is out. A count, not a flag: an expired message parked from the unit's queue is out beside
   * the head that was already handed out.
   */
  #trackUnit(entry: Entry, from: EntryState, to: EntryState): void {
    const out = isOut(to);
    if (isOut(from) === out) return;
    const key = this.#unitOf(entry);
    if (key === null) return;
    if (out) this.#unit(key).out++;
    else {
      const unit = this.#units.get(key);
      if (unit) unit.out--;
    }
  }

  /** Publishes the unit's next entry when the unit is free and has none published. */
  #promote(key: string): void {
    const unit = this.#units.get(key);
    if (!unit || unit.out > 0) return;
    const published = unit.head;
    if (published && published.state === 'available' && published.generation === unit.headGeneration) return;
    const head = unit.queue.first();
    if (!head) {
      this.#units.delete(key);
      return;
    }
    unit.head = head;
    unit.headGeneration = head.generation;
    this.#publish(head);
  }

  /** Entries of units waiting behind their unit's head. */
  *#queuedInUnits(): IterableIterator<Entry> {
    for (const unit of this.#units.values()) {
      for (const entry of unit.queue.values()) if (entry !== unit.head) yield entry;
    }
  }

  /** Consumers attached now. */
  get consumerCount(): number {
    return this.#slots.length;
  }

  get closed(): boolean {
    return this.#closed;
  }

  // --- entries coming in ---

  /** Counts a transactional send that is not committed yet (pending: uncommitted). */
  holdUncommitted(entry: Entry): void {
    this.#setState(entry, 'uncommitted');
  }

  /** Drops an uncommitted send (rollback): the room it held is free for blocked sends. */
  discardUncommitted(entry: Entry): void {
    if (entry.state !== 'uncommitted') return;
    this.#setState(entry, 'removed');
    this.hooks.drained();
  }

  /**
   * Takes in a sent (or committed) entry: invisible until its delivery time (DLV-5), then
   * available. An entry already expired is expired at once.
   */
  add(entry: Entry): void {
    if (this.#closed) {
      this.#discard(entry);
      return;
    }
    this.stats.messagesReceived++;
    const stored = entry.stored;
    if (stored.scheduled) {
      const deliveryTime = stored.deliveryTime;
      if (deliveryTime > this.hooks.now()) {
        this.#wait(entry, 'scheduled', deliveryTime);
        return;
      }
    }
    this.#makeAvailable(entry);
  }

  /**
   * Puts back a delivered entry that was not acknowledged (rollback, recover, close, a listener
   * that threw). After `delayMs` it is available again at its place in the order (DLV-1, ORD-2).
   */
  release(entry: Entry, delayMs = 0): void {
    if (entry.state !== 'delivered') return;
    if (this.#closed) {
      this.#discard(entry);
      return;
    }
    entry.holder = undefined;
    if (delayMs > 0) this.#wait(entry, 'delayed', this.hooks.now() + delayMs);
    else this.#makeAvailable(entry);
  }

  /** Takes in a recovered entry that must wait out a redelivery delay until `until` (PER-2). */
  addDelayed(entry: Entry, until: number): void {
    if (this.#closed) {
      this.#discard(entry);
      return;
    }
    this.stats.messagesReceived++;
    this.#wait(entry, 'delayed', until);
  }

  /**
   * Puts back several entries before dispatching any of them, so the oldest is redelivered first
   * (ORD-2) rather than whichever was put back first.
   */
  releaseMany(entries: Iterable<Entry>, delayMs = 0): void {
    const wasDispatching = this.#dispatching;
    this.#dispatching = true;
    try {
      for (const entry of entries) this.release(entry, delayMs);
    } finally {
      this.#dispatching = wasDispatching;
    }
    if (!wasDispatching) this.dispatch();
  }

  /** Removes a delivered entry for good: its consumer acknowledged it. */
  acknowledge(entry: Entry): void {
    if (entry.state === 'removed') return;
    this.#setState(entry, 'removed');
    entry.holder = undefined;
    this.stats.messagesAcknowledged++;
    this.hooks.drained();
    this.#unitDone(entry);
  }

  /**
   * Holds an undeliverable entry where no consumer can take it (DLV-3): its error destination is
   * full. It stays pending, counted under its own cause, until the owner moves it (or a restart
   * brings it back as it was stored).
   */
  park(entry: Entry): void {
    if (entry.state === 'removed' || entry.state === 'parked') return;
    if (this.#closed) {
      this.#discard(entry);
      return;
    }
    this.#waiting.get(entry)?.cancel();
    this.#waiting.delete(entry);
    entry.holder = undefined;
    this.#setState(entry, 'parked');
    this.#parked.add(entry);
  }

  /** Removes an entry in any live state (expiry, admin delete, moves to an error destination). */
  remove(entry: Entry, reason: 'expired' | 'deleted'): void {
    if (entry.state === 'removed') return;
    if (entry.state === 'parked') this.#parked.delete(entry);
    this.#waiting.get(entry)?.cancel();
    this.#waiting.delete(entry);
    if (reason === 'expired') this.stats.messagesExpired++;
    this.#setState(entry, 'removed');
    entry.holder = undefined;
    this.hooks.removed(this, entry);
    this.hooks.drained();
    this.#unitDone(entry);
  }

  // --- consumers ---

  /** Attaches a consumer; a selector consumer is tested against the messages already here (SEL-7). */
  addConsumer(consumer: BacklogConsumer): void {
    let candidates: OrderedEntries | undefined;
    if (consumer.selector) {
      candidates = createOrderedEntries(this.#keys);
      for (const entry of this.#available.values()) {
        if (this.#selects(consumer.selector, entry)) candidates.insert(entry);
      }
    }
    this.#slots.push({ consumer, candidates });
    this.dispatch();
  }

  /** Detaches a consumer; the caller returns the entries it held. */
  removeConsumer(consumer: BacklogConsumer): void {
    const index = this.#slots.findIndex((slot) => slot.consumer === consumer);
    if (index >= 0) this.#slots.splice(index, 1);
  }

  /** Hands available entries to consumers with capacity, round-robin, until none can take more. */
  dispatch(): void {
    if (this.#dispatching) {
      this.#dispatchAgain = true;
      return;
    }
    this.#dispatching = true;
    try {
      do {
        this.#dispatchAgain = false;
        this.#dispatchRounds();
      } while (this.#dispatchAgain);
    } finally {
      this.#dispatching = false;
    }
  }

  #dispatchRounds(): void {
    let progressed = true;
    while (progressed && this.stats.byState.available.messages > 0) {
      progressed = false;
      const count = this.#slots.length;
      for (let i = 0; i < count && i < this.#slots.length; i++) {
        const slot = this.#slots[(this.#nextConsumer + i) % this.#slots.length]!;
        if (!slot.consumer.hasCapacity()) continue;
        const entry = this.#take(slot);
        if (!entry) continue;
        this.#nextConsumer = (this.#nextConsumer + i + 1) % this.#slots.length;
        // The holder first: whether it is transacted decides if throttling still counts the entry.
        entry.holder = slot.consumer;
        this.#setState(entry, 'delivered');
        slot.consumer.accept(entry);
        progressed = true;
        break;
      }
    }
  }

  #take(slot: ConsumerSlot): Entry | undefined {
    const set = slot.candidates ?? this.#available;
    for (;;) {
      const entry = set.first();
      if (!entry) return undefined;
      if (this.expireIfDue(entry)) continue;
      this.#compactIfSparse(set);
      return entry;
    }
  }

  /**
   * Expires an entry whose time to live ran out, applying the expiration policy: expired messages
   * are never delivered (DLV-4). Checked as dispatch takes an available entry, and again as a
   * delivered one reaches its application after waiting in a listener's pipeline (SES-6). The
   * policy may move or park it; left where it was, it is removed. True when it was expired.
   */
  expireIfDue(entry: Entry): boolean {
    if (!this.#isExpired(entry)) return false;
    const state = entry.state;
    this.hooks.expired(this, entry);
    if (entry.state === state) this.remove(entry, 'expired');
    return true;
  }

  // --- reading ---

  /** Available entries in delivery order, optionally through a selector (DST-7: pending ones are not shown). */
  *browse(selector: MessageSelector | null = null): IterableIterator<Entry> {
    const now = this.hooks.now();
    let entries: Iterable<Entry> = this.#available.values();
    if (this.#units.size > 0) {
      // Units hold back all but their head: merge them in to show everything in order.
      const all = createOrderedEntries(this.#keys);
      for (const entry of [...this.#available.values(), ...this.#queuedInUnits()]) all.insert(entry);
      entries = all.values();
    }
    for (const entry of entries) {
      const expiration = entry.stored.expiration;
      if (expiration !== 0 && expiration <= now) continue;
      if (selector === null || this.#selects(selector, entry)) yield entry;
    }
  }

  /** Entries whose expiration has passed, available or waiting on a timer (for the active scan, DLV-4). */
  expiredEntries(now: number): Entry[] {
    const expired: Entry[] = [];
    const check = (entry: Entry) => {
      const expiration = entry.stored.expiration;
      if (expiration !== 0 && expiration <= now) expired.push(entry);
    };
    for (const entry of this.#available.values()) check(entry);
    for (const entry of this.#queuedInUnits()) check(entry);
    for (const entry of this.#waiting.keys()) check(entry);
    return expired;
  }

  /** Entries waiting on a timer (scheduled or delayed). */
  waitingEntries(): IterableIterator<Entry> {
    return this.#waiting.keys();
  }

  /** Closes the backlog: every live entry it can reach is removed (destination deleted). */
  close(): void {
    const live = [
      ...this.#available.values(),
      ...this.#queuedInUnits(),
      ...this.#waiting.keys(),
      ...this.#parked,
    ];
    for (const entry of live) this.remove(entry, 'deleted');
    this.#closed = true;
    const consumers = this.#slots.map((slot) => slot.consumer);
    this.#slots.length = 0;
    for (const consumer of consumers) consumer.backlogClosed();
  }

  // --- internals ---

  /**
   * An entry that comes in or back after the backlog closed (a commit, rollback or release after
   * its destination was deleted, DST-6): gone, so it leaves the gateway-wide counts and the store
   * rather than being held for good by a backlog nobody reads.
   */
  #discard(entry: Entry): void {
    this.remove(entry, 'deleted');
  }

  #isExpired(entry: Entry): boolean {
    const expiration = entry.stored.expiration;
    return expiration !== 0 && expiration <= this.hooks.now();
  }

  #selects(selector: MessageSelector, entry: Entry): boolean {
    // A selector may test JMSRedelivered or JMSXDeliveryCount: show it this backlog's values.
    const message = entry.stored.load();
    message.deliveryCount = entry.deliveryCount + 1;
    message.setJMSRedelivered(entry.deliveryCount > 0);
    return selector.matches(message);
  }

  #wait(entry: Entry, state: 'scheduled' | 'delayed', until: number): void {
    // Its unit of order is read now, while the message is surely in memory: once paged out, reading
    // it when the timer fires would read the whole message back from the store (PER-4).
    this.#unitOf(entry);
    this.#setState(entry, state);
    this.#waiting.set(
      entry,
      this.hooks.timers.at(until, () => {
        this.#waiting.delete(entry);
        if (entry.state === state) this.#makeAvailable(entry);
      }),
    );
  }

  #makeAvailable(entry: Entry): void {
    this.#setState(entry, 'available');
    entry.generation++;
    const unit = this.#unitOf(entry);
    if (unit === null) {
      this.#publish(entry);
    } else {
      this.#unit(unit).queue.insert(entry);
      this.#promote(unit);
    }
    this.dispatch();
  }

  /** Makes an available entry visible to consumers: the shared order and each matching selector consumer's. */
  #publish(entry: Entry): void {
    this.#available.insert(entry);
    for (const slot of this.#slots) {
      if (slot.candidates && this.#selects(slot.consumer.selector!, entry)) slot.candidates.insert(entry);
    }
  }

  /** An entry left for good: its unit, if any, may publish its next message. */
  #unitDone(entry: Entry): void {
    const unit = this.#unitOf(entry);
    if (unit === null) return;
    this.#promote(unit);
    this.dispatch();
  }

  #setState(entry: Entry, state: EntryState): void {
    const from = entry.state;
    this.stats.move(entry, from, state);
    entry.state = state;
    if (this.#unitOfOrderProperty !== null) this.#trackUnit(entry, from, state);
  }

  /**
   * Stale slots pile up when consumers take from the middle; compact once they outnumber live
   * ones. Checked every 1024 takes: counting slots is not free.
   */
  #compactIfSparse(set: OrderedEntries): void {
    if ((++this.#takes & 1023) !== 0) return;
    if (set.slots > 2 * this.stats.byState.available.messages + 1024) set.compact();
  }
}

/** One unit of order in a backlog (ORD-4). */
class UnitOfOrder {
  /** Its available entries in send order; only the head is published to consumers. */
  readonly queue = new SortedEntries(bySeq);
  /** The entry published to consumers, and its generation when published (stale once it moved on). */
  head: Entry | undefined = undefined;
  headGeneration = 0;
  /** Messages of the unit out (delivered, waiting out a redelivery delay, or parked): busy while > 0. */
  out = 0;
}

/**
 * A unit of order is busy while one of its messages is in one of these states (ORD-4): a parked
 * message has not finally moved to the error destination yet, so the next one still waits.
 */
function isOut(state: EntryState): boolean {
  return state === 'delivered' || state === 'delayed' || state === 'parked';
}
