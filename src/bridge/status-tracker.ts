/**
 * The one owner of a bridge's status (BRG-5). The runtime reports what happens through named
 * transitions (starting, a side lost, a unit stalled, ...); the tracker keeps those facts, works
 * out the status with its reason from them in one place, and tells the listeners when it changes.
 */
import type { Clock } from '../jms/clock.js';
import type { EngineLogger } from '../jms/logger.js';
import type {
  BridgeStatus,
  BridgeStatusReport,
  FailedReason,
  RetryingReason,
  StatusChange,
  StatusReason,
  StatusListener,
} from './bridge-status.js';

/** The bridge's endpoints, as the status names a lost one. */
export type Side = 'source' | 'sink' | 'errorDestination';

/** Where a bridge is in its life: `running` once every endpoint connected, until stop() begins. */
export type Lifecycle = 'stopped' | 'connecting' | 'running' | 'stopping';

/** What the tracker needs of its bridge. */
export interface StatusContext {
  readonly bridge: string;
  readonly clock: Clock;
  readonly logger: EngineLogger;
}

/** A waiting or stalled ordering unit, as the status counts it: any object the scheduler owns. */
export type UnitToken = object;

/** A status worked out from the facts, before it is given its `since`. */
interface Computed {
  readonly state: BridgeStatus;
  readonly reason?: StatusReason;
  readonly detail?: string;
}

/** A bridge's status: the facts it comes from, the transitions that change them, the listeners. */
export class StatusTracker {
  readonly #context: StatusContext;
  #lifecycle: Lifecycle = 'stopped';
  #paused = false;
  /** An endpoint is misconfigured, or the reader hit a bug: nothing more is tried until stop/start. */
  #fatal: { readonly reason: FailedReason; readonly detail: string } | undefined;
  /** Lost connections being re-made, with their cause. */
  readonly #down = new Map<Side, string>();
  /** Units holding a message for resume(), with why. */
  readonly #stalled = new Map<UnitToken, string>();
  /** Units whose head message waits for a retry timer, with why. */
  readonly #waiting = new Map<UnitToken, RetryingReason>();
  /** Moves to the error destination waiting to try again. */
  #errorDestinationRetries = 0;
  #report: BridgeStatusReport;
  readonly #listeners = new Set<StatusListener>();

  constructor(context: StatusContext) {
    this.#context = context;
    this.#report = { state: 'stopped', since: context.clock.now() };
  }

  get status(): BridgeStatus {
    return this.#report.state;
  }

  get report(): BridgeStatusReport {
    return this.#report;
  }

