/**
 * What the engine keeps per message. A message is stored once ({@link StoredMessage}); every
 * queue or topic subscription that holds it has its own {@link Entry} referring to it, with its
 * own delivery state and count.
 */
import type { Message } from '../message/message.js';
import { sharedIdPrefix } from './id-prefixes.js';

/** Reads a stored message back by its JMSMessageID (PER-4). */
export type MessageReader = (id: string) => Message;

// Bits of StoredMessage's flags: the priority (0-9) in the low four, then what is true of it.
const PRIORITY_MASK = 0xf;
const PERSISTENT = 1 << 4;
const SCHEDULED = 1 << 5;
/** The id field holds only a prefix shared by many messages; the rest is the sequence in base 36. */
const ID_BY_SEQ = 1 << 6;

/**
 * One sent message, shared by every backlog that holds it.
 *
 * Once paged out (PER-4) it holds no part of the message: only what ordering, routing, expiry
 * and the store need (id, sequence, priority, expiration, delivery time, size, unit of order),
 * a few words each, so a million paged messages cost tens of megabytes rather than half a
 * gigabyte. Anything else (the body, properties for a selector or a destination key) is read
 * back from the store.
 */
export class StoredMessage {
  /** The message itself while in memory; once paged out, the reader that brings it back. */
  #held: Message | MessageReader;
  /** The JMSMessageID; once paged out, possibly only its prefix (see {@link ID_BY_SEQ}). */
  #id: string;
  /** Priority and booleans packed in one small integer: one word instead of three. */
  #flags: number;
  /** The delivery time a scheduled message waits for, kept once paged out (DLV-5). */
  #deliveryTime = 0;
  /** JMSExpiration: 0 when it never expires (DLV-4). */
  readonly expiration: number;

  constructor(
    /**
     * The message as sent, with provider headers set; never handed out itself, only copies.
     * Its headers must be final: priority, expiration and id are read once, here.
     */
    message: Message,
    /** Gateway-wide send order; ties in priority are broken by it (DST-1, ORD-1). */
    readonly seq: number,
    /** Properties plus body in bytes (MSG-4). */
    readonly size: number,
    /** Whether the store keeps it (PERSISTENT to a store-enabled destination). */
    persistent: boolean,
    /** The sending connection, for noLocal (DST-4). */
    readonly connectionId: string,
    /** The sending connection's client id, for noLocal on durable subscriptions. */
    readonly clientId: string | null,
  ) {
    this.#held = message;
    this.#flags = (message.getJMSPriority() & PRIORITY_MASK) | (persistent ? PERSISTENT : 0);
    // An id the send has not built yet is kept as its prefix: built only if someone asks.
    const prefix = message.generatedIdPrefixFor(seq);
    if (prefix !== null) {
      this.#id = prefix;
      this.#flags |= ID_BY_SEQ;
    } else {
      this.#id = message.getJMSMessageID() ?? '';
    }
    this.expiration = message.getJMSExpiration();
  }

