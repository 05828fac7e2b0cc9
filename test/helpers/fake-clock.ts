/**
 * A clock tests move by hand: timers fire in due order when `advance` passes them, so redelivery
 * delays, expiry, schedules and receive timeouts are tested without sleeping.
 */
import type { Clock } from '../../src/index.js';

interface FakeTimer {
  due: number;
  order: number;
  callback: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #order = 0;
  readonly #timers = new Set<FakeTimer>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const timer = { due: this.#now + Math.max(0, delayMs), order: this.#order++, callback };
    this.#timers.add(timer);
    return timer;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as FakeTimer);
  }

  /**
   * Moves time forward by `ms`, firing due timers in order (each at its own due time), and lets
   * promise callbacks run between them so the engine's async work settles as it would.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      const next = [...this.#timers]
        .filter((t) => t.due <= end)
        .sort((a, b) => a.due - b.due || a.order - b.order)[0];
      if (!next) break;
      this.#timers.delete(next);
      this.#now = Math.max(this.#now, next.due);
      next.callback();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets pending promise callbacks and immediates run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
