/**
 * The store port: what the engine asks of persistence. The engine calls it; `src/store` implements
 * it (memory, embedded file store). Every change the engine makes to durable state goes through
 * {@link MessageStore.commit} as one atomic batch, so a transaction's sends and acknowledgements
 * land together or not at all, and a store can group the batches of many producers into one
 * durable write (group commit).
 */
import type { Message } from './message/message.js';

/** Identifies a backlog: a queue (`queue://orders`) or a durable subscription (`sub://client/name`). */
export type BacklogKey = string;

/** A definition the engine needs again after a restart (PER-2). */
export interface DestinationRecord {
  kind: 'queue' | 'topic';
  name: string;
  /** Options as given at creation, as plain JSON. */
  options: Record<string, unknown>;
}

/** A durable subscription's definition (DST-3). */
export interface SubscriptionRecord {
  key: BacklogKey;
  topic: string;
  clientId: string | null;
  name: string;
  selector: string | null;
  noLocal: boolean;
  shared: boolean;
}

/**
 * What the engine knows of a message's sender beyond the message itself, kept with it so that a
 * restart changes nothing: the producer's redelivery limit (DLV-2) and the sending client id.
 */
export interface SenderRecord {
  /** The producer's redelivery limit; -1 when it set none. */
  redeliveryLimit: number;
  clientId: string | null;
}

/** One change to durable state. */
export type StoreOperation =
  | { op: 'addMessage'; id: string; seq: number; message: Message; sender?: SenderRecord }
  | { op: 'addRef'; backlog: BacklogKey; id: string; seq: number; deliveryCount: number; notBefore: number }
  | { op: 'updateRef'; backlog: BacklogKey; id: string; deliveryCount: number; notBefore: number }
  | { op: 'removeRef'; backlog: BacklogKey; id: string }
  | { op: 'putDestination'; destination: DestinationRecord }
  | { op: 'removeDestination'; kind: 'queue' | 'topic'; name: string }
  | { op: 'putSubscription'; subscription: SubscriptionRecord }
  | { op: 'removeSubscription'; key: BacklogKey }
  | RecordForwardedOperation;

/**
 * Records ids in a bridge's duplicate window (BRG-2) as part of a commit, so they land in the same
 * atomic write as the rest of the batch: a bridge whose target is an engine destination commits
 * the forwarded message and its id together, and after a crash either both are stored or neither.
 * Only a store that is a {@link ForwardedIdStore} is given it (the engine passes it through from
 * the bridge, which checks); any other store rejects the commit that holds it. Applied like
 * {@link ForwardedIdStore.recordForwardedIds}: the ids are recorded (an id recorded again takes its
 * new `seq` and `at`) and the window's ids with `seq` up to `forgetThroughSeq` are forgotten.
 */
export interface RecordForwardedOperation {
  op: 'recordForwarded';
  /** The window's name: the bridge's. */
  window: string;
  ids: readonly ForwardedId[];
  forgetThroughSeq?: number;
}

/** A message reference found at recovery, with what it needs to resume (PER-1, PER-2). */
export interface RecoveredRef {
  backlog: BacklogKey;
  id: string;
  seq: number;
  deliveryCount: number;
  /** Earliest time it may be delivered again: a delivery time or a redelivery delay still to run. */
  notBefore: number;
  message: Message;
  /** Absent when the sender left nothing to remember (no limit, no client id). */
  sender?: SenderRecord;
  /**
   * Set when the store left a large body where it keeps it rather than read it at recovery:
   * `message` then has its headers and properties and an empty body, and this is the body's
   * size in bytes as the message would measure it (MSG-4). The engine keeps such a message paged
   * out (PER-4) and reads it whole with {@link MessageStore.readMessage} when it needs it, so a
   * restart does not read every large body only to drop it again. Only a store with
   * `readMessage` sets it.
   */
  unreadBodyBytes?: number;
}

/** Everything a store hands back at start. */
export interface RecoveredState {
  destinations: DestinationRecord[];
  subscriptions: SubscriptionRecord[];
  /**
   * The stored references in ascending `seq` order, so the references to one message come
   * together. A store may read them lazily: the engine takes them one at a time and pages bodies
   * out as it goes (PER-4), so a restart does not hold the whole backlog's bodies at once. Iterate
   * once, while the store is open and before any commit.
   */
  refs: Iterable<RecoveredRef>;
  /** The highest message sequence used, so new sends sort after recovered ones. */
  maxSeq: number;
}

/** The persistence port. Implementations must make `commit` atomic and durable before resolving. */
export interface MessageStore {
  /** Loads what a previous run left. Called once, before any commit. */
  recover(): Promise<RecoveredState>;
  /** Applies the operations atomically; resolves once they are durable. */
  commit(operations: readonly StoreOperation[]): Promise<void>;
  /** Flushes and releases the store. */
  close(): Promise<void>;
  /**
   * Reads a stored message back, synchronously: lets the engine page bodies out of memory
   * (PER-4). A store that keeps everything in memory leaves it out, and nothing is paged.
   */
  readMessage?(id: string): Message | undefined;
}

/** One id in a bridge's duplicate window (BRG-2), as a {@link ForwardedIdStore} keeps it. */
export interface ForwardedId {
  /** The JMSMessageID forwarded. */
  id: string;
  /** Its place in the window: ascending in the order the ids were recorded. */
  seq: number;
  /** When it was recorded, ms since the epoch. */
  at: number;
}

/**
 * A store that can also keep the duplicate windows of exactly-once bridges (BRG-2): a few recent
 * message ids per window name. Optional: a store without it leaves bridges to an in-memory window.
 */
export interface ForwardedIdStore {
  /** The ids recorded in `window`, in `seq` order, as durably stored (not what is still queued). */
  readForwardedIds(window: string): ForwardedId[];
  /**
   * Records `ids` in `window` (an id recorded again takes its new `seq` and `at`) and forgets the
   * window's ids with `seq` up to `forgetThroughSeq`, in one atomic write that shares the store's
   * group commit; resolves once durable. The same as committing one {@link RecordForwardedOperation}.
   */
  recordForwardedIds(window: string, ids: readonly ForwardedId[], forgetThroughSeq?: number): Promise<void>;
}

/** Whether a store also keeps duplicate windows (the file store does; the memory store does not). */
export function keepsForwardedIds(store: MessageStore): store is MessageStore & ForwardedIdStore {
  const candidate = store as Partial<ForwardedIdStore>;
  return (
    typeof candidate.readForwardedIds === 'function' && typeof candidate.recordForwardedIds === 'function'
  );
}
