import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GatewayConfig } from '../../../src/config/gateway-config.js';
import { parseConfig } from '../../../src/config/load-config.js';
import { type ReloadPlan, type RunningState, planReload } from '../../../src/gateway/index.js';
import type { DestinationOptions } from '../../../src/index.js';
import { fakeRegistry } from '../config/fake-connectors.js';

function configOf(...lines: string[]): GatewayConfig {
  const admin = lines.some((line) => line.startsWith('admin:')) ? [] : ['admin: { enabled: false }'];
  const text = ['store: { memory: true }', ...admin, ...lines].join('\n');
  return parseConfig(text, 'gw.yaml', { registry: fakeRegistry(), env: {} }).config;
}

/** The running state after starting on `config`: its destinations exist with their configured settings. */
function runningOn(
  config: GatewayConfig,
  extra: Record<string, DestinationOptions> = {},
): RunningState & { destinations: Map<string, DestinationOptions> } {
  const destinations = new Map<string, DestinationOptions>(Object.entries(extra));
  for (const { name, options } of config.destinations.queues) destinations.set(`queue://${name}`, options);
  for (const { name, options } of config.destinations.topics) destinations.set(`topic://${name}`, options);
  return {
    current: config,
    started: config,
    destinations,
    destinationOptions: (id) => destinations.get(id),
  };
}

/** Bridge names by outcome, and what changed in the changed ones. */
function summary(plan: ReloadPlan) {
  return {
    added: plan.added.map((spec) => spec.name),
    removed: plan.removed,
    changed: Object.fromEntries(plan.changed.map(({ spec, changes }) => [spec.name, changes])),
    unchanged: plan.unchanged.map((spec) => spec.name),
  };
}

const internal = (name: string, from: string, to: string, ...more: string[]) =>
  `  - { name: ${name}, source: { type: jms, destination: ${from} }, target: { type: jms, destination: ${to} }${more.map((m) => `, ${m}`).join('')} }`;

test('reload plan - bridges are added, removed, changed (with what changed) or unchanged, in configuration order', () => {
  const before = configOf(
    'bridges:',
    internal('gone', 'queue://a', 'queue://b'),
    internal('same', 'queue://c', 'queue://d'),
    internal('moved', 'queue://e', 'queue://f'),
    internal('tuned', 'queue://g', 'queue://h', 'retry: { limit: 3 }'),
  );
  const after = configOf(
    'bridges:',
    internal('tuned', 'queue://g', 'queue://h', 'retry: { limit: 4 }', 'batchSize: 10'),
    internal('new', 'queue://x', 'queue://y'),
    internal('same', 'queue://c', 'queue://d'),
    internal('moved', 'queue://e', 'queue://f2'),
  );
  const plan = planReload(runningOn(before), after);
  assert.deepEqual(summary(plan), {
    added: ['new'],
    removed: ['gone'],
    changed: { tuned: ['batchSize', 'retry'], moved: ['target'] },
    unchanged: ['same'],
  });
  assert.deepEqual(plan.warnings, []);
});

test('reload plan - the same file again changes nothing, and key order does not matter', () => {
  const before = configOf(
    'destinations: { queues: [{ name: q, redeliveryLimit: 2, errorDestination: queue://q.err }, { name: q.err }] }',
    'bridges:',
    '  - name: b',
    '    source: { type: jms, destination: queue://q }',
    '    target: { type: jms, destination: queue://out }',
    '    retry: { delay: { kind: exponential, initialMs: 100, maxMs: 1000 }, limit: 2 }',
  );
  const after = configOf(
    'destinations: { queues: [{ errorDestination: queue://q.err, redeliveryLimit: 2, name: q }, { name: q.err }] }',
    'bridges:',
    '  - retry: { limit: 2, delay: { maxMs: 1000, initialMs: 100, kind: exponential } }',
    '    target: { destination: queue://out, type: jms }',
    '    source: { destination: queue://q, type: jms }',
    '    name: b',
  );
  const plan = planReload(runningOn(before), after);
  assert.deepEqual(summary(plan), { added: [], removed: [], changed: {}, unchanged: ['b'] });
  assert.deepEqual(plan.create, []);
  assert.deepEqual(plan.warnings, []);
});

test('reload plan - autoStart alone is no change: it decides only when the gateway starts', () => {
  const before = configOf('bridges:', internal('b', 'queue://a', 'queue://b', 'autoStart: false'));
  const after = configOf('bridges:', internal('b', 'queue://a', 'queue://b', 'autoStart: true'));
  assert.deepEqual(summary(planReload(runningOn(before), after)).unchanged, ['b']);
});

test('reload plan - readiness alone is no change: only /ready reads it; a changed log section is a warning', () => {
  const before = configOf('bridges:', internal('b', 'queue://a', 'queue://b', 'readiness: required'));
  const after = configOf(
    'log: { level: debug }',
    'bridges:',
    internal('b', 'queue://a', 'queue://b', 'readiness: ignored'),
  );
  const plan = planReload(runningOn(before), after);
  assert.deepEqual(summary(plan).unchanged, ['b']);
  assert.deepEqual(plan.warnings, [
    "'log' changed (level): restart the gateway to apply it; a reload does not",
  ]);
});

