/**
 * The duplicate window of an exactly-once bridge (BRG-2): the JMSMessageIDs the bridge has
 * forwarded recently. The runtime records an id after the target confirmed the message and
 * before it acknowledges the source, and drops a message whose id is already in the window.
 *
 * Two windows: {@link MemoryDuplicateWindow} forgets everything on restart, so exactly-once with
 * it only holds within one process run; {@link StoreDuplicateWindow} keeps the ids in the store
 * (the embedded file store), durable before `add` resolves, so it survives a restart. A store
 * window can also hand its record to a target that writes to the same store
 * ({@link StoreDuplicateWindow.stage}), so the message and its id are one commit.
 *
 * Either window can be told what a target already holds ({@link DuplicateWindow.seed}): a target
 * that can list what it committed (a transactional Kafka topic) rebuilds the window at connect.
 */
import type { Clock } from '../jms/clock.js';
import { InvalidArgumentError } from '../jms/errors.js';
import type { ForwardedIdStore, MessageStore, RecordForwardedOperation } from '../jms/store-port.js';
import type { ForwardedIdSeen } from '../spi/connector.js';

/** The ids a bridge forwarded, bounded by count and optionally by age. */
export interface DuplicateWindow {
  /** True when `id` was forwarded and is still inside the window. */
  has(id: string): Promise<boolean>;
  /**
   * Records that `id` reached the target at time `at` (ms since the epoch). A persisted window
   * resolves only once the record is durable: the source is acknowledged after this resolves.
   */
  add(id: string, at: number): Promise<void>;
  /**
   * Remembers ids the target reports it holds (sent at `at`), in memory only: the target keeps
   * them, and is asked again at the next connect. Within the window's bounds like any other id.
   */
  seed?(entries: readonly ForwardedIdSeen[]): void;
  /** How much the window keeps: how far back a target is read to rebuild it. */
  readonly bounds?: WindowBounds;
}

/** A window's bounds: most ids kept, and (optionally) the oldest age kept, ms. */
export interface WindowBounds {
  readonly maxEntries: number;
  readonly maxAgeMs?: number;
}

/**
 * An id on its way into a {@link StoreDuplicateWindow} inside the target's own store commit:
 * commit `operation` with the message, then call `committed()` once that is durable or `failed()`
 * if it was not. Until `committed()`, the window does not claim the id: a send that fails must
 * not make a redelivered copy look like a duplicate.
 */
export interface StagedId {
  readonly operation: RecordForwardedOperation;
  committed(): void;
  failed(): void;
}

/** Bounds of a {@link MemoryDuplicateWindow}. */
export interface MemoryDuplicateWindowOptions {
  /** Most ids kept; the oldest is forgotten first. Default 100,000. */
  maxEntries?: number;
  /** Ids older than this (ms) are forgotten; needs `clock`. Default: no age limit. */
  maxAgeMs?: number;
  /** Time for `maxAgeMs`. */
  clock?: Clock;
}

/** A duplicate window in memory: lost on restart (see the module comment). */
export class MemoryDuplicateWindow implements DuplicateWindow {
  /** Insertion order is age order: a Map iterates oldest first. */
  readonly #ids = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #maxAgeMs: number | undefined;
  readonly #clock: Clock | undefined;

  constructor(options: MemoryDuplicateWindowOptions = {}) {
    this.#maxEntries = checkBounds(options);
    this.#maxAgeMs = options.maxAgeMs;
    this.#clock = options.clock;
  }

