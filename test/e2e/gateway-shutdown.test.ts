import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  adminJson,
  eventually,
  killGateway,
  logLines,
  type RunningGateway,
  startGateway,
  workspace,
} from './gateway-harness.js';

const CONFIG = [
  '# A route between two queues of the file store; acknowledgements are batched, so stopping has',
  '# in-flight sends to finish and acknowledgements to flush.',
  'store: { path: ./data }',
  'shutdown: { deadlineMs: 10000 }',
  'destinations:',
  '  queues: [{ name: in }, { name: out }]',
  'bridges:',
  '  - name: drain',
  '    source: { type: jms, destination: queue://in }',
  '    target: { type: jms, destination: queue://out }',
  '    batchSize: 50',
  '    batchIntervalMs: 2000',
  '',
].join('\n');

interface Browsed {
  body: string;
}

async function bodies(admin: string, queue: string): Promise<string[]> {
  const messages = await adminJson<Browsed[]>(admin, `/destinations/queue/${queue}/messages?limit=10000`);
  return messages.map((m) => m.body);
}

test(
  'gateway shutdown - SIGTERM drains a running route without loss or duplicates',
  { timeout: 90_000 },
  async () => {
    const space = await workspace({ 'gateway.yaml': CONFIG });
    let gateway: RunningGateway | undefined;
    try {
      const first = await startGateway('gateway.yaml', space.dir);
      gateway = first;
      const accepted: string[] = [];
      let stopped: Promise<unknown> | undefined;
      // Keep sending while the gateway stops: every send the admin API confirmed was stored.
      for (let i = 0; i < 400; i++) {
        if (i === 250) stopped = first.stop('SIGTERM');
        const body = `m-${i}`;
        const response = await fetch(`${first.admin}/destinations/queue/in/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'text', body }),
        }).catch(() => undefined);
        if (response?.status === 201) accepted.push(body);
        if (!response) break;
      }
      await stopped;
      const result = await first.exited;
      assert.equal(result.code, 0, result.stderr);
      const lines = logLines(result.stdout);
      const stopping = lines.find((line) => line.msg === 'stopping bridges');
      assert.ok(stopping, 'the gateway logged its stop');
      assert.deepEqual(lines.at(-1)?.msg, 'stopped');
      assert.equal(lines.at(-1)?.clean, true);
      assert.ok(lines.some((line) => line.msg === 'bridge stopped' && line.bridge === 'drain'));
      assert.ok(accepted.length >= 250, `only ${accepted.length} sends were accepted`);

      // The same store again: the bridge moves what was given back; everything accepted arrives once.
      const second = await startGateway('gateway.yaml', space.dir);
      gateway = second;
      const out = await eventually(async () => {
        const left = await bodies(second.admin, 'in');
        const moved = await bodies(second.admin, 'out');
        return left.length === 0 && moved.length >= accepted.length ? moved : undefined;
      }, 'every accepted message in queue://out after the restart');
      assert.equal(out.length, accepted.length, 'no duplicates');
      assert.deepEqual([...out].sort(), [...accepted].sort());
      const result2 = await second.stop('SIGTERM');
      assert.equal(result2.code, 0, result2.stderr);
    } finally {
      await killGateway(gateway);
      await space.cleanup();
    }
  },
);
