import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { adminJson, eventually, logLines, runCli, withGateway } from './gateway-harness.js';

/**
 * Two routes over the file store: `steady` stays as it is, `orders` is the one a reload changes
 * (its target moves from queue://orders.out to queue://orders.v2).
 */
function config(ordersTarget: string, newQueue?: string): string {
  const queues = ['steady.in', 'steady.out', 'orders.in', 'orders.out', ...(newQueue ? [newQueue] : [])];
  return [
    'store: { path: ./data }',
    'shutdown: { deadlineMs: 10000 }',
    'destinations:',
    `  queues: [${queues.map((name) => `{ name: ${name} }`).join(', ')}]`,
    'bridges:',
    '  - name: steady',
    '    source: { type: jms, destination: queue://steady.in }',
    '    target: { type: jms, destination: queue://steady.out }',
    '  - name: orders',
    '    source: { type: jms, destination: queue://orders.in }',
    `    target: { type: jms, destination: ${ordersTarget} }`,
    '    batchSize: 20',
    '    batchIntervalMs: 50',
    '',
  ].join('\n');
}

const CHANGED = config('queue://orders.v2', 'orders.v2');

interface BridgeView {
  name: string;
  status: string;
  counters: { in: number; out: number };
}

async function bodies(admin: string, queue: string): Promise<string[]> {
  const messages = await adminJson<{ body: string }[]>(
    admin,
    `/destinations/queue/${queue}/messages?limit=100000`,
  );
  return messages.map((m) => m.body);
}

