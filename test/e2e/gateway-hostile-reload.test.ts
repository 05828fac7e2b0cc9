import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import {
  adminJson,
  eventually,
  killGateway,
  type RunningGateway,
  startGateway,
  workspace,
} from './gateway-harness.js';

const CONFIG = [
  'store: { path: ./data }',
  'destinations: { queues: [{ name: in }, { name: out }] }',
  'bridges:',
  '  - { name: route, source: { type: jms, destination: queue://in }, target: { type: jms, destination: queue://out } }',
  '',
].join('\n');

/** 540 bytes that stand for 9^10 values: a "billion laughs". */
function aliasBomb(): string {
  const lines = ['x0: &a0 "lol"'];
  for (let level = 1; level <= 10; level++)
    lines.push(`x${level}: &a${level} [${Array.from({ length: 9 }, () => `*a${level - 1}`).join(',')}]`);
  lines.push('bridges: *a10', '');
  return lines.join('\n');
}

const MESSAGES = 30;

/** Sends `count` messages to queue://in, one after the other. */
async function send(admin: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++)
    await adminJson(admin, '/destinations/queue/in/messages', {
      method: 'POST',
      body: JSON.stringify({ type: 'text', body: `${prefix}${i}` }),
    });
}

/** Asks /health back to back until `work` is done: the slowest answer and how many there were. */
async function probeHealth(admin: string, work: Promise<void>): Promise<{ slowest: number; probes: number }> {
  let done = false;
  const finished = work.finally(() => (done = true));
  let slowest = 0;
  let probes = 0;
  while (!done) {
    const started = performance.now();
    const response = await fetch(`${admin}/health`);
    await response.text();
    assert.equal(response.status, 200);
    slowest = Math.max(slowest, performance.now() - started);
    probes++;
  }
  await finished;
  return { slowest, probes };
}
const HEALTH_BOUND_MS = 100;

test(
  'gateway reload - an alias bomb is refused with 422 naming the alias, /health keeps answering (within 100 ms of its time without a reload) and traffic flows on',
  { timeout: 120_000 },
  async () => {
    const space = await workspace({ 'gateway.yaml': CONFIG });
    let gateway: RunningGateway | undefined;
    try {
      gateway = await startGateway('gateway.yaml', space.dir);
      const admin = gateway.admin;
      await writeFile(space.path('gateway.yaml'), aliasBomb());

      // What /health takes on this machine with traffic and no reload: the bound is on top of it.
      await fetch(`${admin}/health`).then((response) => response.text());
      const baseline = await probeHealth(admin, send(admin, 'warm', MESSAGES));
      let reloadMs = 0;
      const during = await probeHealth(
        admin,
        (async () => {
          const traffic = send(admin, 'm', MESSAGES);
          const started = performance.now();
          const reload = await fetch(`${admin}/reload`, { method: 'POST' });
          reloadMs = performance.now() - started;
          const result = (await reload.json()) as { reloaded: boolean; errors: string[] };
          assert.equal(reload.status, 422);
          assert.equal(result.reloaded, false);
          assert.equal(result.errors.length, 1);
          assert.match(
            result.errors[0]!,
            /gateway\.yaml:\d+:\d+: alias '\*a\d+' takes the values aliases stand for past the limit of 10000/,
          );
          await traffic;
        })(),
      );
      assert.ok(reloadMs < 5_000, `the reload was refused in ${Math.round(reloadMs)} ms`);
      assert.ok(during.probes > 5, `${during.probes} health probes`);
      assert.ok(
        during.slowest < baseline.slowest + HEALTH_BOUND_MS,
        `the slowest /health took ${Math.round(during.slowest)} ms during the reload, ${Math.round(baseline.slowest)} ms without one`,
      );
      const out = await eventually(async () => {
        const messages = await adminJson<{ body: string }[]>(
          admin,
          '/destinations/queue/out/messages?limit=1000',
        );
        return messages.length === 2 * MESSAGES ? messages.map((m) => m.body) : undefined;
      }, 'every message at queue://out');
      assert.deepEqual(
        out.slice(MESSAGES),
        Array.from({ length: MESSAGES }, (_, i) => `m${i}`),
        'every message sent during the reload, in order',
      );
      const bridges = await adminJson<{ name: string; status: string }[]>(admin, '/bridges');
      assert.deepEqual(
        bridges.map((b) => [b.name, b.status]),
        [['route', 'connected']],
        'the running configuration is kept',
      );
      const stopped = await gateway.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    } finally {
      await killGateway(gateway);
      await space.cleanup();
    }
  },
);
