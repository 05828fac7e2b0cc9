/**
 * When and why each bridge failed, for `/ready`: a bridge knows that it is failed, the gateway
 * keeps since when (its clock) and the reason the runtime gave at the change.
 */
import type { Bridge } from '../bridge/index.js';
import type { Clock } from '../jms/clock.js';

/** A failure: since when (clock ms) and why. */
export interface BridgeFailure {
  readonly since: number;
  readonly reason: string;
}

/** Watches bridges' status changes and remembers the current failure of each. */
export class BridgeFailures {
  readonly #clock: Clock;
  readonly #failures = new WeakMap<Bridge, BridgeFailure>();
  readonly #watched = new WeakSet<Bridge>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Starts watching `bridge` (once however often it is called: a restart starts it again). */
  watch(bridge: Bridge): void {
    if (this.#watched.has(bridge)) return;
    this.#watched.add(bridge);
    bridge.onStatusChange(({ status, previous, reason }) => {
      if (status !== 'failed') this.#failures.delete(bridge);
      else if (previous !== 'failed')
        this.#failures.set(bridge, {
          since: this.#clock.now(),
          reason: reason ?? bridge.counters.lastError?.message ?? 'no reason given',
        });
    });
  }

  /** The failure of `bridge` while its status is failed. */
  of(bridge: Bridge): BridgeFailure | undefined {
    if (bridge.status !== 'failed') return undefined;
    return (
      this.#failures.get(bridge) ?? {
        since: this.#clock.now(),
        reason: bridge.counters.lastError?.message ?? 'no reason given',
      }
    );
  }
}
