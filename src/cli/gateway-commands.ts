/**
 * `jms-gateway run`, `validate` and `check`: the commands that load a configuration file.
 * The gateway's modules are imported when one of them runs, so the other commands (help,
 * completion, the admin commands) start without loading the connectors.
 */
import type { Command } from 'commander';
import type { Gateway, HaGateway } from '../gateway/index.js';
import type { CliIo } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';
import { LOG_LEVELS } from '../config/gateway-config.js';
import { DEFAULT_CHECK_TIMEOUT_MS } from '../gateway/check-connect.js';
import { choiceValue, integerValue } from './option-values.js';
import { packageVersion } from './version.js';

/** The options of `run`; a new one is declared in `registerRun` and read in `runGateway`. */
export interface RunOptions {
  /** The configuration file; default config/gateway.yaml. */
  config: string;
  /** The admin API's port, replacing `admin.port` of the file; 0 picks a free one. */
  adminPort?: number;
  /** The log level, over LOG_LEVEL and `log.level` of the file. */
  logLevel?: string;
}

/** The options of `check`. */
interface CheckOptions {
  /** Connect to every broker, not only validate. */
  connect?: boolean;
  /** How long each broker may take to answer, ms. */
  timeout?: number;
}

/** Adds `run`, `validate` and `check` to `program`. */
export function registerGatewayCommands(program: Command, run: CommandRunner, io: CliIo): void {
  program
    .command('run')
    .description('start the gateway on a configuration file')
    .option('-c, --config <file>', 'the configuration file', 'config/gateway.yaml')
    .option(
      '--admin-port <port>',
      "the admin API's port, instead of admin.port of the file (0: any free port)",
      integerValue(0, 65535),
    )
    .option(
      '--log-level <level>',
      `the log level, over LOG_LEVEL and log.level of the file (${LOG_LEVELS.join(', ')})`,
      choiceValue(LOG_LEVELS),
    )
    .addHelpText(
      'after',
      `
Logs JSON lines on standard output (readable lines on a terminal, unless NODE_ENV=production
or log.format says otherwise). SIGHUP reloads the file; SIGINT/SIGTERM drain and stop the
gateway (exit 0 when clean); a second signal exits at once (exit 1).

Examples:
  $ jms-gateway run
  $ jms-gateway run --config /etc/jms-gateway/gateway.yaml --admin-port 9000
  $ LOG_LEVEL=debug jms-gateway run --config gateway.yaml`,
    )
    .action(run((options: RunOptions) => runGateway(options)));

  program
    .command('validate')
    .description('check a configuration file without starting or connecting to anything')
    .argument('[file]', 'the configuration file (or --config FILE)')
    .option('-c, --config <file>', 'the configuration file')
    .addHelpText(
      'after',
      `
Prints ok (exit 0), or every problem as file:line:col: path: message (exit 1).

Examples:
  $ jms-gateway validate gateway.yaml
  $ jms-gateway validate --config /config/gateway.yaml`,
    )
    .action(
      run(async (file: string | undefined, options: { config?: string }) => {
        if (file !== undefined && options.config !== undefined && file !== options.config)
          return usage(program, io, `give the file once: '${file}' or --config '${options.config}'`);
        const path = file ?? options.config;
        if (path === undefined) return usage(program, io, "missing configuration file: 'validate FILE'");
        return validateFile(path, io);
      }),
    );

  program
    .command('check')
    .description('validate a configuration file, and with --connect check it against the real brokers')
    .argument('<file>', 'the configuration file')
    .option(
      '--connect',
      "connect to every broker and check that each bridge's queues, exchanges and topics exist (or are declared at connect)",
    )
    .option(
      '--timeout <ms>',
      'how long each broker may take to answer',
      integerValue(1),
      DEFAULT_CHECK_TIMEOUT_MS,
    )
    .addHelpText(
      'after',
      `
Prints ok (exit 0), or every problem as file:line:col: path: message (exit 1). Without --connect
it is validate. MQTT topics cannot be checked (a note says so); the broker's connection is.

Examples:
  $ jms-gateway check --connect config/examples/xml-orders-rabbitmq-to-kafka.yaml
  $ jms-gateway check --connect gateway.yaml --timeout 5000`,
    )
    .action(
      run(async (file: string, options: CheckOptions) =>
        options.connect === true
          ? checkConnect(file, options.timeout ?? DEFAULT_CHECK_TIMEOUT_MS, io)
          : validateFile(file, io),
      ),
    );
}

function usage(program: Command, io: CliIo, problem: string): number {
  io.stderr(`error: ${problem} (see '${program.name()} validate --help')\n`);
  return 2;
}

