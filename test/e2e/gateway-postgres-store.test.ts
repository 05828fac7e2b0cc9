/**
 * A gateway process on the PostgreSQL store: it refuses to start on an unreachable database with
 * a clear error and exit 1, never showing the password; `store migrate` prepares a schema that a
 * gateway with `migrate: false` then starts on; a message sent through the admin API survives a
 * restart.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logLines, runCli, startGateway, killGateway, workspace } from './gateway-harness.js';
import { PG_URL, dropSchema, postgresSkip, uniqueSchema } from '../helpers/postgres.js';
import { closedPort } from '../helpers/ports.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-schema.js';

const skip = (await postgresSkip()) ?? false;

const config = (schema: string, extra = '') =>
  `store:\n  type: postgres\n  url: \${PG_URL}\n  schema: ${schema}\n${extra}destinations:\n  queues:\n    - name: orders\n`;

test(
  'gateway on postgres - an unreachable database: a clear error, exit 1, no password anywhere',
  { skip, timeout: 60_000 },
  async () => {
    const port = await closedPort();
    const space = await workspace({ 'gw.yaml': config('unused', '  connectAttempts: 2\n') });
    try {
      const result = await runCli(
        ['run', '--config', space.path('gw.yaml'), '--admin-port', '0'],
        space.dir,
        {
          PG_URL: `postgres://gateway:Hidden-Pw-42@127.0.0.1:${port}/test`,
        },
      );
      assert.equal(result.code, 1);
      const output = `${result.stdout}\n${result.stderr}`;
      assert.ok(!output.includes('Hidden-Pw-42'), 'the password is never shown');
      const failure = logLines(result.stdout).find((line) => line.msg === 'cannot start the gateway');
      assert.ok(failure, `no 'cannot start the gateway' line in:\n${output}`);
      assert.match(JSON.stringify(failure), /could not connect \(attempt 2 of 2\).*ECONNREFUSED/);
      assert.match(JSON.stringify(failure), /gateway:\*\*\*@127\.0\.0\.1/);
    } finally {
      await space.cleanup();
    }
  },
);

test(
  'gateway on postgres - store migrate prepares the schema; a message survives a restart',
  { skip, timeout: 120_000 },
  async () => {
    const schema = uniqueSchema('gateway');
    const space = await workspace({ 'gw.yaml': config(schema, '  migrate: false\n') });
    const env = { PG_URL };
    let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
    try {
      const refused = await runCli(
        ['run', '--config', space.path('gw.yaml'), '--admin-port', '0'],
        space.dir,
        env,
      );
      assert.equal(refused.code, 1);
      assert.match(refused.stdout, /holds no store and store\.migrate is false/);
      const migrated = await runCli(['store', 'migrate', '--config', space.path('gw.yaml')], space.dir, env);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.match(migrated.stdout, new RegExp(`migrated from version 0 to ${POSTGRES_SCHEMA_VERSION}`));

      gateway = await startGateway(space.path('gw.yaml'), space.dir, env);
      const sent = await runCli(['send', 'orders', '--body', 'kept', '--url', gateway.admin], space.dir, env);
      assert.equal(sent.code, 0, sent.stderr);
      await gateway.stop();
      gateway = await startGateway(space.path('gw.yaml'), space.dir, env);
      const browsed = await runCli(['browse', 'orders', '--url', gateway.admin, '--json'], space.dir, env);
      assert.equal(browsed.code, 0, browsed.stderr);
      assert.match(browsed.stdout, /kept/);
      await gateway.stop();
    } finally {
      await killGateway(gateway);
      await space.cleanup();
      await dropSchema(schema);
    }
  },
);
