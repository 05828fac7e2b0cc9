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
  'gateway process - starts on the default config, logs ready, and stops cleanly on SIGTERM',
  { timeout: 60_000 },
  async () => {
    let signalled = false;
    const result = await runCli(['run', '--config', 'config/gateway.yaml'], (out, child) => {
      if (!signalled && out.includes('gateway ready')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    assert.equal(result.code, 0, result.stderr);
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
