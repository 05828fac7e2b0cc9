#!/usr/bin/env node
/**
 * The `jms-gateway` command. `run` starts the gateway on a configuration file (SIGHUP reloads
 * it); `validate` checks one without starting anything; `selector` checks and evaluates
 * selectors offline; `version` prints the version; the rest talk to a running gateway.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { builtinRegistry } from '../../connectors/index.js';
import { ConfigError, type LoadedConfig, loadConfig } from '../config/load-config.js';
import {
  type CheckedConfig,
  DEFAULT_CHECK_TIMEOUT_MS,
  Gateway,
  checkConfigFile,
  checkConnections,
  reloadOnSignal,
  reloadSourceOf,
} from '../gateway/index.js';
import { runLogging } from '../gateway/root-logger.js';
import { type AdminCommand, adminCommand } from './admin-commands.js';
import { selectorCommand } from './selector-command.js';

const USAGE = `usage: jms-gateway <command>

commands:
  run [--config FILE] [--admin-port PORT] [--log-level LEVEL]
                             start the gateway (default config: config/gateway.yaml);
                             SIGHUP reloads the file; SIGINT/SIGTERM stop it, a second
                             signal exits at once
  validate FILE              check a configuration without starting anything; prints ok, or
                             every problem as file:line:col: path: message (exit 1)
  check --connect FILE [--timeout MS]
                             validate, then connect to every broker and check that each
                             bridge's queues, exchanges and topics exist or are declared at
                             connect; prints ok, or every problem as file:line:col (exit 1)
  selector check SELECTOR    check a message selector
  selector eval SELECTOR --message FILE [--body FILE]
                             evaluate a selector against a message given as JSON
  version, --version, -V     print the version

commands for a running gateway (--url or JMS_GATEWAY_ADMIN_URL, token from JMS_GATEWAY_ADMIN_TOKEN):
  status                     destinations and bridges at a glance
  send DESTINATION [--body TEXT | --file FILE | --message MSG.json] [--property k=v ...] [--count N]
  browse QUEUE [--selector SELECTOR] [--limit N] [--json]
  move FROM_QUEUE TO_DESTINATION [--selector SELECTOR] [--limit N]
  replay ERROR_QUEUE [TO_DESTINATION] [--selector SELECTOR] [--limit N]
                             back to each message's origin unless a destination is given
  reload                     re-read the gateway's configuration file and apply it
                             (exit 1 and the problems if it is not valid)`;

/** The package version, from the nearest package.json above this file (works from src/ and dist/). */
async function version(): Promise<string> {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(await readFile(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version: string;
      };
      if (pkg.name === 'jms-gateway') return pkg.version;
    } catch {
      // not here: look one folder up
    }
    if (dir.pathname === '/') return 'unknown';
  }
}

/** Prints each problem of `file`, then how many there are. */
function printProblems(file: string, problems: readonly string[]): void {
  const count = problems.length;
  process.stderr.write(`${problems.join('\n')}\n${count} problem${count === 1 ? '' : 's'} in '${file}'\n`);
}

/** Loads a configuration, or prints why it cannot and returns undefined. */
async function load(file: string): Promise<LoadedConfig | undefined> {
  try {
    return await loadConfig(file, { registry: builtinRegistry });
  } catch (error) {
    if (error instanceof ConfigError) {
      printProblems(file, error.problems);
    } else {
      process.stderr.write(`cannot read configuration '${file}': ${(error as Error).message}\n`);
    }
    return undefined;
  }
}

/** `validate FILE`: everything `run` would refuse, found without connecting to anything. */
async function validate(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string' } },
  });
  const file = positionals[0] ?? values.config;
  if (file === undefined || positionals.length > 1) {
    process.stderr.write(`usage: jms-gateway validate FILE\n`);
    return 2;
  }
  const checked: CheckedConfig = await checkConfigFile(file, builtinRegistry);
  if (!checked.ok) {
    printProblems(file, checked.errors);
    return 1;
  }
  process.stdout.write('ok\n');
  return 0;
}

