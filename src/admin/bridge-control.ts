/** What the admin API needs of the running bridges; the gateway supplies it, tests fake it. */
import type { BridgeLatency } from '../bridge/index.js';

export interface BridgeView {
  name: string;
  /** connected, reconnecting, paused, retrying, failed, stopped, ... */
  status: string;
  /** The status with its reason, when the gateway gives it (docs/bridges.md, "Status"). */
  statusReport?: BridgeStatusView | undefined;
  /** in, out, retried, deadLettered, dropped, reconnects, inFlight, ... */
  counters: Readonly<Record<string, number>>;
  lastError?: string | undefined;
  /** Send and end-to-end latency histograms, exported by /metrics. */
  latency?: BridgeLatency;
  /** The source and the target, described without secrets (`amqp queue 'orders'`). */
  source?: string;
  target?: string;
}

/**
 * A bridge's status with its reason, as JSON: `{state: 'failed', reason: 'unit-stalled', detail,
 * since}`. `reason` and `detail` only for the states that have one (failed, retrying, reconnecting).
 */
export interface BridgeStatusView {
  readonly state: string;
  /** failed: misconfigured, unit-stalled, runtime-error; retrying: retry-delay, back-off, error-destination-unavailable; reconnecting: connection-lost. */
  readonly reason?: string;
  /** What happened, in words (credentials masked). */
  readonly detail?: string;
  /** Since when the bridge is in this state, ISO 8601. */
  readonly since: string;
}

/** A status report (clock ms) as the admin API shows it, its detail passed through `mask`. */
export function statusView(
  report: {
    readonly state: string;
    readonly reason?: string;
    readonly detail?: string;
    readonly since: number;
  },
  mask: (text: string) => string,
): BridgeStatusView {
  return {
    state: report.state,
    ...(report.reason === undefined ? {} : { reason: report.reason }),
    ...(report.detail === undefined ? {} : { detail: mask(report.detail) }),
    since: new Date(report.since).toISOString(),
  };
}

/** The status with its reason in a few words, `failed (unit-stalled)`, for text output. */
export function statusWithReason(view: Pick<BridgeView, 'status' | 'statusReport'>): string {
  const reason = view.statusReport?.reason;
  return reason === undefined ? view.status : `${view.status} (${reason})`;
}

export interface BridgeControl {
  list(): BridgeView[];
  pause(name: string): Promise<void>;
  resume(name: string): Promise<void>;
  restart(name: string): Promise<void>;
}

/** No bridges: for a gateway that runs none. */
export const noBridges: BridgeControl = {
  list: () => [],
  pause: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
  resume: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
  restart: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
};
