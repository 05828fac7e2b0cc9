/** The bridge runtime: what the config layer, the admin API and embedding programs use. */
export { Bridge, type BridgeOptions } from './bridge.js';
export {
  type BridgeConfig,
  type ResolvedBridgeConfig,
  type QualityOfService,
  type OrderingMode,
  type RetryPolicy,
  BRIDGE_DEFAULTS,
  resolveBridgeConfig,
} from './bridge-config.js';
export type {
  BridgeStatus,
  BridgeStatusReport,
  StatusReason,
  FailedReason,
  RetryingReason,
  ReconnectingReason,
  BridgeCounters,
  StatusChange,
  StatusListener,
} from './bridge-status.js';
export {
  type BridgeLatency,
  type LatencySnapshot,
  LATENCY_BOUNDS_SECONDS,
  LatencyHistogram,
} from './latency-histogram.js';
export { type RetryDelay, type ReconnectPolicy, retryDelayMs, reconnectDelayMs } from './backoff.js';
export {
  type DuplicateWindow,
  type MemoryDuplicateWindowOptions,
  MemoryDuplicateWindow,
  type StoreDuplicateWindowOptions,
  type StagedId,
  type WindowBounds,
  StoreDuplicateWindow,
} from './duplicate-window.js';
export {
  InternalSource,
  InternalSink,
  type InternalSourceConfig,
  type InternalSinkConfig,
} from './internal-endpoint.js';
export {
  ERROR_ORIGIN,
  ERROR_BRIDGE,
  ERROR_REASON,
  ERROR_DELIVERY_COUNT,
  ERROR_TIME,
} from './error-message.js';
