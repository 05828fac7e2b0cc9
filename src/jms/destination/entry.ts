/**
 * What the engine keeps per message. A message is stored once ({@link StoredMessage}); every
 * queue or topic subscription that holds it has its own {@link Entry} referring to it, with its
 * own delivery state and count.
 */
import type { Message } from '../message/message.js';

/** One sent message, shared by every backlog that holds it. */
export class StoredMessage {
  /** Reads a paged-out message back from the store; set when the body is paged out (PER-4). */
  #pager: ((id: string) => Message) | undefined;

  constructor(
    /**
     * The message as sent, with provider headers set; never handed out itself, only copies.
     * Once paged out (PER-4) it keeps headers and properties only: use {@link load} for the body.
     */
    public message: Message,
    /** Gateway-wide send order; ties in priority are broken by it (DST-1, ORD-1). */
    readonly seq: number,
    /** Properties plus body in bytes (MSG-4). */
    readonly size: number,
    /** Whether the store keeps it (PERSISTENT to a store-enabled destination). */
    readonly persistent: boolean,
    /** The sending connection, for noLocal (DST-4). */
    readonly connectionId: string,
    /** The sending connection's client id, for noLocal on durable subscriptions. */
    readonly clientId: string | null,
  ) {}

  /** Whether the body was paged out to the store (PER-4). */
  get paged(): boolean {
    return this.#pager !== undefined;
  }

  /** The whole message, body included: read back from the store when paged out. */
  load(): Message {
    return this.#pager ? this.#pager(this.message.getJMSMessageID()!) : this.message;
  }

  /**
   * Drops the body from memory, keeping headers and properties for ordering and routing; the
   * store must hold the message, `read` brings it back.
   */
  pageOut(read: (id: string) => Message): void {
    if (this.#pager) return;
    const headers = this.message.copy();
    headers.clearBody();
    this.message = headers;
    this.#pager = read;
  }

  /** Number of durable backlogs still holding the message; the store drops it at zero. */
  references = 0;
  /** The producer's redelivery limit (DLV-2); -1 = no limit. A destination's limit wins. */
  redeliveryLimit = -1;
  /** Backlogs it was routed to (one for a queue, one per subscription of a topic). */
  holders = 0;
  /** Whether its delivery time was in the future when sent (DLV-5); saves a clock read per send otherwise. */
  scheduled = false;
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
  get message(): Message {
    return this.stored.message;
  }
  get priority(): number {
    return this.stored.message.getJMSPriority();
  }
  get size(): number {
    return this.stored.size;
  }
}