/** `check --connect FILE`: `validate`, then a dry run against every broker the file names. */
async function checkConnect(file: string, timeoutMs: number, io: CliIo): Promise<number> {
  const [{ builtinRegistry }, { checkConnections }] = await Promise.all([
    import('../../connectors/index.js'),
    import('../gateway/index.js'),
  ]);
  const report = await checkConnections(file, { registry: builtinRegistry, timeoutMs });
  if (report.notes.length > 0) io.stdout(`${report.notes.map((note) => `note: ${note}`).join('\n')}\n`);
  if (report.problems.length > 0) {
    printProblems(io, file, report.problems);
    return 1;
  }
  io.stdout('ok\n');
  return 0;
}

/** Prints each problem of `file`, then how many there are. */
function printProblems(io: CliIo, file: string, problems: readonly string[]): void {
  const count = problems.length;
  io.stderr(`${problems.join('\n')}\n${count} problem${count === 1 ? '' : 's'} in '${file}'\n`);
}

/** `validate FILE`: everything `run` would refuse, found without connecting to anything. */
async function validateFile(file: string, io: CliIo): Promise<number> {
  const [{ builtinRegistry }, { checkConfigFile }] = await Promise.all([
    import('../../connectors/index.js'),
    import('../gateway/index.js'),
  ]);
  const checked = await checkConfigFile(file, builtinRegistry);
  if (!checked.ok) {
    printProblems(io, file, checked.errors);
    return 1;
  }
  io.stdout('ok\n');
  return 0;
}

/** Runs the gateway until a signal stops it; resolves to the exit code. */
async function runGateway(options: RunOptions): Promise<number> {
  const [{ runLogging }, { builtinRegistry }, { ConfigError, loadConfig }, gatewayModule] = await Promise.all(
    [
      import('../gateway/root-logger.js'),
      import('../../connectors/index.js'),
      import('../config/load-config.js'),
      import('../gateway/index.js'),
    ],
  );
  const { reloadOnSignal, reloadSourceOf } = gatewayModule;
  let loaded;
  try {
    loaded = await loadConfig(options.config, { registry: builtinRegistry });
  } catch (error) {
    if (error instanceof ConfigError) {
      const count = error.problems.length;
      process.stderr.write(
        `${error.problems.join('\n')}\n${count} problem${count === 1 ? '' : 's'} in '${options.config}'\n`,
      );
    } else {
      process.stderr.write(`cannot read configuration '${options.config}': ${(error as Error).message}\n`);
    }
    return 1;
  }
  const { config } = loaded;
  const logging = runLogging(config.log, options.logLevel);
  if (!logging.ok) {
    process.stderr.write(`${logging.message}\n`);
    return logging.exitCode;
  }
  const { logger, mask } = logging;
  const startOptions = {
    mask,
    ...(options.adminPort === undefined ? {} : { adminPort: options.adminPort }),
    loadConfig: () => reloadSourceOf(options.config, builtinRegistry),
  };
  let gateway: Gateway | HaGateway;
  try {
    gateway = config.ha.enabled
      ? await gatewayModule.startHighAvailability(config, logger, startOptions)
      : await gatewayModule.Gateway.start(config, logger, startOptions);
  } catch (error) {
    logger.error({ err: error }, 'cannot start the gateway');
    return 1;
  }
  const version = await packageVersion();
  // The handlers come before the ready line: whoever waits for it may signal at once.
  process.on('SIGHUP', reloadOnSignal(gateway, logger));
  const stopped = new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      const deadlineMs = gateway.shutdownDeadlineMs;
      logger.info({ signal, deadlineMs }, 'stopping');
      (gateway instanceof gatewayModule.Gateway ? gateway.stop(deadlineMs) : gateway.stop()).then(
        ({ clean }) => {
          logger.info({ clean }, 'stopped');
          resolve(clean ? 0 : 1);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'stop failed');
          resolve(1);
        },
      );
    };
    process.on('SIGINT', () => stop('SIGINT'));
    process.on('SIGTERM', () => stop('SIGTERM'));
  });
  logger.info(
    gateway instanceof gatewayModule.Gateway
      ? {
          config: options.config,
          destinations: gateway.engine.destinations().length,
          bridges: gateway.bridgeNames.length,
          admin: gateway.adminUrl,
          version,
        }
      : // An instance of an active/standby group starts as a standby: its role follows.
        {
          config: options.config,
          role: gateway.role,
          instance: gateway.instanceId,
          admin: gateway.adminUrl,
          version,
        },
    'gateway ready',
  );
  return stopped;
}
