import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const CLI = ['--import', 'tsx', 'src/cli/main.ts'];

/** Runs the real CLI as a child process; resolves with its exit code and output. */
function runCli(args: string[], onStdout?: (text: string, child: ReturnType<typeof spawn>) => void) {
  const child = spawn(process.execPath, [...CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    onStdout?.(stdout, child);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

test(
  'gateway process - starts on the default config, serves the admin API, and stops cleanly on SIGTERM',
  { timeout: 60_000 },
  async () => {
    let signalled = false;
    let health: number | undefined;
    let metrics = '';
    const result = await runCli(
      ['run', '--config', 'config/gateway.yaml', '--admin-port', '0'],
      (out, child) => {
        const ready = out.split('\n').find((line) => line.includes('gateway ready'));
        if (signalled || !ready) return;
        signalled = true;
        const { admin } = JSON.parse(ready) as { admin: string };
        void (async () => {
          health = (await fetch(`${admin}/health`)).status;
          metrics = await (await fetch(`${admin}/metrics`)).text();
          child.kill('SIGTERM');
        })();
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.equal(health, 200);
    assert.match(
      metrics,
      /jms_gateway_destination_messages_current\{destination="queue:\/\/demo.orders",kind="queue"\} 0/,
    );
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string });
    assert.ok(lines.some((line) => line.msg === 'gateway ready'));
    assert.equal(lines.at(-1)?.msg, 'stopped');
  },
);

test(
  'gateway process - a bad configuration exits 1 naming file, line and column',
  { timeout: 60_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-'));
    const file = join(dir, 'bad.yaml');
    await writeFile(file, 'destinations:\n  queues:\n    - name: ok\n      prefetch: 3\n');
    const result = await runCli(['run', '--config', file]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /bad\.yaml:4:7: destinations\.queues\[0\]\.prefetch: unknown setting/);
  },
);