  /** The JMSMessageID: the store's key for it. */
  get id(): string {
    return (this.#flags & ID_BY_SEQ) !== 0 ? this.#id + this.seq.toString(36) : this.#id;
  }

  /** JMSPriority, 0-9 (DST-1). */
  get priority(): number {
    return this.#flags & PRIORITY_MASK;
  }

  /** Whether the store keeps it (PERSISTENT to a store-enabled destination). */
  get persistent(): boolean {
    return (this.#flags & PERSISTENT) !== 0;
  }

  /** Whether its delivery time was in the future when sent (DLV-5); saves a clock read per send otherwise. */
  get scheduled(): boolean {
    return (this.#flags & SCHEDULED) !== 0;
  }
  set scheduled(scheduled: boolean) {
    this.#flags = scheduled ? this.#flags | SCHEDULED : this.#flags & ~SCHEDULED;
  }

  /** JMSDeliveryTime; only kept once paged out while {@link scheduled} (0 otherwise). */
  get deliveryTime(): number {
    const held = this.#held;
    return typeof held === 'function' ? this.#deliveryTime : held.getJMSDeliveryTime();
  }

  /** Whether the message was paged out to the store (PER-4). */
  get paged(): boolean {
    return typeof this.#held === 'function';
  }

  /**
   * The message as sent, never handed out itself; read back from the store when paged out,
   * so a caller that only needs what this record keeps should read that instead.
   */
  get message(): Message {
    const held = this.#held;
    return typeof held === 'function' ? held(this.id) : held;
  }

  /** The whole message, body included: read back from the store when paged out. */
  load(): Message {
    return this.message;
  }

  /**
   * Drops the message from memory, keeping only this record; the store must hold the message,
   * `read` brings it back.
   */
  pageOut(read: MessageReader): void {
    const held = this.#held;
    if (typeof held === 'function') return;
    if (this.scheduled) this.#deliveryTime = held.getJMSDeliveryTime();
    this.#held = read;
    if ((this.#flags & ID_BY_SEQ) !== 0) return;
    const suffix = this.seq.toString(36);
    const id = this.#id;
    // Only an id of the engine's form (`ID:<run>-<seq in base 36>`) is rebuilt from its parts.
    if (id.length > suffix.length && id.endsWith(suffix) && id[id.length - suffix.length - 1] === '-') {
      const prefix = sharedIdPrefix(id.slice(0, id.length - suffix.length));
      if (prefix !== undefined) {
        this.#id = prefix;
        this.#flags |= ID_BY_SEQ;
      }
    }
  }

  /** Number of durable backlogs still holding the message; the store drops it at zero. */
  references = 0;
  /** The producer's redelivery limit (DLV-2); -1 = no limit. A destination's limit wins. */
  redeliveryLimit = -1;
  /** Backlogs it was routed to (one for a queue, one per subscription of a topic). */
  holders = 0;
  /** Its unit of order (ORD-4), read once: undefined until read, null when it has none. */
  unitOfOrder: string | null | undefined = undefined;
}

/**
 * Where an entry is in its lifecycle. `available` is "current" in the references' words; every
 * other live state is a cause of "pending" (`003`).
 */
export type EntryState =
  /** Sent in a transaction not yet committed. */
  | 'uncommitted'
  /** Waiting for its delivery time (DLV-5). */
  | 'scheduled'
  /** Waiting out a redelivery delay (DLV-1). */
  | 'delayed'
  /** May be received now. */
  | 'available'
  /** Handed to a consumer (prefetched or received) and not yet acknowledged. */
  | 'delivered'
  /**
   * Undeliverable (or expired under the Redirect policy) and waiting for room in its full error
   * destination (DLV-3): no consumer may take it; only a move to the error destination ends it.
   */
  | 'parked'
  /** Gone: acknowledged, expired, moved or deleted. */
  | 'removed';

/** One message held by one backlog (a queue, or one subscription of a topic). */
export class Entry {
  /** Starts as `removed`: not held by its backlog until added or held as uncommitted. */
  state: EntryState = 'removed';
  /** Deliveries to an application so far: JMSXDeliveryCount of the next delivery is this + 1. */
  deliveryCount = 0;
  /**
   * Bumped every time the entry becomes available. Ordered structures keep stale slots rather
   * than searching to delete them; a slot is live only while its generation matches.
   */
  generation = 0;
  /** Whoever holds it while `delivered` (a consumer), to return it on close. */
  holder: unknown = undefined;
  /** Whether producer throttling counts it as undelivered now (DLV-8); kept only while throttling is on. */
  undelivered = false;

  constructor(readonly stored: StoredMessage) {}

  get seq(): number {
    return this.stored.seq;
  }
  get id(): string {
    return this.stored.id;
  }
  /** The message: read back from the store when paged out (PER-4), so prefer the record's fields. */
  get message(): Message {
    return this.stored.message;
  }
  get priority(): number {
    return this.stored.priority;
  }
  get size(): number {
    return this.stored.size;
  }
}
