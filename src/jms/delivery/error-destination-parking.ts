/**
 * Undeliverable messages waiting for room in their full error destination (DLV-3). An error
 * destination over its quota is never written past, and the message must not be lost nor handed
 * back to consumers (it used up its redeliveries, or was rejected as poison, or expired): it is
 * parked in its own backlog, where no consumer can take it, and only ever moved. The move is
 * tried again as soon as any backlog drains (once per turn, however many drained), and otherwise
 * every second on the engine's timer queue; an error is logged once per interval per error
 * destination while it stays full. Nothing about parking is stored: after a restart the message
 * is back as it was stored, and is delivered or moved again from there.
 */
import type { ScheduledTimer, TimerQueue } from '../clock.js';
import type { Backlog } from '../destination/backlog.js';
import type { DestinationState } from '../destination/destination-state.js';
import type { Entry } from '../destination/entry.js';
import type { EngineLogger } from '../logger.js';

/** How long parked messages wait before their error destination is tried again, at the latest. */
const RETRY_MS = 1_000;
/** How often a full error destination is reported (DLV-3: "logs once per interval"). */
const WARNING_INTERVAL_MS = 60_000;

/** A move to an error destination that has to wait for room. */
export interface ParkedMove {
  backlog: Backlog;
  entry: Entry;
  reason: string;
  removal: 'deleted' | 'expired';
}

/** What parking needs of the engine. */
export interface ParkingHooks {
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  now(): number;
  /** Whether the error destination can take a message of `size` bytes now (DLV-7 quotas). */
  hasRoom(target: DestinationState, size: number): boolean;
  /** Moves the parked message to its error destination (which has room). */
  move(move: ParkedMove, target: DestinationState): void;
}

export class ErrorDestinationParking {
  /** Parked moves per error destination, oldest first: they move in that order. */
  readonly #byTarget = new Map<DestinationState, Map<Entry, ParkedMove>>();
  readonly #lastWarned = new Map<DestinationState, number>();
  #timer: ScheduledTimer | undefined;
  #retrySoon = false;
  #closed = false;

  constructor(private readonly hooks: ParkingHooks) {}

  /** Whether messages wait for `target`: a newly undeliverable one goes behind them. */
  holds(target: DestinationState): boolean {
    return this.#byTarget.has(target);
  }

  /** Parks an entry in its backlog until `target` has room. */
  park(target: DestinationState, move: ParkedMove): void {
    let waiting = this.#byTarget.get(target);
    if (!waiting) this.#byTarget.set(target, (waiting = new Map<Entry, ParkedMove>()));
    waiting.set(move.entry, move);
    move.backlog.park(move.entry);
    this.#warn(target, move);
    this.#timer ??= this.hooks.timers.after(RETRY_MS, this.#onTimer);
  }

  /** Some backlog drained (acknowledged or removed): an error destination may have room now. */
  drained(): void {
    if (this.#byTarget.size === 0 || this.#retrySoon || this.#closed) return;
    this.#retrySoon = true;
    // Not from inside the drain: the backlog that drained is still in the middle of its change.
    queueMicrotask(() => {
      this.#retrySoon = false;
      this.#retryAll();
    });
  }

  /** Stops retrying (the engine closes). */
  close(): void {
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined;
    this.#retryAll();
    if (this.#byTarget.size === 0 || this.#closed) return;
    for (const [target, waiting] of this.#byTarget) {
      const oldest = waiting.values().next().value;
      if (oldest) this.#warn(target, oldest);
    }
    this.#timer = this.hooks.timers.after(RETRY_MS, this.#onTimer);
  };

  #retryAll(): void {
    if (this.#closed) return;
    for (const [target, waiting] of this.#byTarget) {
      this.#retry(target, waiting);
      if (waiting.size === 0) this.#byTarget.delete(target);
    }
  }

  #retry(target: DestinationState, waiting: Map<Entry, ParkedMove>): void {
    for (const [entry, move] of waiting) {
      // Gone meanwhile (purged, or its destination deleted): nothing to move.
      if (entry.state !== 'parked') {
        waiting.delete(entry);
        continue;
      }
      if (!target.deleted && !this.hooks.hasRoom(target, entry.size)) return;
      waiting.delete(entry);
      this.hooks.move(move, target);
    }
  }

  #warn(target: DestinationState, move: ParkedMove): void {
    const now = this.hooks.now();
    if ((this.#lastWarned.get(target) ?? -Infinity) + WARNING_INTERVAL_MS > now) return;
    this.#lastWarned.set(target, now);
    this.hooks.logger.error(
      {
        errorDestination: target.handle.toString(),
        parked: this.#byTarget.get(target)?.size ?? 0,
        messageId: move.entry.id,
        reason: move.reason,
      },
      'error destination is full: undeliverable messages are held where they are, for no consumer, until it has room',
    );
  }
}
