import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { repositoryRoot, runCli, workspace } from './gateway-harness.js';

const BAD = [
  'destinations:',
  '  queues:',
  '    - name: orders',
  '      redeliveryLimt: 3',
  'bridges:',
  '  - name: out',
  '    source: { type: jms, destination: queue://orders, selector: "region = " }',
  '    target: { type: amqpp, url: "${SOME_URL}", queue: x }',
  '  - name: out',
  '    source: { type: jms, destination: queue://orders, durable: { clientId: c, name: d } }',
  '    target: { type: kafka, brokers: ["127.0.0.1:1"], topic: t, idempotent: true, acks: 0 }',
  '',
].join('\n');

test(
  'gateway validate - a good configuration prints ok and connects to nothing',
  { timeout: 60_000 },
  async () => {
    // The broker endpoints point at closed ports: validate must not try them.
    const space = await workspace({
      'good.yaml': [
        'connections:',
        '  rabbit: { type: amqp, url: "${AMQP_URL}" }',
        'bridges:',
        '  - name: in',
        '    source: { type: amqp, connection: rabbit, queue: orders }',
        '    target: { type: kafka, brokers: ["127.0.0.1:1"], topic: orders }',
        '',
      ].join('\n'),
    });
    try {
      const started = Date.now();
      const result = await runCli(['validate', space.path('good.yaml')], space.dir, {
        AMQP_URL: 'amqp://user:pw@127.0.0.1:1',
      });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'ok\n');
      assert.ok(Date.now() - started < 30_000);
      const defaults = await runCli(['validate', join(repositoryRoot, 'config/gateway.yaml')], space.dir);
      assert.equal(defaults.code, 0, defaults.stderr);
    } finally {
      await space.cleanup();
    }
  },
);

test('gateway validate - malformed YAML exits 1 with file:line:col', { timeout: 60_000 }, async () => {
  const space = await workspace({ 'broken.yaml': 'bridges:\n  - name: a\n    source: { type: jms\n' });
  try {
    const result = await runCli(['validate', space.path('broken.yaml')], space.dir);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /broken\.yaml:\d+:\d+: /);
    assert.equal(result.stdout, '');
  } finally {
    await space.cleanup();
  }
});

test(
  'gateway validate - lists every problem run would reject, like a linter; run refuses the same file',
  { timeout: 90_000 },
  async () => {
    const space = await workspace({ 'bad.yaml': BAD });
    try {
      const file = space.path('bad.yaml');
      const validate = await runCli(['validate', file], space.dir, {
        SOME_URL: 'amqp://user:secret-pw@host',
      });
      assert.equal(validate.code, 1);
      const lines = validate.stderr.trim().split('\n');
      assert.deepEqual(lines, [
        `${file}:4:7: destinations.queues[0].redeliveryLimt: unknown setting (did you mean 'redeliveryLimit'? known: bytesMaximum, errorDestination, expirationPolicy, keys, messagesMaximum, name, redeliveryBackoff, redeliveryDelayOverride, redeliveryLimit, storeEnabled, thresholds, timeToDeliverOverride, timeToLiveOverride, unitOfOrderProperty)`,
        `${file}:7:65: bridges[0].source.selector: not a valid selector: invalid selector at column 9: expected a value after '=' but found end of selector`,
        `${file}:8:21: bridges[0].target.type: unknown connector type 'amqpp' (did you mean 'amqp'? known: amqp, jms, kafka, mqtt)`,
        `${file}:9:11: bridges[1].name: bridge 'out' is declared twice (first at bridges[0])`,
        `${file}:10:64: bridges[1].source.durable: a durable subscription needs a topic source (topic://name)`,
        `${file}:11:88: bridges[1].target.acks: expected -1 (all in-sync replicas) while idempotent is true`,
        `6 problems in '${file}'`,
      ]);
      assert.ok(!validate.stderr.includes('secret-pw'));

      const run = await runCli(['run', '--config', file, '--admin-port', '0'], space.dir, {
        SOME_URL: 'amqp://user:secret-pw@host',
      });
      assert.equal(run.code, 1);
      assert.deepEqual(run.stderr.trim().split('\n'), lines);
      assert.equal(run.stdout, '');
    } finally {
      await space.cleanup();
    }
  },
);

test(
  'gateway validate - an unset environment variable is named, its place given',
  { timeout: 60_000 },
  async () => {
    const space = await workspace({
      'env.yaml':
        'bridges:\n  - name: a\n    source: { type: amqp, url: "${NOT_SET_ANYWHERE}", queue: q }\n    target: { type: jms, destination: queue://x }\n',
    });
    try {
      const result = await runCli(['validate', space.path('env.yaml')], space.dir);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /env\.yaml:3:32: bridges\[0\]\.source\.url: environment variable 'NOT_SET_ANYWHERE' is not set/,
      );
    } finally {
      await space.cleanup();
    }
  },
);

test(
  'gateway validate - an empty file, a maximum below its minimum and an alias bomb exit 1 with file:line:col, at once',
  { timeout: 90_000 },
  async () => {
    const bomb = ['x0: &a0 "lol"'];
    for (let level = 1; level <= 10; level++)
      bomb.push(`x${level}: &a${level} [${Array.from({ length: 9 }, () => `*a${level - 1}`).join(', ')}]`);
    bomb.push('bridges: *a10', '');
    const space = await workspace({
      'empty.yaml': '# nothing configured yet\n',
      'range.yaml': [
        'bridges:',
        '  - name: r',
        '    source: { type: jms, destination: queue://in }',
        '    target: { type: jms, destination: queue://out }',
        '    retry: { delay: { kind: exponential, initialMs: 5000, maxMs: 1000 } }',
        '',
      ].join('\n'),
      'bomb.yaml': bomb.join('\n'),
    });
    try {
      const empty = await runCli(['validate', space.path('empty.yaml')], space.dir);
      assert.equal(empty.code, 1);
      assert.match(empty.stderr, /empty\.yaml:1:1: the configuration is empty/);
      const range = await runCli(['validate', space.path('range.yaml')], space.dir);
      assert.equal(range.code, 1);
      assert.match(
        range.stderr,
        /range\.yaml:5:66: bridges\[0\]\.retry\.delay\.maxMs: expected at least initialMs \(5000\)/,
      );
      const started = Date.now();
      const aliases = await runCli(['validate', space.path('bomb.yaml')], space.dir);
      assert.equal(aliases.code, 1);
      assert.match(
        aliases.stderr,
        /bomb\.yaml:\d+:\d+: alias '\*a\d+' takes the values aliases stand for past the limit/,
      );
      assert.ok(Date.now() - started < 30_000, 'a process start, not a minute of expansion');
    } finally {
      await space.cleanup();
    }
  },
);