/** `check --connect FILE`: `validate`, then a dry run against every broker the file names. */
async function check(argv: string[]): Promise<number> {
  const usage = 'usage: jms-gateway check --connect FILE [--timeout MS]\n';
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { connect: { type: 'boolean', default: false }, timeout: { type: 'string' } },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n${usage}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [file] = positionals;
  const timeoutMs = values.timeout === undefined ? DEFAULT_CHECK_TIMEOUT_MS : Number(values.timeout);
  if (file === undefined || positionals.length > 1 || !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    process.stderr.write(usage);
    return 2;
  }
  if (!values.connect) return validate([file]);
  const report = await checkConnections(file, { registry: builtinRegistry, timeoutMs });
  if (report.notes.length > 0)
    process.stdout.write(`${report.notes.map((note) => `note: ${note}`).join('\n')}\n`);
  if (report.problems.length > 0) {
    printProblems(file, report.problems);
    return 1;
  }
  process.stdout.write('ok\n');
  return 0;
}

async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string', default: 'config/gateway.yaml' },
      'admin-port': { type: 'string' },
      'log-level': { type: 'string' },
    },
  });
  const adminPort = values['admin-port'] === undefined ? undefined : Number(values['admin-port']);
  if (adminPort !== undefined && !(Number.isInteger(adminPort) && adminPort >= 0 && adminPort <= 65535)) {
    process.stderr.write(
      `--admin-port '${values['admin-port']}' is not a port (expected an integer 0..65535)\n`,
    );
    return 2;
  }
  const loaded = await load(values.config);
  if (!loaded) return 1;
  const { config } = loaded;
  const logging = runLogging(config.log, values['log-level']);
  if (!logging.ok) {
    process.stderr.write(`${logging.message}\n`);
    return logging.exitCode;
  }
  const { logger, mask } = logging;
  let gateway: Gateway;
  try {
    gateway = await Gateway.start(config, logger, {
      mask,
      ...(adminPort === undefined ? {} : { adminPort }),
      loadConfig: () => reloadSourceOf(values.config, builtinRegistry),
    });
  } catch (error) {
    logger.error({ err: error }, 'cannot start the gateway');
    return 1;
  }
  logger.info(
    {
      config: values.config,
      destinations: gateway.engine.destinations().length,
      bridges: gateway.bridgeNames.length,
      admin: gateway.adminUrl,
      version: await version(),
    },
    'gateway ready',
  );

  process.on('SIGHUP', reloadOnSignal(gateway, logger));
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      const deadlineMs = gateway.shutdownDeadlineMs;
      logger.info({ signal, deadlineMs }, 'stopping');
      gateway.stop(deadlineMs).then(
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
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
      return run(rest);
    case 'validate':
      return validate(rest);
    case 'check':
      return check(rest);
    case 'selector':
      return selectorCommand(rest, {
        stdout: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
        stderr: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
        readFile: (path) => readFile(path, 'utf8'),
      });
    case 'version':
    case '--version':
    case '-V':
      process.stdout.write(`${await version()}\n`);
      return 0;
    case 'status':
    case 'send':
    case 'browse':
    case 'move':
    case 'replay':
    case 'reload':
      return adminCommand(command satisfies AdminCommand, rest, {
        stdout: (s) => process.stdout.write(`${s}\n`),
        stderr: (s) => process.stderr.write(`${s}\n`),
        readFile: (path) => readFile(path, 'utf8'),
        env: process.env,
        fetch,
      });
    case undefined:
    case 'help':
    case '--help':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command '${command}'\n${USAGE}\n`);
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
// Whatever a client library may leave scheduled (a reconnect timer) must not keep a stopped gateway alive.
setTimeout(() => process.exit(), 2_000).unref();
