/**
 * `jms-gateway ha status|step-down`: the role of one instance of an active/standby group, through
 * `GET /ha` and `POST /ha/step-down` of its admin API. Step-down is how a rolling upgrade hands
 * over: upgrade the standbys, step the active down, upgrade it.
 */
import type { Command } from 'commander';
import type { HaStatus } from '../admin/ha-routes.js';
import { AdminApiError, AdminClient } from './admin-client.js';
import { type CliIo, OperationError } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';
import { withAdminUrl } from './bridge-commands.js';

/** One instance's role and the lease, in lines. */
export function haStatusLines(status: HaStatus): string[] {
  const lines = [
    `role: ${status.role}${status.epoch === undefined ? '' : ` (epoch ${status.epoch})`} since ${status.since}`,
    `instance: ${status.instanceId} in group '${status.group}'`,
  ];
  if (status.reason !== undefined) lines.push(`why: ${status.reason}`);
  const { lease } = status;
  if (lease === undefined) lines.push('lease: could not be read from the database');
  else if (lease.holder === undefined)
    lines.push(`lease: released (epoch ${lease.epoch}); a standby takes it next`);
  else
    lines.push(
      `lease: held by ${lease.holder} (epoch ${lease.epoch}) until ${lease.expiresAt} unless renewed`,
    );
  return lines;
}

/** Adds `ha` and its subcommands to `program`. */
export function registerHaCommands(program: Command, run: CommandRunner, io: CliIo): void {
  const ha = program
    .command('ha')
    .description('the role of a gateway in an active/standby group (ha.enabled), and handing over')
    .addHelpText(
      'after',
      `
Examples:
  $ jms-gateway ha status --url http://gw-2:8161
  $ jms-gateway ha step-down --url http://gw-1:8161`,
    );

  withAdminUrl(
    ha
      .command('status')
      .description('this instance’s role (active, standby, ...) and which instance holds the lease')
      .option(
        '--json',
        'print the status as JSON: {role, group, instanceId, epoch?, reason?, since, lease?}',
      ),
  ).action(
    run(async (options: { url?: string; json?: boolean }) => {
      const status = (await request(io, options.url, 'GET')) as HaStatus;
      io.stdout(
        options.json ? `${JSON.stringify(status, null, 2)}\n` : `${haStatusLines(status).join('\n')}\n`,
      );
      return 0;
    }),
  );

  withAdminUrl(
    ha
      .command('step-down')
      .description(
        'hand over to a standby: the bridges drain and stop, the lease is given back, a standby takes over within a claim round',
      )
      .option('--json', 'print the status afterwards as JSON'),
  ).action(
    run(async (options: { url?: string; json?: boolean }) => {
      let status: HaStatus;
      try {
        status = (await request(io, options.url, 'POST', '/step-down')) as HaStatus;
      } catch (error) {
        if (error instanceof AdminApiError && error.status === 409) throw new OperationError(error.message);
        throw error;
      }
      io.stdout(
        options.json
          ? `${JSON.stringify(status, null, 2)}\n`
          : `stepping down: the bridges drain, then a standby takes over\n${haStatusLines(status).join('\n')}\n`,
      );
      return 0;
    }),
  );
}

async function request(
  io: CliIo,
  url: string | undefined,
  method: 'GET' | 'POST',
  suffix = '',
): Promise<unknown> {
  try {
    return await new AdminClient(url, io).request(method, `/ha${suffix}`);
  } catch (error) {
    if (error instanceof AdminApiError && error.status === 404)
      throw new OperationError('this gateway does not run with high availability (ha.enabled is false)');
    throw error;
  }
}
