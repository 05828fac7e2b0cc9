import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/load-config.js';
import type { ReloadResult } from '../../../src/admin/routes.js';
import {
  Gateway,
  type ReloadSource,
  reloadOnSignal,
  reloadSourceOf,
  silentGatewayLogger,
} from '../../../src/gateway/index.js';
import type { Bridge, BridgeStatus } from '../../../src/bridge/index.js';
import { type Connection, Session, TextMessage } from '../../../src/index.js';
import { fakeRegistry } from '../config/fake-connectors.js';
import { teardown } from '../../helpers/teardown.js';

/** A configuration file in a temporary directory, rewritten by each test step, and a loader for it. */
async function configFile(...lines: string[]) {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-reload-'));
  const path = join(dir, 'gw.yaml');
  const registry = fakeRegistry();
  const write = (...body: string[]) =>
    writeFile(path, ['store: { memory: true }', 'admin: { enabled: false }', ...body, ''].join('\n'));
  await write(...lines);
  const load = (): Promise<ReloadSource> => reloadSourceOf(path, registry, {});
  const first = await load();
  if (!first.ok) throw new Error(first.errors.join('\n'));
  return {
    path,
    write,
    load,
    config: first.config,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** Resolves once the bridge has `status` (at once if it has it now): an event, not a poll. */
function reaches(bridge: Bridge, status: BridgeStatus): Promise<void> {
  if (bridge.status === status) return Promise.resolve();
  return new Promise((resolve) => {
    const off = bridge.onStatusChange((change) => {
      if (change.status !== status) return;
      off();
      resolve();
    });
  });
}

/** Every status change of a bridge from now on. */
function recordStatus(bridge: Bridge): BridgeStatus[] {
  const seen: BridgeStatus[] = [];
  bridge.onStatusChange((change) => seen.push(change.status));
  return seen;
}

async function send(connection: Connection, queue: string, ...texts: string[]): Promise<void> {
  const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
  const producer = session.createProducer(session.createQueue(queue));
  for (const text of texts) await producer.send(new TextMessage(text));
  await session.close();
}

/** Receives `count` messages from a queue (each within 5 s: a safety net, the messages are awaited). */
async function receive(connection: Connection, queue: string, count: number): Promise<string[]> {
  const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
  const consumer = session.createConsumer(session.createQueue(queue));
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    const message = await consumer.receive(5_000);
    if (!message) throw new Error(`${queue}: ${texts.length} of ${count} messages arrived`);
    texts.push((message as TextMessage).getText()!);
  }
  await session.close();
  return texts;
}

const bridge = (name: string, from: string, to: string, ...more: string[]) =>
  `  - { name: ${name}, source: { type: jms, destination: queue://${from} }, target: { type: jms, destination: queue://${to} }${more.map((m) => `, ${m}`).join('')} }`;

test('gateway reload - changed bridges restart, removed ones stop, added ones start, unchanged ones are not touched', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile(
    'destinations: { queues: [{ name: a.in }, { name: a.out }, { name: b.in }, { name: b.out }, { name: c.in }, { name: c.out }] }',
    'bridges:',
    bridge('keep', 'a.in', 'a.out'),
    bridge('change', 'b.in', 'b.out'),
    bridge('drop', 'c.in', 'c.out'),
  );
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  const connection = gateway.connectionFactory.createConnection();
  cleanup(() => connection.close());
  connection.start();
  const keep = gateway.bridge('keep')!;
  const change = gateway.bridge('change')!;
  const drop = gateway.bridge('drop')!;
  await Promise.all([keep, change, drop].map((b) => reaches(b, 'connected')));
  await send(connection, 'a.in', 'a1', 'a2');
  await send(connection, 'b.in', 'b1');
  assert.deepEqual(await receive(connection, 'a.out', 2), ['a1', 'a2']);
  assert.deepEqual(await receive(connection, 'b.out', 1), ['b1']);
  const keepStatus = recordStatus(keep);

  await file.write(
    'destinations: { queues: [{ name: a.in }, { name: a.out }, { name: b.in }, { name: b.out }, { name: b.out2 }, { name: c.in }, { name: c.out }] }',
    'bridges:',
    bridge('fresh', 'c.in', 'c.out'),
    bridge('keep', 'a.in', 'a.out'),
    bridge('change', 'b.in', 'b.out2'),
  );
  const result = await gateway.reload();
  assert.deepEqual(result, {
    reloaded: true,
    added: ['fresh'],
    removed: ['drop'],
    restarted: ['change'],
    unchanged: ['keep'],
    created: ['queue://b.out2'],
    changes: { change: ['target'] },
    warnings: [],
    errors: [],
  } satisfies ReloadResult);

  assert.equal(gateway.bridge('keep'), keep, 'the unchanged bridge is the same one');
  assert.deepEqual(keepStatus, [], 'the unchanged bridge was not paused, stopped or restarted');
  assert.equal(keep.counters.out, 2, 'its counters go on');
  assert.equal(drop.status, 'stopped');
  assert.equal(gateway.bridge('drop'), undefined);
  assert.equal(change.status, 'stopped');
  assert.notEqual(gateway.bridge('change'), change);
  assert.deepEqual(gateway.bridgeNames, ['fresh', 'keep', 'change']);

  await Promise.all(['fresh', 'change'].map((name) => reaches(gateway.bridge(name)!, 'connected')));
  await send(connection, 'a.in', 'a3');
  await send(connection, 'b.in', 'b2');
  await send(connection, 'c.in', 'c1');
  assert.deepEqual(await receive(connection, 'a.out', 1), ['a3']);
  assert.deepEqual(await receive(connection, 'b.out2', 1), ['b2']);
  assert.deepEqual(await receive(connection, 'c.out', 1), ['c1']);
  assert.equal(keep.counters.out, 3);
  assert.equal(gateway.engine.destinationStatistics('queue://b.out').messagesCurrent, 0);
});