  get lifecycle(): Lifecycle {
    return this.#lifecycle;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Whether the bridge failed for good (until stop and start): misconfigured, or a reader bug. */
  get fatal(): boolean {
    return this.#fatal !== undefined;
  }

  /** Calls `listener` on every change of status; returns the function that removes it. */
  onChange(listener: StatusListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // --- transitions of the bridge's life ---

  /** start(): connecting, not paused, an earlier failure forgotten. */
  starting(): void {
    this.#lifecycle = 'connecting';
    this.#paused = false;
    this.#fatal = undefined;
    this.#update();
  }

  /** Every endpoint connected. */
  running(): void {
    this.#lifecycle = 'running';
    this.#update();
  }

  /** stop() began: the status shows what the stop causes, and `stopped` once it ends. */
  stopping(): void {
    this.#lifecycle = 'stopping';
  }

  /** stop() ended: nothing is down, waiting or stalled any more. */
  stopped(): void {
    this.#lifecycle = 'stopped';
    this.#paused = false;
    this.#down.clear();
    this.#waiting.clear();
    this.#stalled.clear();
    this.#update();
  }

  pausedReading(): void {
    this.#paused = true;
    this.#update();
  }

  resumedReading(): void {
    this.#paused = false;
    this.#update();
  }

  /** An operator must act: an endpoint is misconfigured, or the reader hit a bug. */
  failed(reason: FailedReason, detail: string): void {
    this.#fatal = { reason, detail };
    this.#update();
  }

  // --- connections ---

  connectionLost(side: Side, cause: string): void {
    this.#down.set(side, cause);
    this.#update();
  }

  /** The lost side is connected again, or its reconnect ended with the stop or a failure. */
  connectionEnded(side: Side): void {
    this.#down.delete(side);
    this.#update();
  }

  // --- ordering units ---

  unitWaiting(unit: UnitToken, reason: RetryingReason): void {
    this.#waiting.set(unit, reason);
    this.#update();
  }

  /** The unit's retry timer fired, or it lost the message that waited. */
  unitWaitOver(unit: UnitToken): void {
    if (this.#waiting.delete(unit)) this.#update();
  }

  /** stop() cancelled the unit's retry timer: the status changes when the stop ends. */
  unitWaitCancelled(unit: UnitToken): void {
    this.#waiting.delete(unit);
  }

  unitStalled(unit: UnitToken, detail: string): void {
    this.#stalled.set(unit, detail);
    this.#update();
  }

  /** resume() gave the unit a new round of retries, or it lost the message it held. */
  unitUnstalled(unit: UnitToken): void {
    if (this.#stalled.delete(unit)) this.#update();
  }

  errorDestinationRetrying(): void {
    this.#errorDestinationRetries++;
    this.#update();
  }

  errorDestinationRetried(): void {
    this.#errorDestinationRetries--;
    this.#update();
  }

  // --- working it out ---

  /** The status from the facts; the order says which fact wins when several hold. */
  #compute(): Computed {
    if (this.#lifecycle === 'stopped') return { state: 'stopped' };
    if (this.#fatal !== undefined) return { state: 'failed', ...this.#fatal };
    if (this.#lifecycle === 'connecting') return { state: 'connecting' };
    if (this.#down.size > 0) {
      const detail = [...this.#down].map(([side, cause]) => `${sideName(side)}: ${cause}`).join('; ');
      return { state: 'reconnecting', reason: 'connection-lost', detail };
    }
    const [stalled] = this.#stalled.values();
    if (stalled !== undefined) {
      const more = this.#stalled.size > 1 ? ` (and ${this.#stalled.size - 1} more ordering units)` : '';
      return { state: 'failed', reason: 'unit-stalled', detail: `${stalled}${more}` };
    }
    if (this.#paused) return { state: 'paused' };
    if (this.#errorDestinationRetries > 0)
      return {
        state: 'retrying',
        reason: 'error-destination-unavailable',
        detail: 'a message waits to be moved to the error destination',
      };
    if (this.#waiting.size > 0) {
      const reasons = new Set(this.#waiting.values());
      const reason = reasons.has('back-off') ? 'back-off' : 'retry-delay';
      const units =
        this.#waiting.size === 1 ? '1 ordering unit waits' : `${this.#waiting.size} ordering units wait`;
      return {
        state: 'retrying',
        reason,
        detail:
          reason === 'back-off' ? `${units}: the target asked to back off` : `${units} for a retry delay`,
      };
    }
    return { state: 'connected' };
  }

  #update(): void {
    const next = this.#compute();
    const previous = this.#report;
    if (next.state === previous.state) {
      // Same state, maybe a new reason: the report says so, listeners hear of changes of state.
      if (next.reason !== reasonOf(previous) || next.detail !== detailOf(previous))
        this.#report = { ...next, since: previous.since } as BridgeStatusReport;
      return;
    }
    this.#report = { ...next, since: this.#context.clock.now() } as BridgeStatusReport;
    const { bridge, logger } = this.#context;
    logger.debug({ bridge, status: next.state, previous: previous.state }, 'bridge status');
    const change: StatusChange = {
      bridge,
      status: next.state,
      previous: previous.state,
      ...(next.detail === undefined ? {} : { reason: next.detail }),
      report: this.#report,
    };
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        logger.warn(
          { bridge, err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) },
          'bridge status listener threw',
        );
      }
    }
  }
}

function reasonOf(report: BridgeStatusReport): string | undefined {
  return 'reason' in report ? report.reason : undefined;
}

function detailOf(report: BridgeStatusReport): string | undefined {
  return 'detail' in report ? report.detail : undefined;
}

function sideName(side: Side): string {
  return side === 'sink' ? 'target' : side === 'errorDestination' ? 'error destination' : 'source';
}
