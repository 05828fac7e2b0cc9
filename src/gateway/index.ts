/** The gateway composition: what the CLI and embedding programs use. */
export { Gateway, type GatewayStartOptions, type GatewayBridgeView, type BuildProblem } from './gateway.js';
export { type GatewayLogger, redactingLogger, silentGatewayLogger } from './logger.js';
export { type XPathEvaluator, createXPathEvaluator } from './xpath-evaluator.js';
export { type GatewayConnectorContext, createSource, createSink } from './endpoints.js';