test('gateway reload - a changed bridge under steady load drains what it read: nothing lost, nothing twice', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile(
    'destinations: { queues: [{ name: in }, { name: out }, { name: out2 }] }',
    'bridges:',
    bridge('route', 'in', 'out', 'batchSize: 20', 'ordering: none', 'concurrency: 4'),
  );
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  const connection = gateway.connectionFactory.createConnection();
  cleanup(() => connection.close());
  connection.start();
  // A steady producer: it keeps sending until the reload is done and 100 more went after it.
  const sent: string[] = [];
  let after = -1;
  const sending = (async () => {
    const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    const producer = session.createProducer(session.createQueue('in'));
    while (after < 0 || sent.length < after + 100) {
      const text = `m${sent.length}`;
      await producer.send(new TextMessage(text));
      sent.push(text);
      // Sends to a memory store resolve in microtasks: let file reads and timers have their turn.
      if (sent.length % 10 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    await session.close();
  })();
  // Reload once the route is busy: some messages moved, more in flight and still coming.
  const early = await receive(connection, 'out', 50);
  await file.write(
    'destinations: { queues: [{ name: in }, { name: out }, { name: out2 }] }',
    'bridges:',
    bridge('route', 'in', 'out2', 'batchSize: 20', 'ordering: none', 'concurrency: 4'),
  );
  const old = gateway.bridge('route')!;
  const result = await gateway.reload();
  after = sent.length;
  assert.deepEqual(result.restarted, ['route']);
  assert.equal(old.status, 'stopped');
  assert.equal(old.counters.inFlight, 0, 'the old bridge finished or gave back everything it read');
  await sending;
  const toOut = gateway.engine.destinationStatistics('queue://out').messagesCurrent;
  const late = await receive(connection, 'out', toOut);
  const rest = await receive(connection, 'out2', sent.length - early.length - late.length);
  const all = [...early, ...late, ...rest];
  assert.equal(new Set(all).size, all.length, 'no message twice');
  assert.deepEqual(all.sort(), [...sent].sort(), 'every message once');
  assert.ok(rest.length >= 100, 'the new bridge moved what came after the reload');
  assert.equal(gateway.engine.destinationStatistics('queue://in').messagesCurrent, 0);
  assert.equal(gateway.engine.destinationStatistics('queue://out2').messagesCurrent, 0);
});

test('gateway reload - a file with problems changes nothing; the errors name file, line and column', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile(
    'destinations: { queues: [{ name: in }, { name: out }] }',
    'bridges:',
    bridge('route', 'in', 'out'),
  );
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  const route = gateway.bridge('route')!;
  await reaches(route, 'connected');
  const seen = recordStatus(route);
  await file.write(
    'destinations: { queues: [{ name: in }, { name: out }] }',
    'bridges:',
    bridge('route', 'in', 'elsewhere', 'prefetch: 3'),
    bridge('other', 'in', 'out', 'retry: { limit: -2 }'),
  );
  const result = await gateway.reload();
  assert.equal(result.reloaded, false);
  assert.deepEqual([result.added, result.removed, result.restarted, result.unchanged], [[], [], [], []]);
  assert.equal(result.errors.length, 2);
  assert.match(result.errors[0]!, /gw\.yaml:5:\d+: bridges\[0\]\.prefetch: unknown setting/);
  assert.match(result.errors[1]!, /gw\.yaml:6:\d+: bridges\[1\]\.retry\.limit: /);
  assert.equal(gateway.bridge('route'), route);
  assert.deepEqual(seen, []);
  assert.equal(gateway.bridgeNames.length, 1);

  // What only building finds (validate's last check) is refused the same way.
  await file.write(
    'destinations: { queues: [{ name: in }, { name: out }] }',
    'bridges:',
    '  - { name: route, source: { type: jms, destination: "queue://in", durable: { clientId: c, name: d } }, target: { type: jms, destination: queue://out } }',
  );
  const built = await gateway.reload();
  assert.equal(built.reloaded, false);
  assert.match(built.errors[0]!, /durable subscription needs a topic/);
  assert.deepEqual(seen, []);
});