  get bounds(): WindowBounds {
    return boundsOf(this.#maxEntries, this.#maxAgeMs);
  }

  /** Ids currently remembered. */
  get size(): number {
    this.#expire();
    return this.#ids.size;
  }

  has(id: string): Promise<boolean> {
    this.#expire();
    return Promise.resolve(this.#ids.has(id));
  }

  add(id: string, at: number): Promise<void> {
    this.#remember(id, at);
    return Promise.resolve();
  }

  seed(entries: readonly ForwardedIdSeen[]): void {
    for (const { id, at } of entries) this.#remember(id, at);
  }

  #remember(id: string, at: number): void {
    this.#ids.delete(id);
    this.#ids.set(id, at);
    while (this.#ids.size > this.#maxEntries) this.#ids.delete(this.#ids.keys().next().value!);
  }

  #expire(): void {
    if (this.#maxAgeMs === undefined || !this.#clock) return;
    const oldest = this.#clock.now() - this.#maxAgeMs;
    for (const [id, at] of this.#ids) {
      if (at > oldest) break;
      this.#ids.delete(id);
    }
  }
}

/** Bounds of a {@link StoreDuplicateWindow}, and where it lives. */
export interface StoreDuplicateWindowOptions extends MemoryDuplicateWindowOptions {
  /** The store that keeps the ids: the embedded file store implements it. */
  store: ForwardedIdStore;
  /** The window's name in the store, unique per bridge: the bridge's name. */
  name: string;
}

/**
 * A duplicate window kept in the store, so exactly-once holds across a gateway restart. The ids
 * are read from the store once, at the first use, and answered from memory after that; `add`
 * writes the id (and forgets the ids that fell out of the window) in the store's next group
 * commit and resolves once that is durable. The runtime acknowledges the source only after
 * `add` resolved, so an acknowledged message's id is always in the store. Where the guarantee
 * ends is in docs/bridges.md.
 */
export class StoreDuplicateWindow implements DuplicateWindow {
  readonly #store: ForwardedIdStore;
  readonly #name: string;
  readonly #maxEntries: number;
  readonly #maxAgeMs: number | undefined;
  readonly #clock: Clock | undefined;
  /** Oldest first; insertion order is seq order. */
  #ids: Map<string, { seq: number; at: number }> | undefined;
  #lastSeq = 0;
  /** The highest seq forgotten in memory and not yet in the store. */
  #forgetThroughSeq: number | undefined;

  constructor(options: StoreDuplicateWindowOptions) {
    this.#maxEntries = checkBounds(options);
    this.#maxAgeMs = options.maxAgeMs;
    this.#clock = options.clock;
    this.#store = options.store;
    this.#name = options.name;
  }

  get bounds(): WindowBounds {
    return boundsOf(this.#maxEntries, this.#maxAgeMs);
  }

  /** Ids currently remembered. */
  get size(): number {
    this.#expire();
    return this.#loaded().size;
  }

  has(id: string): Promise<boolean> {
    try {
      this.#expire();
      return Promise.resolve(this.#loaded().has(id));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  add(id: string, at: number): Promise<void> {
    let seq: number;
    try {
      const ids = this.#loaded();
      seq = ++this.#lastSeq;
      ids.delete(id);
      ids.set(id, { seq, at });
      this.#trim(ids);
      this.#expire();
    } catch (error) {
      return Promise.reject(error);
    }
    const forget = this.#forgetThroughSeq;
    this.#forgetThroughSeq = undefined;
    return this.#store.recordForwardedIds(this.#name, [{ id, seq, at }], forget).catch((error: unknown) => {
      this.#keepForgetting(forget);
      throw error;
    });
  }

  /** Whether this window lives in `store`, so a target writing to it can carry the record ({@link stage}). */
  isKeptIn(store: MessageStore): boolean {
    return (this.#store as unknown) === store;
  }

  /**
   * The record of `id`, for the target to commit with the message it writes to this window's
   * store (see {@link StagedId}): the message and its id are then one atomic write. The window
   * must have been consulted (`has`) first, which loads it.
   */
  stage(id: string, at: number): StagedId {
    this.#loaded();
    const seq = ++this.#lastSeq;
    const forget = this.#forgetThroughSeq;
    this.#forgetThroughSeq = undefined;
    const operation: RecordForwardedOperation = {
      op: 'recordForwarded',
      window: this.#name,
      ids: [{ id, seq, at }],
      ...(forget === undefined ? {} : { forgetThroughSeq: forget }),
    };
    let settled = false;
    return {
      operation,
      committed: () => {
        if (settled) return;
        settled = true;
        // With sends in parallel a later seq can land first; the window's edge is then off by
        // those few places, which only the oldest ids feel.
        const ids = this.#loaded();
        ids.delete(id);
        ids.set(id, { seq, at });
        this.#trim(ids);
        this.#expire();
      },
      failed: () => {
        if (settled) return;
        settled = true;
        this.#keepForgetting(forget);
      },
    };
  }

  /**
   * Remembers ids the target holds, in memory only (seq 0: nothing to forget in the store). They
   * are the newest forwarded, so they go to the young end of the window.
   */
  seed(entries: readonly ForwardedIdSeen[]): void {
    const ids = this.#loaded();
    for (const { id, at } of entries) {
      if (ids.has(id)) continue;
      ids.set(id, { seq: 0, at });
    }
    this.#trim(ids);
    this.#expire();
  }

  /** A write that was to forget ids failed: the next one forgets them. */
  #keepForgetting(forget: number | undefined): void {
    if (forget !== undefined) this.#forgetThroughSeq = Math.max(forget, this.#forgetThroughSeq ?? 0);
  }

  #loaded(): Map<string, { seq: number; at: number }> {
    if (this.#ids) return this.#ids;
    const ids = new Map<string, { seq: number; at: number }>();
    for (const { id, seq, at } of this.#store.readForwardedIds(this.#name)) {
      ids.delete(id);
      ids.set(id, { seq, at });
      this.#lastSeq = Math.max(this.#lastSeq, seq);
    }
    this.#ids = ids;
    this.#trim(ids);
    return ids;
  }

  /** Forgets the oldest ids beyond `maxEntries`, to be forgotten in the store with the next add. */
  #trim(ids: Map<string, { seq: number; at: number }>): void {
    for (const [oldest, entry] of ids) {
      if (ids.size <= this.#maxEntries) break;
      ids.delete(oldest);
      this.#keepForgetting(entry.seq);
    }
  }

  #expire(): void {
    if (this.#maxAgeMs === undefined || !this.#clock) return;
    const ids = this.#loaded();
    const oldest = this.#clock.now() - this.#maxAgeMs;
    for (const [id, entry] of ids) {
      if (entry.at > oldest) break;
      ids.delete(id);
      this.#keepForgetting(entry.seq);
    }
  }
}

function boundsOf(maxEntries: number, maxAgeMs: number | undefined): WindowBounds {
  return maxAgeMs === undefined ? { maxEntries } : { maxEntries, maxAgeMs };
}

function checkBounds(options: MemoryDuplicateWindowOptions): number {
  const maxEntries = options.maxEntries ?? 100_000;
  if (!Number.isInteger(maxEntries) || maxEntries < 1)
    throw new InvalidArgumentError(
      `duplicate window maxEntries ${String(maxEntries)} is not valid (expected an integer >= 1)`,
    );
  if (options.maxAgeMs !== undefined && options.clock === undefined)
    throw new InvalidArgumentError('duplicate window maxAgeMs needs a clock');
  return maxEntries;
}
