/**
 * When and why each bridge failed, for `/ready`: the bridge's status report says it (its
 * status unit keeps since when, by the gateway's clock, and why).
 */
import type { Bridge, FailedReason } from '../bridge/index.js';

/** A failure: since when (clock ms), what kind and what happened. */
export interface BridgeFailure {
  readonly since: number;
  /** `misconfigured`, `unit-stalled` or `runtime-error` (docs/bridges.md, "Status"). */
  readonly kind: FailedReason;
  /** What happened, in words: the error, or the message a stalled unit holds and why. */
  readonly reason: string;
}

/** The failure of `bridge` while its status is failed. */
export function failureOf(bridge: Bridge): BridgeFailure | undefined {
  const report = bridge.statusReport;
  if (report.state !== 'failed') return undefined;
  return { since: report.since, kind: report.reason, reason: report.detail };
}