test('gateway reload - a paused bridge that changes comes back paused; one never started stays stopped', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile(
    'destinations: { queues: [{ name: a }, { name: b }, { name: c }, { name: d }] }',
    'bridges:',
    bridge('held', 'a', 'b'),
    bridge('idle', 'c', 'd', 'autoStart: false'),
  );
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  await reaches(gateway.bridge('held')!, 'connected');
  await gateway.control.pause('held');
  await file.write(
    'destinations: { queues: [{ name: a }, { name: b }, { name: c }, { name: d }] }',
    'bridges:',
    bridge('held', 'a', 'b', 'batchSize: 5'),
    bridge('idle', 'c', 'd', 'autoStart: false', 'batchSize: 5'),
  );
  const result = await gateway.reload();
  assert.deepEqual(result.restarted, ['held', 'idle']);
  assert.equal(gateway.bridge('held')!.status, 'paused');
  assert.equal(gateway.bridge('idle')!.status, 'stopped');
});

test('gateway reload - destinations: new ones are created, changed and removed ones are reported, not applied', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile('destinations: { queues: [{ name: q, redeliveryLimit: 3 }, { name: old }] }');
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  await file.write(
    'shutdown: { deadlineMs: 3000 }',
    'engine: { expirationScanIntervalMs: 500 }',
    'destinations: { queues: [{ name: q, redeliveryLimit: 5 }, { name: new }], topics: [{ name: t }] }',
  );
  const result = await gateway.reload();
  assert.equal(result.reloaded, true);
  assert.deepEqual(result.created, ['queue://new', 'topic://t']);
  assert.equal(result.warnings.length, 3);
  assert.match(
    result.warnings[0]!,
    /'queue:\/\/q' is configured with settings it does not run with \(redeliveryLimit\)/,
  );
  assert.match(result.warnings[1]!, /'queue:\/\/old' is no longer configured/);
  assert.match(result.warnings[2]!, /'engine' changed \(expirationScanIntervalMs\): restart the gateway/);
  assert.deepEqual(gateway.engine.destinations().map(String).sort(), [
    'queue://new',
    'queue://old',
    'queue://q',
    'topic://t',
  ]);
  assert.equal(
    gateway.engine.destinationOptions(gateway.engine.destinations().find((d) => d.name === 'q')!)
      ?.redeliveryLimit,
    3,
  );
  assert.equal(gateway.shutdownDeadlineMs, 3000, 'the shutdown deadline applies at once');
});

test('gateway reload - one reload at a time: a second one is refused, over the admin API with 409', async (context) => {
  const cleanup = teardown(context);
  const { config } = parseConfig(
    [
      'store: { memory: true }',
      'admin: { port: 0 }',
      'destinations: { queues: [{ name: in }, { name: out }] }',
      'bridges:',
      bridge('route', 'in', 'out'),
    ].join('\n'),
    'gw.yaml',
    { registry: fakeRegistry(), env: {} },
  );
  // The loader answers when the test says so; `loaded` resolves when a reload asked it.
  let release: (source: ReloadSource) => void = () => {};
  let loads = 0;
  let loaded: () => void = () => {};
  const nextLoad = () => new Promise<void>((resolve) => (loaded = resolve));
  const gateway = await Gateway.start(config, silentGatewayLogger, {
    loadConfig: () => {
      loads++;
      loaded();
      return new Promise<ReloadSource>((resolve) => (release = resolve));
    },
  });
  cleanup(() => gateway.stop(5_000));
  const url = gateway.adminUrl!;
  const first = gateway.reload();
  assert.equal(gateway.reloading, true);
  await assert.rejects(gateway.reload(), {
    name: 'IllegalStateError',
    message: /a reload is running already/,
  });
  const refused = await fetch(`${url}/reload`, { method: 'POST' });
  assert.equal(refused.status, 409);
  assert.match(((await refused.json()) as { error: { message: string } }).error.message, /running already/);
  assert.equal(loads, 1, 'the refused reloads did not read the file');
  release({ ok: true, config });
  assert.equal((await first).reloaded, true);
  assert.equal(gateway.reloading, false);

  let asked = nextLoad();
  const answer = fetch(`${url}/reload`, { method: 'POST' });
  await asked;
  release({ ok: false, errors: ['gw.yaml:3:5: bridges[0].retry: expected an object'] });
  const invalid = await answer;
  assert.equal(invalid.status, 422);
  const body = (await invalid.json()) as ReloadResult;
  assert.equal(body.reloaded, false);
  assert.deepEqual(body.errors, ['gw.yaml:3:5: bridges[0].retry: expected an object']);

  asked = nextLoad();
  const applied = fetch(`${url}/reload`, { method: 'POST' });
  await asked;
  release({ ok: true, config });
  const ok = await applied;
  assert.equal(ok.status, 200);
  assert.deepEqual(((await ok.json()) as ReloadResult).unchanged, ['route']);
});

