/**
 * The logging the engine needs, shaped like pino's so the CLI can pass a pino child logger
 * without the engine depending on pino. `error` = an operator must act, `warn` = recovered,
 * `info` = lifecycle, `debug` = per message. Bodies and secrets are never logged.
 */
export interface EngineLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}

/** A logger that drops everything (the default for an embedded engine). */
export const silentLogger: EngineLogger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
};