async function post(admin: string, queue: string, body: string): Promise<boolean> {
  const response = await fetch(`${admin}/destinations/queue/${queue}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'text', body }),
  });
  return response.status === 201;
}

/** Watches `/bridges` until stopped: every view of the bridge named `name` seen meanwhile. */
function watch(admin: string, name: string) {
  const seen: BridgeView[] = [];
  let running = true;
  // A failed request ends the watch (it is reported by stop): a test that fails before it stops
  // the watch leaves no poller behind once its gateway is gone, nor an unhandled rejection.
  let failure: Error | undefined;
  const done = (async () => {
    while (running) {
      const bridges = await adminJson<BridgeView[]>(admin, '/bridges');
      const view = bridges.find((b) => b.name === name);
      if (view) seen.push(view);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })().catch((error: unknown) => {
    running = false;
    failure = error instanceof Error ? error : new Error(String(error));
  });
  return {
    seen,
    stop: async () => {
      running = false;
      await done;
      if (failure !== undefined) throw failure;
    },
  };
}

test(
  'gateway reload - under steady load a changed bridge loses and doubles nothing, an unchanged one keeps running and counting; an invalid file keeps the old configuration',
  { timeout: 120_000 },
  async () => {
    await withGateway({ files: { 'gateway.yaml': config('queue://orders.out') } }, async (running, space) => {
      const admin = running.admin;
      const env = { JMS_GATEWAY_ADMIN_URL: admin };
      const steadyWatch = watch(admin, 'steady');

      // Steady load on both routes; the reload happens in the middle of it.
      const sent = { orders: [] as string[], steady: [] as string[] };
      let reloaded: Promise<Awaited<ReturnType<typeof runCli>>> | undefined;
      for (let i = 0; i < 600; i++) {
        if (i === 200) {
          await writeFile(space.path('gateway.yaml'), CHANGED);
          reloaded = runCli(['reload'], space.dir, env);
        }
        if (await post(admin, 'orders.in', `o-${i}`)) sent.orders.push(`o-${i}`);
        if (await post(admin, 'steady.in', `s-${i}`)) sent.steady.push(`s-${i}`);
      }
      const reload = await reloaded!;
      assert.equal(reload.code, 0, reload.stderr);
      assert.match(
        reload.stdout,
        /^reloaded: added -; removed -; restarted orders; unchanged steady\ncreated queue:\/\/orders\.v2\n$/,
      );
      assert.equal(sent.orders.length, 600);
      assert.equal(sent.steady.length, 600);

      const moved = await eventually(async () => {
        const [oldOut, newOut, left, steadyOut] = await Promise.all([
          bodies(admin, 'orders.out'),
          bodies(admin, 'orders.v2'),
          bodies(admin, 'orders.in'),
          bodies(admin, 'steady.out'),
        ]);
        return left.length === 0 && oldOut.length + newOut.length >= 600 && steadyOut.length >= 600
          ? { oldOut, newOut, steadyOut }
          : undefined;
      }, 'every message through both routes');
      await steadyWatch.stop();
      const orders = [...moved.oldOut, ...moved.newOut];
      assert.equal(orders.length, new Set(orders).size, 'no order twice');
      assert.deepEqual(orders.sort(), [...sent.orders].sort(), 'every order once');
      assert.ok(moved.oldOut.length > 0 && moved.newOut.length > 0, 'the reload happened under load');
      assert.deepEqual(moved.steadyOut.sort(), [...sent.steady].sort());

      // The unchanged bridge: never stopped, paused or restarted; its counters only grew.
      assert.ok(steadyWatch.seen.length > 10, `only ${steadyWatch.seen.length} samples`);
      for (const view of steadyWatch.seen) assert.equal(view.status, 'connected');
      for (let i = 1; i < steadyWatch.seen.length; i++)
        assert.ok(steadyWatch.seen[i]!.counters.out >= steadyWatch.seen[i - 1]!.counters.out, 'never reset');
      const lines = logLines(running.stdout());
      assert.ok(!lines.some((l) => l.bridge === 'steady' && /stopping|stopped|paused/.test(l.msg)));
      assert.ok(
        lines.some((l) => l.msg === 'restarting bridge with its new configuration' && l.bridge === 'orders'),
      );
      assert.ok(lines.some((l) => l.msg === 'configuration reloaded'));

      // An invalid file: refused with file:line:col, over the API (422) and the CLI (exit 1); nothing changes.
      await writeFile(space.path('gateway.yaml'), `${CHANGED}    prefetch: 3\n`);
      const refused = await fetch(`${admin}/reload`, { method: 'POST' });
      assert.equal(refused.status, 422);
      const result = (await refused.json()) as { reloaded: boolean; errors: string[] };
      assert.equal(result.reloaded, false);
      assert.match(result.errors.join('\n'), /gateway\.yaml:\d+:5: bridges\[1\]\.prefetch: unknown setting/);
      const cli = await runCli(['reload'], space.dir, env);
      assert.equal(cli.code, 1);
      assert.match(cli.stderr, /gateway\.yaml:\d+:5: bridges\[1\]\.prefetch: unknown setting/);
      assert.match(cli.stderr, /not reloaded: the gateway keeps running its previous configuration/);
      const before = await adminJson<BridgeView[]>(admin, '/bridges');
      assert.ok(await post(admin, 'orders.in', 'after-invalid'));
      await eventually(
        async () => ((await bodies(admin, 'orders.v2')).includes('after-invalid') ? true : undefined),
        'the running (reloaded) orders route to go on',
      );
      const after = await adminJson<BridgeView[]>(admin, '/bridges');
      assert.deepEqual(
        after.map((b) => [b.name, b.status]),
        [
          ['steady', 'connected'],
          ['orders', 'connected'],
        ],
      );
      assert.equal(after[0]!.counters.out, before[0]!.counters.out, 'steady untouched by the refused reload');
      assert.ok(
        logLines(running.stdout()).some(
          (l) => l.level === 50 && /configuration not reloaded/.test(l.msg) && Array.isArray(l.problems),
        ),
      );

      const stopped = await running.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    });
  },
);

test(
  'gateway reload - SIGHUP applies the file; a file with problems is logged at error level and changes nothing',
  { timeout: 90_000 },
  async () => {
    await withGateway({ files: { 'gateway.yaml': config('queue://orders.out') } }, async (running, space) => {
      const admin = running.admin;
      const reloads = () => logLines(running.stdout()).filter((l) => /reloaded/.test(l.msg));

      await writeFile(
        space.path('gateway.yaml'),
        config('queue://orders.out').replace('    batchSize: 20', '    batchSize: 5'),
      );
      running.child.kill('SIGHUP');
      const applied = await eventually(
        () => Promise.resolve(reloads().find((l) => l.msg === 'configuration reloaded')),
        'the SIGHUP reload',
      );
      assert.deepEqual(applied.restarted, ['orders']);
      assert.deepEqual(applied.unchanged, ['steady']);
      assert.ok(await post(admin, 'orders.in', 'after-hup'));
      await eventually(
        async () => ((await bodies(admin, 'orders.out')).includes('after-hup') ? true : undefined),
        'the restarted route to move a message',
      );

      await writeFile(space.path('gateway.yaml'), 'bridges:\n  - name: [broken\n');
      running.child.kill('SIGHUP');
      const refused = await eventually(
        () => Promise.resolve(reloads().find((l) => l.msg.startsWith('configuration not reloaded'))),
        'the refused SIGHUP reload',
      );
      assert.equal(refused.level, 50, 'logged at error level');
      assert.match((refused.problems as string[]).join('\n'), /gateway\.yaml:\d+:\d+: /);
      const bridges = await adminJson<BridgeView[]>(admin, '/bridges');
      assert.deepEqual(
        bridges.map((b) => [b.name, b.status]),
        [
          ['steady', 'connected'],
          ['orders', 'connected'],
        ],
      );
      assert.equal(running.child.exitCode, null, 'SIGHUP did not end the process');
      const stopped = await running.stop('SIGTERM');
      assert.equal(stopped.code, 0, stopped.stderr);
    });
  },
);
