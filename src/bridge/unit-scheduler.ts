/**
 * The ordering-unit scheduler (ORD-3, ORD-4): files each delivery into its ordering unit and
 * runs up to `concurrency` units at a time, each sending one message at a time, in order. A unit
 * whose head message waits (a retry delay, a reconnect) or is stalled (for resume()) holds the
 * messages behind it; the other units go on.
 */
import type { Clock } from '../jms/clock.js';
import type { RetryingReason } from './bridge-status.js';
import type { Item } from './delivery-item.js';
import type { StatusTracker } from './status-tracker.js';

/** An ordering unit: its messages go one at a time, in order. */
export interface Unit {
  readonly key: string;
  readonly items: Item[];
  /** idle: nothing to do; ready: queued for a slot; active: sending; waiting: for a timer or a reconnect; stalled: for resume(). */
  state: 'idle' | 'ready' | 'active' | 'waiting' | 'stalled';
  timer: unknown;
  /**
   * A step of the unit is under way, though the unit may already wait (a retry delay) while the
   * step still awaits batches it had handed over: the unit is queued again only once it ends, so
   * a unit never runs two steps at once.
   */
  busy?: boolean;
  /** Called when a message is filed into the unit (a step waiting for more to give). */
  onItem?: (() => void) | undefined;
}

/** What the scheduler needs of its bridge. */
export interface SchedulerContext {
  readonly clock: Clock;
  readonly concurrency: number;
  readonly maxInFlightPerUnit: number;
  /** Exactly-once: a redelivered copy of a message queues behind the original, by JMSMessageID. */
  readonly tracksIds: boolean;
  /** The status, told when units wait or stall. */
  readonly status: Pick<
    StatusTracker,
    'unitWaiting' | 'unitWaitOver' | 'unitWaitCancelled' | 'unitStalled' | 'unitUnstalled'
  >;
  /** The unit's key for a delivery, or null when it is ordered against nothing. */
  unitKeyOf(item: Item): string | null;
  /** Whether units may start sending (not stopping, not failed). */
  mayStart(): boolean;
  /** Sends the unit's head message once and handles the outcome. */
  attempt(unit: Unit): Promise<void>;
  /** `attempt` threw: a bug, not a broker problem; the unit is stalled after this. */
  attemptThrew(error: unknown): void;
  /** A step ended: capacity may be free, a drain may be done. */
  stepEnded(): void;
}

/** The ordering units of one bridge and the slots they send in. */
export class UnitScheduler {
  readonly #context: SchedulerContext;
  readonly #units = new Map<string, Unit>();
  #ready: Unit[] = [];
  #active = 0;
  readonly #steps = new Set<Promise<void>>();
  #nextUnordered = 0;
  readonly #stalled = new Set<Unit>();
  /** The unit sending a suspect message alone: no other unit starts until it is done. */
  #probing: Unit | undefined;
  /** Exactly-once: the unit holding a message id, so a redelivered copy queues behind the original. */
  readonly #unitOfId = new Map<string, Unit>();
  /** The unit that hit `maxInFlightPerUnit` with the last read: reading waits until it drains. */
  #fullUnit: Unit | undefined;

  constructor(context: SchedulerContext) {
    this.#context = context;
  }

