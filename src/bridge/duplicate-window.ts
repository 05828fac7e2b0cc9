/**
 * The duplicate window of an exactly-once bridge (BRG-2): the JMSMessageIDs the bridge has
 * forwarded recently. The runtime records an id after the target confirmed the message and
 * before it acknowledges the source, and drops a message whose id is already in the window.
 *
 * The interface is asynchronous and keyed by plain strings so a persisted window (records of
 * `{ id, at }` written to the store before `add` resolves) can implement it; the in-memory window
 * here forgets everything on restart, so exactly-once with it only holds within one process run.
 */
import type { Clock } from '../jms/clock.js';
import { InvalidArgumentError } from '../jms/errors.js';

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
    this.#maxEntries = options.maxEntries ?? 100_000;
    if (!Number.isInteger(this.#maxEntries) || this.#maxEntries < 1)
      throw new InvalidArgumentError(
        `duplicate window maxEntries ${String(this.#maxEntries)} is not valid (expected an integer >= 1)`,
      );
    if (options.maxAgeMs !== undefined && options.clock === undefined)
      throw new InvalidArgumentError('duplicate window maxAgeMs needs a clock');
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
