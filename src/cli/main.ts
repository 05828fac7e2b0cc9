#!/usr/bin/env node
/**
 * The `jms-gateway` command. `run` starts the gateway on a configuration file; `selector` checks
 * and evaluates selectors offline; `version` prints the version.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ConfigError, loadConfig } from '../config/load-config.js';
import { startAdminServer } from '../admin/server.js';
import { JmsEngine } from '../jms/engine.js';
import { MemoryStore } from '../store/memory-store.js';
import { selectorCommand } from './selector-command.js';

const USAGE = `usage: jms-gateway <command>

commands:
  run [--config FILE]        start the gateway (default config: config/gateway.yaml)
  selector check SELECTOR    check a message selector
  selector eval SELECTOR --message FILE [--body FILE]
                             evaluate a selector against a message given as JSON
  version                    print the version`;

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

async function run(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { config: { type: 'string', default: 'config/gateway.yaml' }, 'admin-port': { type: 'string' } },
  });
  const logger = pino({ name: 'jms-gateway' });
  let config;
  try {
    config = await loadConfig(values.config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    process.stderr.write(`cannot read configuration '${values.config}': ${(error as Error).message}\n`);
    return 1;
  }
  const engine = await JmsEngine.open({
    store: new MemoryStore(),
    logger: logger.child({ component: 'engine' }),
  });
  for (const queue of config.destinations.queues) await engine.createQueue(queue.name, queue.options);
  for (const topic of config.destinations.topics) await engine.createTopic(topic.name, topic.options);
  let admin;
  try {
    admin = await startAdminServer({
      engine,
      host: config.admin.host,
      port: values['admin-port'] !== undefined ? Number(values['admin-port']) : config.admin.port,
      token: process.env.JMS_GATEWAY_ADMIN_TOKEN,
      logger: logger.child({ component: 'admin' }),
    });
  } catch (error) {
    logger.error({ err: error }, 'cannot start the admin API');
    await engine.close();
    return 1;
  }
  logger.info(
    {
      config: values.config,
      destinations: engine.destinations().length,
      admin: admin.url,
      version: await version(),
    },
    'gateway ready',
  );

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) {
        logger.warn({ signal }, 'second signal: exiting now');
        process.exit(1);
      }
      stopping = true;
      logger.info({ signal }, 'stopping');
      void admin
        .close()
        .then(() => engine.close())
        .then(() => {
          logger.info('stopped');
          resolve(0);
        });
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
    case 'selector':
      return selectorCommand(rest, {
        stdout: (s) => process.stdout.write(s.endsWith('\n') ? s : `${s}\n`),
        stderr: (s) => process.stderr.write(s.endsWith('\n') ? s : `${s}\n`),
        readFile: (path) => readFile(path, 'utf8'),
      });
    case 'version':
      process.stdout.write(`${await version()}\n`);
      return 0;
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