  /** Whether the last unit read into is still full: reading waits until it drains (backpressure). */
  get full(): boolean {
    if (this.#fullUnit && this.#fullUnit.items.length < this.#context.maxInFlightPerUnit)
      this.#fullUnit = undefined;
    return this.#fullUnit !== undefined;
  }

  /** Messages held by stalled units: they stay in flight until resume() or the stop. */
  get stalledItems(): number {
    let count = 0;
    for (const unit of this.#stalled) count += unit.items.length;
    return count;
  }

  /** Whether `unit` sends its suspect head message alone. */
  isProbing(unit: Unit): boolean {
    return this.#probing === unit;
  }

  /** Files `item` at the end of its unit, which starts if it was idle. */
  enqueue(item: Item): void {
    const unit = this.#unitFor(item);
    unit.items.push(item);
    if (this.#context.tracksIds && item.id !== null) this.#unitOfId.set(item.id, unit);
    if (unit.items.length >= this.#context.maxInFlightPerUnit) this.#fullUnit = unit;
    if (unit.state === 'idle') this.#makeReady(unit);
    unit.onItem?.();
  }

  /** Whether another unit waits for a slot: a unit sending batch after batch then gives up its slot. */
  get othersWaiting(): boolean {
    return this.#ready.some((unit) => unit.state === 'ready' && !unit.busy);
  }

  #unitFor(item: Item): Unit {
    const holder = item.id === null ? undefined : this.#unitOfId.get(item.id);
    if (holder && this.#units.get(holder.key) === holder) return holder;
    const key = this.#context.unitKeyOf(item) ?? `unordered:${++this.#nextUnordered}`;
    let unit = this.#units.get(key);
    if (!unit) {
      unit = { key, items: [], state: 'idle', timer: undefined };
      this.#units.set(key, unit);
    }
    return unit;
  }

  /**
   * A message of the unit is finished with (sent, parked, dropped): its head, or, from a batch, a
   * later one the target confirmed while an earlier one failed on another target stream.
   */
  removeHead(unit: Unit, item: Item): void {
    const index = unit.items.indexOf(item);
    if (index < 0) return;
    unit.items.splice(index, 1);
    this.#forgetId(item, unit);
  }

  #forgetId(item: Item, unit: Unit): void {
    if (item.id === null || this.#unitOfId.get(item.id) !== unit) return;
    if (!unit.items.some((other) => other !== item && other.id === item.id)) this.#unitOfId.delete(item.id);
  }

  // --- waiting and stalling ---

  /** The head message waits until `until` settles (a reconnect), then the unit goes on. */
  waitFor(unit: Unit, until: Promise<unknown>): void {
    unit.state = 'waiting';
    void until.then(() => this.#wakeUnit(unit));
  }

  /** The unit waits for nothing that will wake it: the bridge failed, only stop ends this. */
  hold(unit: Unit): void {
    unit.state = 'waiting';
  }

  /** The head message waits `delayMs` before its next attempt; later messages of the unit wait behind it (ORD-3). */
  retryLater(unit: Unit, delayMs: number, reason: RetryingReason): void {
    unit.state = 'waiting';
    this.#context.status.unitWaiting(unit, reason);
    unit.timer = this.#context.clock.setTimer(() => {
      unit.timer = undefined;
      this.#wakeUnit(unit);
      this.#context.status.unitWaitOver(unit);
    }, delayMs);
  }

  #wakeUnit(unit: Unit): void {
    if (unit.state === 'waiting' && this.#units.get(unit.key) === unit) this.#makeReady(unit);
  }

  #clearTimer(unit: Unit): void {
    if (unit.timer !== undefined) this.#context.clock.clearTimer(unit.timer);
    unit.timer = undefined;
  }

  /** The unit keeps its head message and waits for `resume()` (status `failed`, `unit-stalled`). */
  stall(unit: Unit, detail: string): void {
    unit.state = 'stalled';
    this.#stalled.add(unit);
    this.#context.status.unitStalled(unit, detail);
  }

  /** resume(): every stalled unit gets a new round of retries. */
  resumeStalled(): void {
    for (const unit of [...this.#stalled]) {
      this.#stalled.delete(unit);
      const head = unit.items[0];
      if (head) head.failures = 0;
      this.#makeReady(unit);
      this.#context.status.unitUnstalled(unit);
    }
  }

  // --- running units ---

  #makeReady(unit: Unit): void {
    unit.state = 'ready';
    // Its step still awaits batches: it is queued when that step ends.
    if (unit.busy) return;
    this.#ready.push(unit);
    this.pump();
  }

  /** Starts ready units while there are free slots. */
  pump(): void {
    while (
      this.#active < this.#context.concurrency &&
      this.#context.mayStart() &&
      this.#probing === undefined
    ) {
      const unit = this.#takeReady();
      if (!unit) return;
      unit.state = 'active';
      unit.busy = true;
      this.#active++;
      const step = this.#step(unit);
      this.#steps.add(step);
      void step.finally(() => this.#steps.delete(step));
    }
  }

  /**
   * The next ready unit, in turn. A unit whose head message is a suspect (its send ended in a
   * lost connection) waits at the front until nothing else is being sent, and then goes alone,
   * so that a connection lost during its send can only be its doing.
   */
  #takeReady(): Unit | undefined {
    for (;;) {
      const unit = this.#ready[0];
      if (!unit) return undefined;
      if (unit.state !== 'ready') {
        this.#ready.shift();
        continue;
      }
      if (unit.items[0]?.suspect) {
        if (this.#active > 0) return undefined;
        this.#probing = unit;
      }
      this.#ready.shift();
      return unit;
    }
  }

  async #step(unit: Unit): Promise<void> {
    try {
      await this.#context.attempt(unit);
    } catch (error) {
      // A bug, not a broker problem: keep the message, say so loudly.
      this.#context.attemptThrew(error);
      this.stall(unit, error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    } finally {
      this.#active--;
      unit.busy = false;
      unit.onItem = undefined;
      if (this.#probing === unit) this.#probing = undefined;
      if (unit.state === 'active') {
        if (unit.items.length > 0) this.#makeReady(unit);
        else {
          unit.state = 'idle';
          if (this.#units.get(unit.key) === unit) this.#units.delete(unit.key);
        }
      } else if (unit.state === 'ready' && this.#units.get(unit.key) === unit) {
        // Woken while its step was ending (see #makeReady).
        this.#ready.push(unit);
      }
      this.pump();
      this.#context.stepEnded();
    }
  }

  /** Resolves once every step under way has ended. */
  async stepsEnded(): Promise<void> {
    await Promise.all([...this.#steps]);
  }

  // --- giving up messages ---

  /** stop(): no retry timer fires any more. */
  cancelTimers(): void {
    for (const unit of this.#units.values()) {
      this.#clearTimer(unit);
      this.#context.status.unitWaitCancelled(unit);
    }
  }

  /** stop(), after its deadline: every unit and what it holds, handed over and forgotten here. */
  takeAll(): Item[] {
    const units = [...this.#units.values()];
    this.#units.clear();
    this.#ready = [];
    this.#unitOfId.clear();
    this.#fullUnit = undefined;
    this.#stalled.clear();
    return units.flatMap((unit) => unit.items.splice(0));
  }

  /**
   * Drops the items `keep` refuses (what a lost source connection had delivered and the runtime
   * had not yet sent or settled), calling `dropped` for each. A unit sending keeps its head and
   * what is in a batch with it; a waiting or stalled unit that lost its head starts over with the
   * next message.
   */
  abandon(keep: (item: Item) => boolean, dropped: (item: Item) => void): void {
    for (const unit of [...this.#units.values()]) {
      const busy = unit.state === 'active' || unit.busy === true;
      // What is in a batch being sent stays until its answer, whatever the unit's state.
      const kept = unit.items.filter((item, index) => (busy && index === 0) || item.sending || keep(item));
      if (kept.length === unit.items.length) continue;
      const headChanged = kept[0] !== unit.items[0];
      for (const item of unit.items) {
        if (kept.includes(item)) continue;
        this.#forgetId(item, unit);
        dropped(item);
      }
      unit.items.splice(0, unit.items.length, ...kept);
      if (!busy && headChanged) this.#restartUnit(unit);
    }
  }

  /** A waiting or stalled unit lost its head message: start over with the next one, if any. */
  #restartUnit(unit: Unit): void {
    this.#clearTimer(unit);
    this.#stalled.delete(unit);
    if (unit.items.length === 0) {
      unit.state = 'idle';
      this.#units.delete(unit.key);
    } else if (unit.state !== 'ready') {
      this.#makeReady(unit);
    }
    this.#context.status.unitWaitOver(unit);
    this.#context.status.unitUnstalled(unit);
  }
}
