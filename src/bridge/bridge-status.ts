/** What a bridge shows the admin API, metrics and tests (BRG-5, DESIGN "Errors, logs, status"). */

/**
 * `stopped`: not running. `connecting`: starting, endpoints not yet connected. `connected`:
 * moving messages. `reconnecting`: a connection was lost (either side) and is being re-made with
 * backoff. `paused`: not reading the source; in-flight messages finish. `retrying`: some message
 * is waiting for its retry delay. `failed`: an operator must act: an endpoint's configuration is
 * wrong, or a message reached its retry limit with no error destination (`onLimit: stall`).
 */
export type BridgeStatus =
  'stopped' | 'connecting' | 'connected' | 'reconnecting' | 'paused' | 'retrying' | 'failed';

/**
 * Why a bridge is `failed`. `misconfigured`: an endpoint's configuration is wrong (a queue that
 * does not exist, bad credentials); fix it and restart the bridge. `unit-stalled`: an ordering
 * unit holds a message that reached its retry limit and could not be parked (no error
 * destination with `onLimit: stall`, or the error destination refuses it too); fix the target and
 * call resume(). `runtime-error`: the bridge's reader hit a bug; restart the bridge.
 */
export type FailedReason = 'misconfigured' | 'unit-stalled' | 'runtime-error';

/**
 * Why a bridge is `retrying`. `retry-delay`: a message failed and waits for its retry delay.
 * `back-off`: the target asked the bridge to back off (a throttled or full destination).
 * `error-destination-unavailable`: a message waits to be moved to an error destination that cannot take it now.
 */
export type RetryingReason = 'retry-delay' | 'back-off' | 'error-destination-unavailable';

/** Why a bridge is `reconnecting`: a connection (source, target or error destination) was lost. */
export type ReconnectingReason = 'connection-lost';

/** The reason that goes with a status, for the states that have one. */
export type StatusReason = FailedReason | RetryingReason | ReconnectingReason;

/** A bridge's status with its reason: what `/bridges`, metrics, the CLI and `/ready` show. */
export type BridgeStatusReport =
  | {
      readonly state: 'stopped' | 'connecting' | 'connected' | 'paused';
      /** When the bridge entered this state, clock ms. */
      readonly since: number;
    }
  | {
      readonly state: 'failed';
      readonly reason: FailedReason;
      /** What happened, in words (the error, the message's retry limit). */
      readonly detail: string;
      readonly since: number;
    }
  | {
      readonly state: 'retrying';
      readonly reason: RetryingReason;
      readonly detail: string;
      readonly since: number;
    }
  | {
      readonly state: 'reconnecting';
      readonly reason: ReconnectingReason;
      /** Which side was lost, and the error. */
      readonly detail: string;
      readonly since: number;
    };

/** Counts since the bridge was created. */
export interface BridgeCounters {
  /** Deliveries read from the source. */
  readonly in: number;
  /** Messages the target confirmed. */
  readonly out: number;
  /** Messages the bridge selector did not match (acknowledged, not sent). */
  readonly filtered: number;
  /** Retries of a failed send that counted toward the retry limit. */
  readonly retried: number;
  /** Messages moved to the error destination (limit reached, or poison). */
  readonly deadLettered: number;
  /** Undeliverable messages given up with `onLimit: drop` and no error destination (configured loss). */
  readonly discarded: number;
  /** At-most-once messages acknowledged at the source that never reached the target: 0 otherwise. */
  readonly dropped: number;
  /** Exactly-once messages dropped because their JMSMessageID was in the duplicate window. */
  readonly duplicates: number;
  /**
   * Messages sent again that may already have been at the target: the source delivered them
   * again (after a restart or a lost connection), or an earlier send of them ended with the
   * connection lost, and the target cannot tell (not exactly-once into an engine destination or a
   * transactional Kafka topic). An upper bound on the duplicates the target may hold.
   */
  readonly possibleDuplicates: number;
  /** Connections re-established after a loss (either side). */
  readonly reconnects: number;
  /** Deliveries read and not yet finished (now). */
  readonly inFlight: number;
  /**
   * How far the bridge is behind its source (now): `inFlight` plus the source's backlog when
   * the source knows it (Kafka: behind the high watermark; internal queue or durable
   * subscription: its messages not yet received). See docs/bridges.md.
   */
  readonly lag: number;
  /** The last failure seen, if any. */
  readonly lastError?: { readonly message: string; readonly at: number };
}

/** A change of status, passed to status listeners. */
export interface StatusChange {
  readonly bridge: string;
  readonly status: BridgeStatus;
  readonly previous: BridgeStatus;
  /** Why, when the runtime knows (the error that caused a reconnect or a failure): the report's detail. */
  readonly reason?: string;
  /** The new status with its reason. */
  readonly report: BridgeStatusReport;
}

/** Receives status changes; must not throw. */
export type StatusListener = (change: StatusChange) => void;
