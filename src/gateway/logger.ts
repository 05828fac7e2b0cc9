/** The logging the gateway needs: the engine's levels plus child loggers, as pino's. */
import type { EngineLogger } from '../jms/logger.js';

/** A pino-shaped logger; the CLI passes its root pino logger. */
export interface GatewayLogger extends EngineLogger {
  child(bindings: Record<string, unknown>): GatewayLogger;
}

/** A logger that drops everything (dry runs, tests). */
export const silentGatewayLogger: GatewayLogger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  child: () => silentGatewayLogger,
};