test('reload plan - a changed connection restarts every bridge that names it, even where an endpoint overrides the changed field', () => {
  const lines = (mainUrl: string, mainPrefetch: number) => [
    'connections:',
    `  main: { type: memory, url: "${mainUrl}", prefetch: ${mainPrefetch} }`,
    '  other: { type: memory, url: "memory://other" }',
    'bridges:',
    '  - { name: in, source: { type: memory, connection: main, topic: t1 }, target: { type: jms, destination: queue://q } }',
    '  - { name: out, source: { type: jms, destination: queue://q }, target: { type: memory, connection: main, topic: t2 } }',
    '  - { name: pinned, source: { type: memory, connection: main, topic: t3, prefetch: 5 }, target: { type: jms, destination: queue://q } }',
    '  - { name: elsewhere, source: { type: memory, connection: other, topic: t4 }, target: { type: jms, destination: queue://q } }',
    '  - { name: inline, source: { type: memory, url: "memory://main", topic: t5 }, target: { type: jms, destination: queue://q } }',
  ];
  const before = configOf(...lines('memory://main', 10));
  assert.deepEqual(summary(planReload(runningOn(before), configOf(...lines('memory://main2', 10)))).changed, {
    in: ["connection 'main'", 'source'],
    out: ["connection 'main'", 'target'],
    pinned: ["connection 'main'", 'source'],
  });
  // The pinned source sets prefetch itself: its resolved source is the same, its connection is not.
  assert.deepEqual(summary(planReload(runningOn(before), configOf(...lines('memory://main', 20)))), {
    added: [],
    removed: [],
    changed: {
      in: ["connection 'main'", 'source'],
      out: ["connection 'main'", 'target'],
      pinned: ["connection 'main'"],
    },
    unchanged: ['elsewhere', 'inline'],
  });
});

test('reload plan - gateway settings a bridge takes count as its own: shutdown deadline, connection factory send timeout', () => {
  const lines = (deadlineMs: number, sendTimeout: number) => [
    `shutdown: { deadlineMs: ${deadlineMs} }`,
    `connectionFactory: { sendTimeout: ${sendTimeout} }`,
    'bridges:',
    internal('plain', 'queue://a', 'queue://b'),
    internal('own', 'queue://c', 'queue://d', 'stopTimeoutMs: 1000'),
    '  - { name: timed, source: { type: jms, destination: queue://e }, target: { type: jms, destination: queue://f, sendTimeoutMs: 50 }, stopTimeoutMs: 1000 }',
  ];
  const before = configOf(...lines(10_000, 100));
  const longer = planReload(runningOn(before), configOf(...lines(20_000, 100)));
  assert.deepEqual(summary(longer).changed, { plain: ['shutdown.deadlineMs'] });
  assert.deepEqual(longer.warnings, []);
  const slower = planReload(runningOn(before), configOf(...lines(10_000, 200)));
  assert.deepEqual(summary(slower).changed, {
    plain: ['connectionFactory.sendTimeout'],
    own: ['connectionFactory.sendTimeout'],
  });
  assert.deepEqual(slower.warnings, [
    "'connectionFactory' changed (sendTimeout): restart the gateway to apply it; a reload does not",
  ]);
});

test('reload plan - new destinations are created; changed and removed ones are reported, not applied', () => {
  const before = configOf(
    'destinations:',
    '  queues: [{ name: kept, redeliveryLimit: 3 }, { name: dropped }, { name: same }]',
    '  topics: [{ name: events }]',
    '  distributedQueues: [{ name: spread, members: [{ name: m1 }, { name: m2 }] }]',
  );
  const after = configOf(
    'destinations:',
    '  queues: [{ name: kept, redeliveryLimit: 5, errorDestination: queue://same }, { name: same }, { name: fresh }]',
    '  topics: [{ name: events }, { name: news }]',
    '  distributedQueues:',
    '    - { name: spread, members: [{ name: m1 }, { name: m2 }, { name: m3 }] }',
    '    - { name: wide, members: [{ name: w1 }] }',
  );
  const plan = planReload(runningOn(before), after);
  assert.deepEqual(plan.create, ['queue://fresh', 'topic://news', 'queue://wide']);
  assert.equal(plan.warnings.length, 3);
  assert.match(
    plan.warnings[0]!,
    /^destination 'queue:\/\/kept' is configured with settings it does not run with \(errorDestination, redeliveryLimit\): .*delete it through the admin API and reload$/,
  );
  assert.match(
    plan.warnings[1]!,
    /^destination 'queue:\/\/dropped' is no longer configured: it keeps running/,
  );
  assert.match(plan.warnings[2]!, /^distributed destination 'queue:\/\/spread' changed \(members\)/);
});

test('reload plan - a destination that runs with other settings than configured is reported even when the file did not change it', () => {
  const config = configOf('destinations: { queues: [{ name: q, redeliveryLimit: 3 }] }');
  // Recovered from the store with the settings of an older file.
  const running = runningOn(config, {});
  running.destinations.set('queue://q', { redeliveryLimit: 1 });
  const plan = planReload(running, config);
  assert.deepEqual(plan.create, []);
  assert.equal(plan.warnings.length, 1);
  assert.match(
    plan.warnings[0]!,
    /'queue:\/\/q' is configured with settings it does not run with \(redeliveryLimit\)/,
  );
});

test('reload plan - store, admin and engine settings are reported against what the process started with, at every reload', () => {
  const started = configOf('admin: { enabled: false, port: 9000 }');
  const edited = configOf('engine: { expirationScanIntervalMs: 500 }');
  const running = { ...runningOn(started), current: edited };
  const plan = planReload(running, edited);
  assert.deepEqual(plan.warnings, [
    "'admin' changed (port): restart the gateway to apply it; a reload does not",
    "'engine' changed (expirationScanIntervalMs): restart the gateway to apply it; a reload does not",
  ]);
});
