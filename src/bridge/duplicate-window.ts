/**
 * The duplicate window of an exactly-once bridge (BRG-2): the JMSMessageIDs the bridge has
 * forwarded recently. The runtime records an id after the target confirmed the message and
 * before it acknowledges the source, and drops a message whose id is already in the window.
 *
 * Two windows: {@link MemoryDuplicateWindow} forgets everything on restart, so exactly-once with
 * it only holds within one process run; {@link StoreDuplicateWindow} keeps the ids in the store
 * (the embedded file store), durable before `add` resolves, so it survives a restart.
 */
import type { Clock } from '../jms/clock.js';
import { InvalidArgumentError } from '../jms/errors.js';
import type { ForwardedIdStore } from '../jms/store-port.js';

/** The ids a bridge forwarded, bounded by count and optionally by age. */
export interface DuplicateWindow {
  /** True when `id` was forwarded and is still inside the window. */
  has(id: string): Promise<boolean>;
  /**
   * Records that `id` reached the target at time `at` (ms since the epoch). A persisted window
   * resolves only once the record is durable: the source is acknowledged after this resolves.
   */
  add(id: string, at: number): Promise<void>;
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
    this.#ids.delete(id);
    this.#ids.set(id, at);
    while (this.#ids.size > this.#maxEntries) this.#ids.delete(this.#ids.keys().next().value!);
    return Promise.resolve();
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
      // Not forgotten in the store: the next add tries again.
      if (forget !== undefined) this.#forgetThroughSeq = Math.max(forget, this.#forgetThroughSeq ?? 0);
      throw error;
    });
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
      this.#forgetThroughSeq = entry.seq;
    }
  }

  #expire(): void {
    if (this.#maxAgeMs === undefined || !this.#clock) return;
    const ids = this.#loaded();
    const oldest = this.#clock.now() - this.#maxAgeMs;
    for (const [id, entry] of ids) {
      if (entry.at > oldest) break;
      ids.delete(id);
      this.#forgetThroughSeq = entry.seq;
    }
  }
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
