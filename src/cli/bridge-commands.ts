/**
 * `jms-gateway bridge list|pause|resume|restart`: the bridges of a running gateway, through
 * `GET /bridges` and `POST /bridges/{name}/pause|resume|restart` of its admin API.
 */
import type { Command } from 'commander';
import { type BridgeView, statusWithReason } from '../admin/bridge-control.js';
import { AdminApiError, AdminClient } from './admin-client.js';
import { type CliIo, OperationError } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';
import { httpUrlValue } from './option-values.js';

/** What each control action does, for the help and for what the command prints. */
const ACTIONS = {
  pause: { done: 'paused', what: 'stop reading its source; messages in flight are finished, none are lost' },
  resume: { done: 'resumed', what: 'read its source again after a pause' },
  restart: { done: 'restarted', what: 'drain, disconnect and connect again (after fixing a broker, say)' },
} as const;

/**
 * The bridges as a table: name, status and the counters an operator looks at first; then, for a
 * status with a reason, the reason and what happened, and the last error.
 */
export function bridgeTable(bridges: readonly BridgeView[]): string[] {
  const header = `${'bridge'.padEnd(24)} ${'status'.padEnd(12)} ${'in'.padStart(6)} ${'out'.padStart(9)} ${'retried'.padStart(9)} ${'dead-lettered'.padStart(14)}`;
  return [
    header,
    ...bridges.map((b) => {
      const c = b.counters;
      const row = `${b.name.padEnd(24)} ${b.status.padEnd(12)} ${String(c.in ?? 0).padStart(6)} ${String(c.out ?? 0).padStart(9)} ${String(c.retried ?? 0).padStart(9)} ${String(c.deadLettered ?? 0).padStart(14)}`;
      const report = b.statusReport;
      const why =
        report?.reason === undefined
          ? ''
          : `  ${b.status}: ${report.reason}${report.detail === undefined ? '' : ` (${report.detail})`}`;
      return b.lastError ? `${row}${why}  last error: ${b.lastError}` : `${row}${why}`;
    }),
  ];
}

/** Adds `bridge` and its subcommands to `program`. */
export function registerBridgeCommands(program: Command, run: CommandRunner, io: CliIo): void {
  const bridge = program
    .command('bridge')
    .description('list, pause, resume or restart the bridges of a running gateway')
    .addHelpText(
      'after',
      `
Examples:
  $ jms-gateway bridge list
  $ jms-gateway bridge pause orders-to-kafka
  $ jms-gateway bridge resume orders-to-kafka --json`,
    );

  withAdminUrl(
    bridge
      .command('list')
      .description('every bridge with its status and counters')
      .option('--json', 'print the bridges as JSON: [{name, status, statusReport, counters, lastError?}]'),
  )
    .addHelpText(
      'after',
      "\nExamples:\n  $ jms-gateway bridge list\n  $ jms-gateway bridge list --json | jq -r '.[].name'",
    )
    .action(
      run(async (options: { url?: string; json?: boolean }) => {
        const bridges = (await new AdminClient(options.url, io).request('GET', '/bridges')) as BridgeView[];
        if (options.json) io.stdout(`${JSON.stringify(bridges, null, 2)}\n`);
        else if (bridges.length === 0) io.stdout('no bridges\n');
        else io.stdout(`${bridgeTable(bridges).join('\n')}\n`);
        return 0;
      }),
    );

  for (const [action, { done, what }] of Object.entries(ACTIONS)) {
    withAdminUrl(
      bridge
        .command(action)
        .description(`${action} one bridge: ${what}`)
        .argument('<name>', 'the bridge, as named in the configuration')
        .option(
          '--json',
          'print the bridge afterwards as JSON: {name, status, statusReport, counters, lastError?}',
        ),
    )
      .addHelpText('after', `\nExamples:\n  $ jms-gateway bridge ${action} orders-to-kafka`)
      .action(
        run(async (name: string, options: { url?: string; json?: boolean }) => {
          let view: BridgeView;
          try {
            view = (await new AdminClient(options.url, io).request(
              'POST',
              `/bridges/${encodeURIComponent(name)}/${action}`,
            )) as BridgeView;
          } catch (error) {
            if (error instanceof AdminApiError && error.status === 404)
              throw new OperationError(`there is no bridge '${name}' (see 'jms-gateway bridge list')`);
            throw error;
          }
          if (options.json) io.stdout(`${JSON.stringify(view, null, 2)}\n`);
          else io.stdout(`${done} bridge '${name}': ${statusWithReason(view)}\n`);
          return 0;
        }),
      );
  }
}

/** The `--url` option every command for a running gateway has. */
export function withAdminUrl(command: Command): Command {
  return command.option(
    '--url <url>',
    "the gateway's admin API (default: $JMS_GATEWAY_ADMIN_URL or http://127.0.0.1:8161)",
    httpUrlValue,
  );
}
