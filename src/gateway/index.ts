/** The gateway composition: what the CLI and embedding programs use. */
export {
  Gateway,
  type GatewayStartOptions,
  type GatewayBridgeView,
  type BuildProblem,
  type ReloadSource,
} from './gateway.js';
export { type CheckedConfig, checkConfigFile, reloadSourceOf } from './config-file.js';
export {
  type ConnectCheckReport,
  type ConnectCheckOptions,
  DEFAULT_CHECK_TIMEOUT_MS,
  checkConnections,
} from './check-connect.js';
export { reloadOnSignal } from './reload-on-signal.js';
export { HaGateway, startHighAvailability } from './ha-gateway.js';
export { type ReloadPlan, type BridgeChange, type RunningState, planReload } from './reload-plan.js';
export { type GatewayLogger, redactingLogger, silentGatewayLogger } from './logger.js';
export { SecretMask } from './secret-mask.js';
export { type XPathEvaluator, createXPathEvaluator } from '../spi/xpath-evaluator.js';
export { type GatewayConnectorContext, createSource, createSink } from './endpoints.js';
