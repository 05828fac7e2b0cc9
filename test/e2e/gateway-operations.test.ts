import assert from 'node:assert/strict';
import { test } from 'node:test';
import { adminJson, eventually, logLines, runCli, workspace, withGateway } from './gateway-harness.js';

const CONFIG = [
  'store: { path: ./data }',
  'log: { level: warn }',
  'engine: { autoCreateDestinations: false }',
  'destinations:',
  '  queues: [{ name: in }, { name: out }, { name: gone }]',
  'bridges:',
  '  - name: healthy',
  '    source: { type: jms, destination: queue://in }',
  '    target: { type: jms, destination: queue://out }',
  '  - name: broken',
  '    source: { type: jms, destination: queue://gone }',
  '    target: { type: jms, destination: queue://out }',
].join('\n');

test(
  'gateway process - /ready is 503 naming a failed bridge, admin mutations are audited, LOG_LEVEL wins over log.level',
  { timeout: 90_000 },
  async () => {
    // log.level is warn; LOG_LEVEL=debug wins (else 'gateway ready', an info line, would never come).
    await withGateway({ files: { 'gateway.yaml': CONFIG }, env: { LOG_LEVEL: 'debug' } }, async (running) => {
      assert.equal((await fetch(`${running.admin}/ready`)).status, 200);
      await adminJson(running.admin, '/destinations/queue/gone', { method: 'DELETE' });
      await adminJson(running.admin, '/bridges/broken/restart', { method: 'POST' });
      const ready = await eventually(async () => {
        const response = await fetch(`${running.admin}/ready`);
        return response.status === 503 ? ((await response.json()) as Record<string, unknown>) : undefined;
      }, '/ready to answer 503');
      const failed = ready.failed as { bridge: string; status: string; reason: string; since: string }[];
      assert.deepEqual(
        failed.map(({ bridge, status }) => [bridge, status]),
        [['broken', 'failed']],
      );
      assert.match(failed[0]!.reason, /queue:\/\/gone/);
      assert.ok(!Number.isNaN(Date.parse(failed[0]!.since)));
      assert.equal((await fetch(`${running.admin}/health`)).status, 200);

      const result = await running.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
      const lines = logLines(result.stdout);
      assert.ok(
        lines.some((line) => line.level === 20),
        'debug lines, as LOG_LEVEL asked',
      );
      const audits = lines.filter((line) => line.audit === true);
      assert.deepEqual(
        audits.map((line) => [line.msg, line.who, line.destination ?? line.bridge, line.status]),
        [
          ['admin action: delete', 'loopback', 'queue://gone', 200],
          ['admin action: restart', 'loopback', 'broken', 200],
        ],
      );
    });
  },
);

test(
  'gateway process - a bad LOG_LEVEL or --log-level stops the start with one line',
  { timeout: 60_000 },
  async () => {
    const space = await workspace({ 'gateway.yaml': CONFIG });
    try {
      const fromEnv = await runCli(['run', '--config', 'gateway.yaml', '--admin-port', '0'], space.dir, {
        LOG_LEVEL: 'loud',
      });
      assert.equal(fromEnv.code, 1);
      assert.equal(
        fromEnv.stderr,
        "LOG_LEVEL 'loud' is not a log level (expected one of trace, debug, info, warn, error, fatal, silent)\n",
      );
      assert.equal(fromEnv.stdout, '');
      const fromOption = await runCli(
        ['run', '--config', 'gateway.yaml', '--admin-port', '0', '--log-level', 'chatty'],
        space.dir,
      );
      assert.equal(fromOption.code, 2);
      assert.equal(
        fromOption.stderr,
        "error: option '--log-level <level>' argument 'chatty' is invalid: expected one of trace, debug, info, warn, error, fatal, silent\n",
      );
    } finally {
      await space.cleanup();
    }
  },
);
