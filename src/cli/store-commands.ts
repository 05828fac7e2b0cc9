/**
 * `jms-gateway store migrate`: creates a PostgreSQL store's schema or applies its pending
 * migrations, for a gateway run with `store.migrate: false` (whose start then never changes the
 * database's layout).
 */
import type { Command } from 'commander';
import type { CliIo } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';

/** Adds `store` and its subcommands to `program`. */
export function registerStoreCommands(program: Command, run: CommandRunner, io: CliIo): void {
  const store = program.command('store').description("work on the gateway's store");
  store
    .command('migrate')
    .description('create the PostgreSQL store schema of a configuration, or bring it to this version')
    .option('-c, --config <file>', 'the configuration file', 'config/gateway.yaml')
    .addHelpText(
      'after',
      `
Only for store.type: postgres. Prints what it did (exit 0); a schema that is not the gateway's,
or one of a newer version, is refused (exit 1). Safe to run while gateways use the store: the
migration takes an advisory lock and is one transaction.

Examples:
  $ PG_URL=postgres://gateway@db:5432/jms jms-gateway store migrate --config gateway.yaml`,
    )
    .action(run((options: { config: string }) => migrate(options.config, io)));
}

async function migrate(file: string, io: CliIo): Promise<number> {
  const [{ builtinRegistry }, { ConfigError, loadConfig }, { PostgresStore }] = await Promise.all([
    import('../../connectors/index.js'),
    import('../config/load-config.js'),
    import('../store/postgres-store.js'),
  ]);
  let config;
  try {
    ({ config } = await loadConfig(file, { registry: builtinRegistry }));
  } catch (error) {
    if (error instanceof ConfigError) io.stderr(`${error.problems.join('\n')}\n`);
    else io.stderr(`cannot read configuration '${file}': ${(error as Error).message}\n`);
    return 1;
  }
  if (config.store.type !== 'postgres' || config.store.memory) {
    io.stderr(
      `store migrate: '${file}' has no PostgreSQL store (store.type is '${config.store.type ?? 'file'}'): nothing to migrate\n`,
    );
    return 1;
  }
  try {
    const outcome = await PostgresStore.migrate({
      url: config.store.url ?? '',
      ...(config.store.schema === undefined ? {} : { schema: config.store.schema }),
      ...(config.store.connectAttempts === undefined
        ? {}
        : { connectAttempts: config.store.connectAttempts }),
    });
    io.stdout(
      outcome.from === outcome.to
        ? `store ${outcome.location} is at version ${outcome.to}: nothing to do\n`
        : `store ${outcome.location} migrated from version ${outcome.from} to ${outcome.to}\n`,
    );
    return 0;
  } catch (error) {
    io.stderr(`${(error as Error).message}\n`);
    return 1;
  }
}
