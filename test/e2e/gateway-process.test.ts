import assert from 'node:assert/strict';
import { test } from 'node:test';
import { join } from 'node:path';
import {
  adminJson,
  eventually,
  logLines,
  repositoryRoot,
  runCli,
  workspace,
  withGateway,
} from './gateway-harness.js';

test(
  'gateway process - starts on the default config, serves the admin API, runs the demo route and stops cleanly on SIGTERM',
  { timeout: 90_000 },
  async () => {
    // From a temporary directory, so the default store (./data) is created there, not in the repository.
    await withGateway({ config: join(repositoryRoot, 'config/gateway.yaml') }, async (running) => {
      assert.equal((await fetch(`${running.admin}/health`)).status, 200);
      assert.equal((await fetch(`${running.admin}/ready`)).status, 200);
      await adminJson(running.admin, '/destinations/queue/demo.in/messages', {
        method: 'POST',
        body: JSON.stringify({ type: 'text', body: 'hello' }),
      });
      const moved = await eventually(async () => {
        const messages = await adminJson<{ body: string }[]>(
          running.admin,
          '/destinations/queue/demo.out/messages',
        );
        return messages.length > 0 ? messages : undefined;
      }, 'the demo bridge to move the message');
      assert.deepEqual(
        moved.map((m) => m.body),
        ['hello'],
      );
      const metrics = await (await fetch(`${running.admin}/metrics`)).text();
      assert.match(
        metrics,
        /jms_gateway_destination_messages_current\{destination="queue:\/\/demo.in",kind="queue"\} 0/,
      );
      const bridges = await adminJson<{ name: string; status: string; counters: { out: number } }[]>(
        running.admin,
        '/bridges',
      );
      assert.deepEqual(
        bridges.map((b) => [b.name, b.status, b.counters.out]),
        [['demo', 'connected', 1]],
      );
      const result = await running.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
      const lines = logLines(result.stdout);
      assert.ok(lines.some((line) => line.msg === 'gateway ready'));
      assert.equal(lines.at(-1)?.msg, 'stopped');
    });
  },
);

test(
  'gateway process - a bad configuration exits 1 naming file, line and column',
  { timeout: 60_000 },
  async () => {
    const space = await workspace({
      'bad.yaml': 'destinations:\n  queues:\n    - name: ok\n      prefetch: 3\n',
    });
    try {
      const result = await runCli(['run', '--config', space.path('bad.yaml')], space.dir);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /bad\.yaml:4:7: destinations\.queues\[0\]\.prefetch: unknown setting/);
      assert.equal(result.stdout, '');
    } finally {
      await space.cleanup();
    }
  },
);
