/**
 * The engine's link to the store port (PER-1, PER-4): which backlogs are stored, the records a
 * send, an acknowledgement or a redelivery writes, and the group commit that writes everything
 * queued in one tick as one durable batch. (Not to be confused with a session's listener queue,
 * which holds messages: this one holds store writes.)
 */
import type { Backlog } from '../destination/backlog.js';
import type { Entry, StoredMessage } from '../destination/entry.js';
import type { EngineLogger } from '../logger.js';
import type { MessageStore, StoreOperation } from '../store-port.js';

/** One message on its way into one backlog. */
export interface Routed {
  backlog: Backlog;
  entry: Entry;
}

const NO_OPERATIONS: readonly StoreOperation[] = Object.freeze([]);

export class StoreLink {
  /** Backlogs whose persistent messages are stored: store-enabled queues and durable subscriptions. */
  readonly #durable = new WeakSet<Backlog>();
  #pending: StoreOperation[] = [];
  #flush: Promise<void> | undefined;

  constructor(
    readonly store: MessageStore,
    private readonly logger: EngineLogger,
  ) {}

  /** Marks a backlog as one whose persistent messages are stored. */
  storeBacklog(backlog: Backlog): void {
    this.#durable.add(backlog);
  }

  /** Whether a persistent entry of this backlog is in the store. */
  isStored(backlog: Backlog, entry: Entry): boolean {
    return entry.stored.persistent && this.#durable.has(backlog);
  }

  /** Store operations that record a sent message in the durable backlogs it went to. */
  sendRecords(stored: StoredMessage, routed: readonly Routed[]): StoreOperation[] {
    if (!stored.persistent) return [];
    const durable = routed.filter((r) => this.#durable.has(r.backlog));
    if (durable.length === 0) return [];
    const id = stored.id;
    stored.references += durable.length;
    const add: StoreOperation = { op: 'addMessage', id, seq: stored.seq, message: stored.message };
    if (stored.redeliveryLimit !== -1 || stored.clientId !== null)
      add.sender = { redeliveryLimit: stored.redeliveryLimit, clientId: stored.clientId };
    return [
      add,
      ...durable.map((r): StoreOperation => ({
        op: 'addRef',
        backlog: r.backlog.key,
        id,
        seq: stored.seq,
        deliveryCount: 0,
        notBefore: 0,
      })),
    ];
  }

  /** Store operations that forget acknowledged entries. */
  ackRecords(entries: Iterable<{ entry: Entry; backlog: Backlog }>): readonly StoreOperation[] {
    let operations: StoreOperation[] | undefined;
    for (const { entry, backlog } of entries) {
      if (this.isStored(backlog, entry)) {
        (operations ??= []).push({
          op: 'removeRef',
          backlog: backlog.key,
          id: entry.id,
        });
      }
    }
    return operations ?? NO_OPERATIONS;
  }

  /**
   * Records an entry's delivery count and the time before which it may not be delivered again,
   * so both survive a restart (PER-2). Written with the next group commit.
   */
  recordDeliveryState(backlog: Backlog, entry: Entry, notBefore: number): void {
    if (!this.isStored(backlog, entry)) return;
    this.writeLater([
      {
        op: 'updateRef',
        backlog: backlog.key,
        id: entry.id,
        deliveryCount: entry.deliveryCount,
        notBefore,
      },
    ]);
  }

  /** Records that an entry left its backlog (acknowledged elsewhere, expired, moved, deleted). */
  recordRemoval(backlog: Backlog, entry: Entry): void {
    if (this.isStored(backlog, entry))
      this.writeLater([{ op: 'removeRef', backlog: backlog.key, id: entry.id }]);
  }

  /** Queues store operations for the next group commit without waiting; a failure is logged. */
  writeLater(operations: readonly StoreOperation[]): void {
    if (operations.length === 0) return;
    for (const operation of operations) this.#pending.push(operation);
    this.#scheduleFlush().catch((error: unknown) => this.logger.error({ err: error }, 'store write failed'));
  }

  /**
   * Writes operations durably, together with everything else queued in this tick (group
   * commit). Resolves once they are stored; rejects if the store failed.
   */
  write(operations: readonly StoreOperation[]): Promise<void> {
    for (const operation of operations) this.#pending.push(operation);
    return this.#scheduleFlush();
  }

  /** Waits until everything queued so far is stored. */
  async flush(): Promise<void> {
    await this.write([]);
  }

  /** Drops what is queued: recovery rebuilds state from the store and rewrites nothing. */
  discardPending(): void {
    this.#pending = [];
  }

  #scheduleFlush(): Promise<void> {
    this.#flush ??= Promise.resolve().then(() => {
      const batch = this.#pending;
      this.#pending = [];
      this.#flush = undefined;
      return batch.length === 0 ? undefined : this.store.commit(batch);
    });
    return this.#flush;
  }
}
