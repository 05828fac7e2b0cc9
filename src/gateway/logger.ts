/** The logging the gateway needs: the engine's levels plus child loggers, as pino's. */
import type { EngineLogger } from '../jms/logger.js';
import type { SecretMask } from './secret-mask.js';

/** A pino-shaped logger; the CLI passes its root pino logger. */
export interface GatewayLogger extends EngineLogger {
  child(bindings: Record<string, unknown>): GatewayLogger;
  /** pino's: whether a line at `level` would be written (lines that would not are not built). */
  isLevelEnabled?(level: string): boolean;
}

/** A logger that drops everything (dry runs, tests). */
export const silentGatewayLogger: GatewayLogger = {
  error: () => {},
  warn: () => {},
  info: () => {},
  debug: () => {},
  child: () => silentGatewayLogger,
};

type Level = 'error' | 'warn' | 'info' | 'debug';

/**
 * A logger that masks credentials (the mask's secret values, URL passwords) in messages, string
 * fields and errors, whoever logs them: an error from a broker client may quote a URL. The mask
 * may grow (a reload adds the secrets of the new configuration); what it holds at each call counts.
 */
export function redactingLogger(logger: GatewayLogger, mask: SecretMask): GatewayLogger {
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return mask.mask(value);
    if (value instanceof Error) {
      const copy = new Error(mask.mask(value.message));
      copy.name = value.name;
      if (value.stack !== undefined) copy.stack = mask.mask(value.stack);
      return copy;
    }
    return value;
  };
  const at =
    (level: Level) =>
    (fields: Record<string, unknown>, message: string): void => {
      if (logger.isLevelEnabled?.(level) === false) return;
      const cleaned: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fields)) cleaned[key] = clean(value);
      logger[level](cleaned, mask.mask(message));
    };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (bindings) => redactingLogger(logger.child(bindings), mask),
    ...(logger.isLevelEnabled ? { isLevelEnabled: (level: string) => logger.isLevelEnabled!(level) } : {}),
  };
}
