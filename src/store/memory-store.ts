/**
 * The memory store: keeps durable state in the process. Nothing survives the process, but an
 * engine opened again on the same instance recovers as it would from disk, which is how the
 * engine's recovery is tested without files. Copies are kept so later changes to live messages
 * cannot leak into "stored" state.
 */
import type {
  DestinationRecord,
  MessageStore,
  RecoveredRef,
  RecoveredState,
  SenderRecord,
  StoreOperation,
  SubscriptionRecord,
} from '../jms/store-port.js';
import type { Message } from '../jms/message/message.js';
import { IllegalStateError } from '../jms/errors.js';

interface RefRecord {
  seq: number;
  deliveryCount: number;
  notBefore: number;
}

/** Options of the memory store. */
export interface MemoryStoreOptions {
  /**
   * Lets the engine page bodies out and read them back (PER-4). A memory store saves no memory
   * by it; tests use it to exercise paging without files.
   */
  paging?: boolean;
}

export class MemoryStore implements MessageStore {
  readonly readMessage?: (id: string) => Message | undefined;

  constructor(options: MemoryStoreOptions = {}) {
    if (options.paging) this.readMessage = (id) => this.#messages.get(id)?.message.copy();
  }

  readonly #destinations = new Map<string, DestinationRecord>();
  readonly #subscriptions = new Map<string, SubscriptionRecord>();
  readonly #messages = new Map<
    string,
    { seq: number; message: Message; refs: number; sender: SenderRecord | undefined }
  >();
  readonly #refs = new Map<string, Map<string, RefRecord>>();
  #failure: Error | undefined;
  /** Number of commits made: tests use it to see group commit at work. */
  commits = 0;

  /** Makes the next commit fail with `error`, as a full disk would (tests of failure paths). */
  failNextCommit(error: Error): void {
    this.#failure = error;
  }

  recover(): Promise<RecoveredState> {
    const refs: RecoveredRef[] = [];
    let maxSeq = 0;
    for (const [backlog, byId] of this.#refs) {
      for (const [id, ref] of byId) {
        const stored = this.#messages.get(id);
        if (!stored) continue;
        const recovered: RecoveredRef = {
          backlog,
          id,
          seq: ref.seq,
          deliveryCount: ref.deliveryCount,
          notBefore: ref.notBefore,
          message: stored.message.copy(),
        };
        if (stored.sender) recovered.sender = { ...stored.sender };
        refs.push(recovered);
      }
    }
    for (const stored of this.#messages.values()) maxSeq = Math.max(maxSeq, stored.seq);
    refs.sort((a, b) => a.seq - b.seq);
    return Promise.resolve({
      destinations: [...this.#destinations.values()],
      subscriptions: [...this.#subscriptions.values()],
      refs,
      maxSeq,
    });
  }

  commit(operations: readonly StoreOperation[]): Promise<void> {
    if (this.#failure) {
      const failure = this.#failure;
      this.#failure = undefined;
      return Promise.reject(failure);
    }
    // Not a ForwardedIdStore: a window record here would be a promise the store cannot keep.
    const windowRecord = operations.find((operation) => operation.op === 'recordForwarded');
    if (windowRecord)
      return Promise.reject(
        new IllegalStateError(
          `the memory store keeps no duplicate windows (a commit recorded ids in window '${windowRecord.window}')`,
        ),
      );
    this.commits++;
    for (const operation of operations) this.#apply(operation);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Messages and references held now (for tests and statistics). */
  get size(): { messages: number; refs: number } {
    let refs = 0;
    for (const byId of this.#refs.values()) refs += byId.size;
    return { messages: this.#messages.size, refs };
  }

  #apply(operation: StoreOperation): void {
    switch (operation.op) {
      case 'addMessage':
        this.#messages.set(operation.id, {
          seq: operation.seq,
          message: operation.message.copy(),
          refs: 0,
          sender: operation.sender && { ...operation.sender },
        });
        return;
      case 'addRef': {
        this.#backlog(operation.backlog).set(operation.id, {
          seq: operation.seq,
          deliveryCount: operation.deliveryCount,
          notBefore: operation.notBefore,
        });
        const stored = this.#messages.get(operation.id);
        if (stored) stored.refs++;
        return;
      }
      case 'updateRef': {
        const ref = this.#refs.get(operation.backlog)?.get(operation.id);
        if (ref)
          Object.assign(ref, { deliveryCount: operation.deliveryCount, notBefore: operation.notBefore });
        return;
      }
      case 'removeRef':
        if (this.#refs.get(operation.backlog)?.delete(operation.id)) this.#release(operation.id);
        return;
      case 'putDestination':
        this.#destinations.set(
          `${operation.destination.kind}://${operation.destination.name}`,
          operation.destination,
        );
        return;
      case 'removeDestination':
        this.#destinations.delete(`${operation.kind}://${operation.name}`);
        this.#dropBacklog(`${operation.kind}://${operation.name}`);
        return;
      case 'putSubscription':
        this.#subscriptions.set(operation.subscription.key, operation.subscription);
        return;
      case 'removeSubscription':
        this.#subscriptions.delete(operation.key);
        this.#dropBacklog(operation.key);
        return;
      case 'recordForwarded':
        return; // refused in commit()
    }
  }

  #backlog(key: string): Map<string, RefRecord> {
    let byId = this.#refs.get(key);
    if (!byId) this.#refs.set(key, (byId = new Map<string, RefRecord>()));
    return byId;
  }

  #dropBacklog(key: string): void {
    const byId = this.#refs.get(key);
    if (!byId) return;
    this.#refs.delete(key);
    for (const id of byId.keys()) this.#release(id);
  }

  #release(id: string): void {
    const stored = this.#messages.get(id);
    if (stored && --stored.refs <= 0) this.#messages.delete(id);
  }
}