test('gateway reload - SIGHUP during an admin API reload waits for it, then reads the file again', async (context) => {
  const cleanup = teardown(context);
  const { config } = parseConfig(
    ['store: { memory: true }', 'admin: { enabled: false }', 'destinations: { queues: [{ name: in }] }'].join(
      '\n',
    ),
    'gw.yaml',
    { registry: fakeRegistry(), env: {} },
  );
  const releases: ((source: ReloadSource) => void)[] = [];
  let asked: () => void = () => {};
  const nextLoad = () => new Promise<void>((resolve) => (asked = resolve));
  const gateway = await Gateway.start(config, silentGatewayLogger, {
    loadConfig: () =>
      new Promise<ReloadSource>((resolve) => {
        releases.push(resolve);
        asked();
      }),
  });
  cleanup(() => gateway.stop(5_000));
  const refused: unknown[] = [];
  const onSignal = reloadOnSignal(gateway, { warn: (fields) => refused.push(fields) });
  let loading = nextLoad();
  const apiReload = gateway.reload(); // as POST /reload does: it reads the file now
  await loading;
  loading = nextLoad();
  onSignal(); // the file changed after the API reload read it
  onSignal(); // a second signal meanwhile asks for no more than one reload
  assert.equal(releases.length, 1, 'the signal waits while the API reload runs');
  releases[0]!({ ok: true, config });
  assert.equal((await apiReload).reloaded, true);
  await loading;
  assert.equal(releases.length, 2, 'then it reads the file again');
  releases[1]!({ ok: true, config });
  await gateway.reloadFinished();
  // Let the signal handler finish its round (a few turns of the event loop, no timer).
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(refused, [], 'nothing was refused');
  assert.equal(gateway.reloading, false, 'and no third reload: both signals came before the file was read');
  assert.equal(releases.length, 2);
});

test('gateway reload - without a configuration to read again the admin API answers 501', async (context) => {
  const cleanup = teardown(context);
  const { config } = parseConfig(['store: { memory: true }', 'admin: { port: 0 }'].join('\n'), 'gw.yaml', {
    registry: fakeRegistry(),
    env: {},
  });
  const gateway = await Gateway.start(config, silentGatewayLogger);
  cleanup(() => gateway.stop(5_000));
  assert.equal((await fetch(`${gateway.adminUrl!}/reload`, { method: 'POST' })).status, 501);
  await assert.rejects(gateway.reload(), /started without a configuration file/);
});

test('gateway reload - a stop during a reload waits for the bridge being drained and starts nothing new', async (context) => {
  const cleanup = teardown(context);
  const file = await configFile(
    'destinations: { queues: [{ name: a }, { name: b }, { name: c }, { name: d }] }',
    'bridges:',
    bridge('first', 'a', 'b'),
  );
  cleanup(() => file.cleanup());
  const gateway = await Gateway.start(file.config, silentGatewayLogger, { loadConfig: file.load });
  cleanup(() => gateway.stop(5_000));
  const first = gateway.bridge('first')!;
  await reaches(first, 'connected');
  await file.write(
    'destinations: { queues: [{ name: a }, { name: b }, { name: c }, { name: d }] }',
    'bridges:',
    bridge('first', 'a', 'c'),
    bridge('second', 'c', 'd'),
  );
  const reloading = gateway.reload();
  // The reload reads the file, then stops `first`; the gateway stops as soon as it does.
  await reaches(first, 'stopped');
  const stopped = gateway.stop(5_000);
  const result = await reloading;
  assert.deepEqual(await stopped, { clean: true });
  assert.equal(result.reloaded, false);
  assert.match(result.errors[0]!, /began stopping during the reload/);
  for (const name of gateway.bridgeNames) assert.equal(gateway.bridge(name)!.status, 'stopped');
});
