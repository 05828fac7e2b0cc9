/**
 * Ordered sets of available entries. Entries are never searched for and deleted: a slot records
 * the entry's generation when it was inserted and is skipped once the entry has moved on, so
 * taking a message from the middle (a selector consumer) costs nothing here.
 */
import type { DestinationKey } from './destination-key.js';
import type { Entry } from './entry.js';

/** Compares entries for delivery order: negative when `a` goes first. */
export type EntryOrder = (a: Entry, b: Entry) => number;

/** An ordered collection of available entries with lazy deletion. */
export interface OrderedEntries {
  insert(entry: Entry): void;
  /** The first live entry that `accept` takes, or undefined. */
  first(accept?: (entry: Entry) => boolean): Entry | undefined;
  /** Live entries in order. */
  values(): IterableIterator<Entry>;
  /** Slots held, live or stale: used to decide when to compact. */
  readonly slots: number;
  /** Drops stale slots. */
  compact(): void;
}

const isLive = (entry: Entry, generation: number): boolean =>
  entry.state === 'available' && entry.generation === generation;

/** A sorted deque: appends in order are O(1), out-of-order inserts binary-search. */
export class SortedEntries implements OrderedEntries {
  #entries: Entry[] = [];
  #generations: number[] = [];
  #head = 0;

  constructor(private readonly order: EntryOrder) {}

  get slots(): number {
    return this.#entries.length - this.#head;
  }

  insert(entry: Entry): void {
    const entries = this.#entries;
    // Empty first: reading entries[-1] would be a named-property lookup, which turns this hot
    // site megamorphic for good.
    if (entries.length === this.#head || this.order(entries[entries.length - 1]!, entry) <= 0) {
      entries.push(entry);
      this.#generations.push(entry.generation);
      return;
    }
    // A redelivered entry usually goes back first: reuse the slot before the head instead of
    // shifting everything (stale slots at the head are dropped first so that slot exists).
    while (this.#head < entries.length - 1 && !isLive(entries[this.#head]!, this.#generations[this.#head]!))
      this.#head++;
    if (this.#head > 0 && this.order(entry, entries[this.#head]!) < 0) {
      this.#head--;
      entries[this.#head] = entry;
      this.#generations[this.#head] = entry.generation;
      return;
    }
    let low = this.#head;
    let high = entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.order(entries[mid]!, entry) <= 0) low = mid + 1;
      else high = mid;
    }
    entries.splice(low, 0, entry);
    this.#generations.splice(low, 0, entry.generation);
  }

  first(accept?: (entry: Entry) => boolean): Entry | undefined {
    const entries = this.#entries;
    const generations = this.#generations;
    // Stale slots at the head are dropped for good; live ones an `accept` refuses are kept.
    while (this.#head < entries.length && !isLive(entries[this.#head]!, generations[this.#head]!))
      this.#head++;
    this.#trimHead();
    for (let i = this.#head; i < entries.length; i++) {
      const entry = entries[i]!;
      if (isLive(entry, generations[i]!) && (accept === undefined || accept(entry))) return entry;
    }
    return undefined;
  }

  *values(): IterableIterator<Entry> {
    const entries = this.#entries;
    const generations = this.#generations;
    for (let i = this.#head; i < entries.length; i++) {
      if (isLive(entries[i]!, generations[i]!)) yield entries[i]!;
    }
  }

  compact(): void {
    const entries: Entry[] = [];
    const generations: number[] = [];
    for (let i = this.#head; i < this.#entries.length; i++) {
      if (isLive(this.#entries[i]!, this.#generations[i]!)) {
        entries.push(this.#entries[i]!);
        generations.push(this.#generations[i]!);
      }
    }
    this.#entries = entries;
    this.#generations = generations;
    this.#head = 0;
  }

  #trimHead(): void {
    if (this.#head === this.#entries.length) {
      this.#entries.length = 0;
      this.#generations.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#generations = this.#generations.slice(this.#head);
      this.#head = 0;
    }
  }
}

/** Send order. */
export const bySeq: EntryOrder = (a, b) => a.seq - b.seq;

/**
 * The default order (DST-1): priority 9 first, then send order. Ten send-ordered deques, so a
 * redelivered message goes back to where its sequence puts it without shifting other priorities.
 */
export class PriorityEntries implements OrderedEntries {
  readonly #levels = Array.from({ length: 10 }, () => new SortedEntries(bySeq));

  get slots(): number {
    return this.#levels.reduce((sum, level) => sum + level.slots, 0);
  }

  insert(entry: Entry): void {
    this.#levels[entry.priority]!.insert(entry);
  }

  first(accept?: (entry: Entry) => boolean): Entry | undefined {
    for (let priority = 9; priority >= 0; priority--) {
      const level = this.#levels[priority]!;
      if (level.slots === 0) continue;
      const found = level.first(accept);
      if (found) return found;
    }
    return undefined;
  }

  *values(): IterableIterator<Entry> {
    for (let priority = 9; priority >= 0; priority--) yield* this.#levels[priority]!.values();
  }

  compact(): void {
    for (const level of this.#levels) level.compact();
  }
}

/** Builds the ordered structure for a destination: the default, or a comparator over its keys. */
export function createOrderedEntries(keys: readonly DestinationKey[] | undefined): OrderedEntries {
  if (!keys || keys.length === 0) return new PriorityEntries();
  const comparators = keys.map(keyComparator);
  return new SortedEntries((a, b) => {
    for (const compare of comparators) {
      const result = compare(a, b);
      if (result !== 0) return result;
    }
    return a.seq - b.seq;
  });
}

function keyComparator(key: DestinationKey): EntryOrder {
  const sign = key.direction === 'ascending' ? 1 : -1;
  return (a, b) => {
    const x = keyValue(a, key.property);
    const y = keyValue(b, key.property);
    // Missing values sort last whatever the direction, so keyed messages are never starved by them.
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sign * compareValues(x, y);
  };
}

type KeyValue = number | bigint | string | boolean | null;

function keyValue(entry: Entry, name: string): KeyValue {
  // What the entry's record keeps is read there; the rest from the message, which a paged-out
  // entry reads back from the store (PER-4).
  switch (name) {
    case 'JMSPriority':
      return entry.priority;
    case 'JMSExpiration':
      return entry.stored.expiration;
    case 'JMSMessageID':
      return entry.id;
  }
  const message = entry.message;
  switch (name) {
    case 'JMSTimestamp':
      return message.getJMSTimestamp();
    case 'JMSDeliveryTime':
      return message.getJMSDeliveryTime();
    case 'JMSCorrelationID':
      return message.getJMSCorrelationID();
    case 'JMSType':
      return message.getJMSType();
    default: {
      const value = message.getTypedProperty(name)?.value;
      return value === undefined || value instanceof Uint8Array ? null : value;
    }
  }
}

function compareValues(a: Exclude<KeyValue, null>, b: Exclude<KeyValue, null>): number {
  if (typeof a === 'string' || typeof b === 'string')
    return String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  return a < b ? -1 : a > b ? 1 : 0;
}
