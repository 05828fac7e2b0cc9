/**
 * Time for the engine. The engine never reads the wall clock or sets timers itself: it takes a
 * {@link Clock} through its constructor, so tests drive redelivery delays, expiry and schedules
 * with a fake clock instead of sleeping.
 */

/** A source of time and one-shot timers. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `callback` after `delayMs`; the returned value cancels it via {@link Clock.clearTimer}. */
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

/** The longest delay `setTimeout` takes (about 24.8 days); a longer one fires after 1 ms instead. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * The delay to arm a system timer with. Longer delays (a far schedule, a grown redelivery
 * backoff) are cut to the longest `setTimeout` takes: the timer queue re-arms when it fires
 * early, where an overflowing delay would fire every millisecond.
 */
export function systemTimerDelay(delayMs: number): number {
  if (!(delayMs > 0)) return 0;
  return Math.min(delayMs, LONGEST_TIMER_MS);
}

/** The real clock. Timers are unref'd so a pending delay never keeps the process alive alone. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(callback, delayMs) {
    const handle = setTimeout(callback, systemTimerDelay(delayMs));
    handle.unref();
    return handle;
  },
  clearTimer(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** A scheduled callback in a {@link TimerQueue}; `cancel()` is cheap and idempotent. */
export interface ScheduledTimer {
  readonly due: number;
  cancel(): void;
}

/**
 * A heap node, handed out as its own cancel handle so scheduling allocates one object. Its fields
 * are `declare`d and set in the constructor: emitted class fields would first define each one as
 * undefined, and one node is made per delayed message (about 0.5 µs more each, measured).
 */
class TimerNode implements ScheduledTimer {
  declare readonly due: number;
  declare readonly order: number;
  declare readonly callback: () => void;
  declare cancelled: boolean;

  constructor(due: number, order: number, callback: () => void) {
    this.due = due;
    this.order = order;
    this.callback = callback;
    this.cancelled = false;
  }

  cancel(): void {
    this.cancelled = true;
  }
}

/**
 * The engine's one timer queue: a binary heap keyed by due time driving delivery times,
 * redelivery delays, expiry scans and blocked-send timeouts. It keeps a single clock timer armed
 * for the earliest entry, so a million delayed messages cost a million heap nodes, not timers.
 */
export class TimerQueue {
  readonly #clock: Clock;
  readonly #heap: TimerNode[] = [];
  #order = 0;
  #armedFor = Infinity;
  #armed: unknown = undefined;
  #closed = false;
  /** Made once: arming a timer per redelivery delay should not also make a closure per arm. */
  readonly #onFire = (): void => this.#fire();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Number of live and cancelled-but-not-yet-popped timers. */
  get size(): number {
    return this.#heap.length;
  }

  /** Runs `callback` at absolute time `due` (at once, asynchronously, if it is past). */
  at(due: number, callback: () => void): ScheduledTimer {
    const node = new TimerNode(due, this.#order++, callback);
    this.#push(node);
    this.#arm();
    return node;
  }

  /** Runs `callback` after `delayMs`. */
  after(delayMs: number, callback: () => void): ScheduledTimer {
    return this.at(this.#clock.now() + delayMs, callback);
  }

  /** Stops firing; pending callbacks are dropped. */
  close(): void {
    this.#closed = true;
    if (this.#armed !== undefined) this.#clock.clearTimer(this.#armed);
    this.#armed = undefined;
    this.#heap.length = 0;
  }

  #arm(): void {
    if (this.#closed) return;
    const first = this.#heap[0];
    if (!first || first.due >= this.#armedFor) return;
    if (this.#armed !== undefined) this.#clock.clearTimer(this.#armed);
    this.#armedFor = first.due;
    this.#armed = this.#clock.setTimer(this.#onFire, first.due - this.#clock.now());
  }

  #fire(): void {
    this.#armed = undefined;
    this.#armedFor = Infinity;
    const now = this.#clock.now();
    for (let first = this.#heap[0]; first && first.due <= now; first = this.#heap[0]) {
      this.#pop();
      if (!first.cancelled) first.callback();
    }
    this.#arm();
  }

  #less(a: TimerNode, b: TimerNode): boolean {
    return a.due < b.due || (a.due === b.due && a.order < b.order);
  }

  #push(node: TimerNode): void {
    const heap = this.#heap;
    heap.push(node);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(heap[i]!, heap[parent]!)) break;
      swap(heap, i, parent);
      i = parent;
    }
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && this.#less(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && this.#less(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      swap(heap, i, smallest);
      i = smallest;
    }
  }
}

/** Swaps two heap slots without the temporary array a destructuring swap makes before it is optimised. */
function swap(heap: TimerNode[], a: number, b: number): void {
  const node = heap[a]!;
  heap[a] = heap[b]!;
  heap[b] = node;
}
