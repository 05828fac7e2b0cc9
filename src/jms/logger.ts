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
  /** Whether records of `level` are written (pino's method); without it, every level counts as written. */
  isLevelEnabled?(level: 'error' | 'warn' | 'info' | 'debug'): boolean;
}

/** A logger that drops everything (the default for an embedded engine). */
export const silentLogger: EngineLogger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
};

/**
 * Whether `logger` writes debug records. Debug is per message: its fields (ids built from their
 * parts, destination names) are worth building only for a logger that keeps them.
 */
export function logsDebug(logger: EngineLogger): boolean {
  if (logger === silentLogger) return false;
  return logger.isLevelEnabled?.('debug') ?? true;
}
