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
  /**
   * Drops the callback and takes the timer out of its queue at once (O(log n)); a timer that has
   * fired, was cancelled or whose queue was closed is left as it is.
   */
  cancel(): void;
}

/** `TimerNode.index` of a node in no heap: fired, cancelled, or dropped by `close()`. */
const DETACHED = -1;

/**
 * A heap node, handed out as its own cancel handle so scheduling allocates one object. Its fields
 * are `declare`d and set in the constructor: emitted class fields would first define each one as
 * undefined, and one node is made per delayed message (about 0.5 µs more each, measured).
 *
 * The node knows its heap and its slot in it, so a cancel removes it at once. A cancelled node
 * left in place until it would have fired made `receive(timeout)` in a loop, which arms and
 * cancels a timer per message, pile up a node per receive for the whole timeout (a million
 * receives with a 30 s timeout: a million dead nodes, and more than half the time in garbage
 * collection). Lazy deletion with a compaction once dead nodes are half the heap also bounds
 * the heap, but measured against this one (an arm and a cancel in a loop, compiled) it was slower
 * in every case: 100-140 ns a pair against 30-60 with no other timers, 0.9-1.4 µs against
 * 0.3-0.4 with 100,000 or 1,000,000 live ones; and the cancel that compacts a million live
 * timers stalled for 180-280 ms, where the indexed heap pays one index write per move.
 */
class TimerNode implements ScheduledTimer {
  declare readonly due: number;
  declare readonly order: number;
  declare readonly callback: () => void;
  declare readonly heap: TimerNode[];
  /** The node's slot in `heap`, or {@link DETACHED}. */
  declare index: number;

  constructor(due: number, order: number, callback: () => void, heap: TimerNode[]) {
    this.due = due;
    this.order = order;
    this.callback = callback;
    this.heap = heap;
    this.index = DETACHED;
  }

  cancel(): void {
    const index = this.index;
    // After close() the slot may hold another node (or none): only this node's own slot counts.
    if (index !== DETACHED && this.heap[index] === this) removeAt(this.heap, index);
    this.index = DETACHED;
  }
}

/**
 * The engine's one timer queue: a binary heap keyed by due time (then by arming order) driving
 * delivery times, redelivery delays, expiry scans, blocked-send and receive timeouts. It keeps a
 * single clock timer armed for the earliest entry, so a million delayed messages cost a million
 * heap nodes, not timers. Its size is the number of live timers: a cancel removes the node.
 * Cancelling the earliest one leaves the clock timer armed; it fires early and arms again.
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

  /** Number of timers waiting to fire (cancelled ones are gone at once). */
  get size(): number {
    return this.#heap.length;
  }

  /** Runs `callback` at absolute time `due` (at once, asynchronously, if it is past). */
  at(due: number, callback: () => void): ScheduledTimer {
    const heap = this.#heap;
    const node = new TimerNode(due, this.#order++, callback, heap);
    node.index = heap.length;
    heap.push(node);
    siftUp(heap, node.index);
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
    for (const node of this.#heap) node.index = DETACHED;
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
    const heap = this.#heap;
    const now = this.#clock.now();
    // A callback may cancel or arm other timers: the loop reads the root afresh each time.
    for (let first = heap[0]; first && first.due <= now; first = heap[0]) {
      removeAt(heap, 0);
      first.index = DETACHED;
      first.callback();
    }
    this.#arm();
  }
}

/** Whether `a` fires before `b`: earlier due time, then earlier arming. */
function earlier(a: TimerNode, b: TimerNode): boolean {
  return a.due < b.due || (a.due === b.due && a.order < b.order);
}

/** Takes the node at `index` out of the heap, filling its slot with the last node. */
function removeAt(heap: TimerNode[], index: number): void {
  const last = heap.pop()!;
  if (index === heap.length) return;
  heap[index] = last;
  last.index = index;
  if (index > 0 && earlier(last, heap[(index - 1) >> 1]!)) siftUp(heap, index);
  else siftDown(heap, index);
}

/**
 * Moves the node at `index` up to its place. Nodes move into the hole rather than being swapped,
 * so each level costs one slot and one index write, and no temporary array is made.
 */
function siftUp(heap: TimerNode[], index: number): void {
  const node = heap[index]!;
  let i = index;
  while (i > 0) {
    const parentIndex = (i - 1) >> 1;
    const parent = heap[parentIndex]!;
    if (!earlier(node, parent)) break;
    heap[i] = parent;
    parent.index = i;
    i = parentIndex;
  }
  if (i !== index) {
    heap[i] = node;
    node.index = i;
  }
}

/** Moves the node at `index` down to its place, the same way as {@link siftUp}. */
function siftDown(heap: TimerNode[], index: number): void {
  const node = heap[index]!;
  const length = heap.length;
  let i = index;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= length) break;
    const right = left + 1;
    let child = left;
    let childNode = heap[left]!;
    if (right < length && earlier(heap[right]!, childNode)) {
      child = right;
      childNode = heap[right]!;
    }
    if (!earlier(childNode, node)) break;
    heap[i] = childNode;
    childNode.index = i;
    i = child;
  }
  if (i !== index) {
    heap[i] = node;
    node.index = i;
  }
}
