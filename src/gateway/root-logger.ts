/**
 * The process's root logger: pino at the level the operator chose, JSON lines (or pino-pretty on
 * a terminal), and every line masked on its way out, so no credential reaches stdout whichever
 * part of the gateway or of a broker client logged it.
 */
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { LOG_LEVELS, type LogFormat, type LogLevel } from '../config/gateway-config.js';
import { SecretMask } from './secret-mask.js';

/** The environment variable that overrides `log.level`. */
export const LOG_LEVEL_ENV = 'LOG_LEVEL';

/** Where log lines go: stdout by default. */
export interface LogOutput {
  write(text: string): unknown;
  /** Whether a person is watching (a terminal): `log.format: auto` writes pretty lines then. */
  readonly isTTY?: boolean;
}

/** What the root logger is built from. */
export interface RootLoggerOptions {
  /** `log.level` of the configuration. */
  readonly level: LogLevel;
  /** `log.format` of the configuration. */
  readonly format: LogFormat;
  /** The credentials to mask in every line; the gateway adds to it as it learns them. */
  readonly mask: SecretMask;
  /** `run --log-level`: wins over the environment and the configuration. */
  readonly levelOverride?: string;
  /** Where LOG_LEVEL and NODE_ENV come from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Default: stdout, written synchronously (as pino does), so no line is lost at exit. */
  readonly output?: LogOutput;
}

/** A log level given outside the configuration file that is not one. */
export class LogLevelError extends Error {
  constructor(where: string, value: string) {
    super(`${where} '${value}' is not a log level (expected one of ${LOG_LEVELS.join(', ')})`);
    this.name = 'LogLevelError';
  }
}

/**
 * The level to log at: `--log-level`, else LOG_LEVEL, else `log.level`. Throws a
 * {@link LogLevelError} for a value that is not a level (an empty LOG_LEVEL counts as unset).
 */
export function effectiveLogLevel(
  configured: LogLevel,
  env: Readonly<Record<string, string | undefined>>,
  override?: string,
): LogLevel {
  const check = (where: string, value: string): LogLevel => {
    const level = value.trim().toLowerCase();
    if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new LogLevelError(where, value);
    return level as LogLevel;
  };
  if (override !== undefined) return check('--log-level', override);
  const fromEnv = env[LOG_LEVEL_ENV];
  if (fromEnv !== undefined && fromEnv.trim() !== '') return check(LOG_LEVEL_ENV, fromEnv);
  return configured;
}

/** Whether lines are written for a person: `pretty`, or `auto` on a terminal outside production. */
export function writesPretty(
  format: LogFormat,
  output: LogOutput,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (format !== 'auto') return format === 'pretty';
  return output.isTTY === true && env.NODE_ENV !== 'production';
}

/** The root logger. Throws a {@link LogLevelError} when `--log-level` or LOG_LEVEL is not a level. */
export function createRootLogger(options: RootLoggerOptions): Logger {
  const env = options.env ?? process.env;
  const output = options.output ?? standardOutput();
  const level = effectiveLogLevel(options.level, env, options.levelOverride);
  const prettify = writesPretty(options.format, output, env)
    ? pinoPretty.prettyFactory({
        colorize: output.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        ignore: 'pid,hostname',
      })
    : undefined;
  const { mask } = options;
  const stream = {
    write(line: string): void {
      const masked = mask.mask(line);
      output.write(prettify ? prettify(masked) : masked);
    },
  };
  return pino({ name: 'jms-gateway', level }, stream);
}

/** What `run` logs with, or the one line saying why it cannot start and the exit code to end with. */
export type RunLogging =
  | { readonly ok: true; readonly logger: Logger; readonly mask: SecretMask }
  | { readonly ok: false; readonly message: string; readonly exitCode: 1 | 2 };

/**
 * The root logger of `jms-gateway run` on stdout, with a new mask for the gateway to fill. A bad
 * `--log-level` ends the command with 2 (a bad option), a bad LOG_LEVEL with 1.
 */
export function runLogging(
  settings: { level: LogLevel; format: LogFormat },
  levelOverride?: string,
): RunLogging {
  const mask = new SecretMask();
  try {
    const logger = createRootLogger({
      ...settings,
      mask,
      ...(levelOverride === undefined ? {} : { levelOverride }),
    });
    return { ok: true, logger, mask };
  } catch (error) {
    if (!(error instanceof LogLevelError)) throw error;
    return { ok: false, message: error.message, exitCode: levelOverride === undefined ? 1 : 2 };
  }
}

/** File descriptor 1 through pino's synchronous destination; a terminal if stdout is one. */
function standardOutput(): LogOutput {
  const destination = pino.destination({ dest: 1, sync: true });
  return { write: (text) => destination.write(text), isTTY: process.stdout.isTTY };
}
