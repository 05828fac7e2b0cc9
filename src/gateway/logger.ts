/** The logging the gateway needs: the engine's levels plus child loggers, as pino's. */
import { redact } from '../config/env.js';
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

type Level = 'error' | 'warn' | 'info' | 'debug';

/**
 * A logger that masks the configuration's secrets (values from `${ENV}` references) in messages,
 * string fields and errors, whoever logs them: an error from a broker client may quote a URL.
 * The set is read at each call, so secrets a reload adds to it are masked from then on.
 */
export function redactingLogger(logger: GatewayLogger, secrets: ReadonlySet<string>): GatewayLogger {
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value, secrets);
    if (value instanceof Error) {
      const copy = new Error(redact(value.message, secrets));
      copy.name = value.name;
      if (value.stack !== undefined) copy.stack = redact(value.stack, secrets);
      return copy;
    }
    return value;
  };
  const at =
    (level: Level) =>
    (fields: Record<string, unknown>, message: string): void => {
      if (secrets.size === 0) return logger[level](fields, message);
      const cleaned: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fields)) cleaned[key] = clean(value);
      logger[level](cleaned, redact(message, secrets));
    };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    child: (bindings) => redactingLogger(logger.child(bindings), secrets),
  };
}
