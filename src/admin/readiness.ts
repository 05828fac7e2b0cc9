/** What `GET /ready` answers: whether the gateway serves, and which bridges keep it from it. */

/** An instance's role under active/standby high availability. */
export type HaRoleName = 'active' | 'standby' | 'activating' | 'stepping-down' | 'stopped';

/** A failed bridge, as `/ready` names it. */
export interface FailedBridge {
  readonly bridge: string;
  readonly status: 'failed';
  /**
   * What kind of failure: `misconfigured` (fix the endpoint, restart the bridge), `unit-stalled`
   * (fix the target, resume the bridge) or `runtime-error` (restart the bridge).
   */
  readonly statusReason: 'misconfigured' | 'unit-stalled' | 'runtime-error';
  /** Why it failed, in words (credentials masked). */
  readonly reason: string;
  /** When it failed, ISO 8601. */
  readonly since: string;
  /** `required`: it makes the gateway unready; `ignored`: listed only. */
  readonly readiness: 'required' | 'ignored';
}

/** The body of `/ready`: 200 when `ready`, 503 otherwise. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** With high availability: this instance's role (only the active one is ready). */
  readonly role?: HaRoleName;
  /** Why it is not ready when no bridge is the cause (`the gateway is stopping`). */
  readonly reason?: string;
  /** Every failed bridge, whether its readiness is required or ignored. */
  readonly failed: readonly FailedBridge[];
}

/** A plain yes or no (an admin server without bridges) as a report. */
export function readinessReport(ready: boolean | ReadinessReport): ReadinessReport {
  if (typeof ready !== 'boolean') return ready;
  return ready ? { ready, failed: [] } : { ready, reason: 'the gateway is starting or stopping', failed: [] };
}
