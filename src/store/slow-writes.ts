/**
 * Tells the operator when a store write held the event loop. The file store writes each group
 * commit synchronously (better-sqlite3), so while it writes, the gateway answers nothing else:
 * not the admin API, not a broker's heartbeat. A slow disk, or bodies just under the store's
 * `largeBodyBytes` in numbers, make that visible as stalls whose cause is otherwise hard to find;
 * this names it. Warns at the first slow write,
 * then at most once per interval, counting the slow writes it did not log in between.
 */
import type { EngineLogger } from '../jms/logger.js';

/** A monotonic clock in milliseconds (`performance.now` by default); tests pass their own. */
export type ElapsedClock = () => number;

/** Writes at or above this many ms are slow, by default: what an admin request may wait. */
export const DEFAULT_SLOW_WRITE_MS = 100;
/** At most one warning per this many ms. */
const WARN_INTERVAL_MS = 60_000;

export class SlowWrites {
  readonly #logger: EngineLogger;
  readonly #file: string;
  readonly #thresholdMs: number;
  readonly #clock: ElapsedClock;
  #lastWarnAt = Number.NEGATIVE_INFINITY;
  #unlogged = 0;

  constructor(logger: EngineLogger, file: string, thresholdMs: number, clock: ElapsedClock) {
    this.#logger = logger;
    this.#file = file;
    this.#thresholdMs = thresholdMs;
    this.#clock = clock;
  }

  /**
   * Runs `write`, timing it; a slow one is logged (or counted) with what it held, which `what`
   * counts only then.
   */
  time(write: () => void, what: () => { commits: number; operations: number }): void {
    const started = this.#clock();
    try {
      write();
    } finally {
      const ended = this.#clock();
      if (ended - started >= this.#thresholdMs) this.#slow(ended, Math.round(ended - started), what());
    }
  }

  #slow(now: number, ms: number, what: { commits: number; operations: number }): void {
    if (now - this.#lastWarnAt < WARN_INTERVAL_MS) {
      this.#unlogged++;
      return;
    }
    const fields: Record<string, unknown> = { file: this.#file, ms, ...what };
    if (this.#unlogged > 0) fields['slowWritesNotLogged'] = this.#unlogged;
    this.#logger.warn(
      fields,
      'store write held the event loop: nothing else ran meanwhile (large messages or a slow disk; see docs/persistence.md)',
    );
    this.#lastWarnAt = now;
    this.#unlogged = 0;
  }
}
