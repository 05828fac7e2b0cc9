import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { ConfigError, type LoadOptions, loadConfig, parseConfig } from '../../../src/config/load-config.js';
import { DESTINATION_NAME_PATTERN } from '../../../src/jms/destination/destination-name.js';
import { fakeRegistry } from './fake-connectors.js';

const options: LoadOptions = { registry: fakeRegistry(), env: {} };

/** The problems `text` has, or [] when it loads. */
function problemsOf(text: string, opts: LoadOptions = options): readonly string[] {
  try {
    parseConfig(text, 'gw.yaml', opts);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;

test('config - the embedded default configuration loads', async () => {
  const { config } = await loadConfig('config/gateway.yaml', { registry: builtinRegistry, env: {} });
  assert.equal(config.store.path, './data');
  assert.equal(config.admin.port, 8161);
  assert.ok(config.destinations.queues.some((q) => q.name === 'demo.in'));
  assert.deepEqual(
    config.bridges.map((b) => b.name),
    ['demo'],
  );
});

test('config - an empty file, one of only comments and a null document are refused at their place', () => {
  const empty =
    'the configuration is empty (nothing but comments, or null): write the settings to run (config/gateway.yaml is an example), or {} for every default';
  for (const [text, place] of [
    ['', '1:1'],
    ['\n\n', '1:1'],
    ['# the gateway\n# more comments\n', '1:1'],
    ['# a comment\nnull\n', '2:1'],
    ['~\n', '1:1'],
    ['---\n...\n', '1:1'],
  ] as const)
    assert.deepEqual(problemsOf(text), [`gw.yaml:${place}: ${empty}`], JSON.stringify(text));
});

test('config - an empty mapping is every default', () => {
  const { config } = parseConfig('{}\n', 'empty.yaml', options);
  assert.deepEqual(config.store, { path: './data', memory: false, synchronous: 'full' });
  assert.deepEqual(config.admin, { enabled: true, host: '127.0.0.1', port: 8161 });
  assert.equal(config.shutdown.deadlineMs, 10_000);
  assert.equal(config.engine.autoCreateDestinations, true);
  assert.equal(config.engine.throttling.enabled, false);
  assert.deepEqual(config.connectionFactory, {
    messagesMaximum: 10,
    redeliveryDelay: 0,
    acknowledgePolicy: 'all',
    sendTimeout: 10_000,
  });
  assert.deepEqual(config.bridges, []);
});

test('config - every problem is listed with file, line, column and path', () => {
  const problems = problemsOf(
    yaml(
      'destinations:',
      '  queues:',
      '    - name: ""',
      '    - name: q',
      '      redeliveryLimit: many',
      '  topicz: []',
      'extra: 1',
    ),
  );
  assert.deepEqual(problems, [
    `gw.yaml:3:13: destinations.queues[0].name: expected a string matching ${DESTINATION_NAME_PATTERN}`,
    'gw.yaml:5:24: destinations.queues[1].redeliveryLimit: expected an integer >= -1',
    "gw.yaml:6:3: destinations.topicz: unknown setting (did you mean 'topics'? known: distributedQueues, distributedTopics, queues, topics)",
    'gw.yaml:7:1: extra: unknown setting (known: admin, bridges, connectionFactory, connections, destinations, engine, ha, log, security, shutdown, store)',
  ]);
});

test('config - malformed YAML is reported with its position', () => {
  assert.throws(
    () => parseConfig('destinations: [\n', 'broken.yaml', options),
    (error: unknown) => error instanceof ConfigError && /^broken\.yaml:\d+:\d+: /.test(error.problems[0]!),
  );
});

test('config - destination settings are typed, and nested problems point at their value', () => {
  const { config } = parseConfig(
    yaml(
      'destinations:',
      '  queues:',
      '    - name: orders',
      '      redeliveryLimit: 3',
      '      errorDestination: queue://orders.errors',
      '      timeToDeliverOverride: "0 0 0 2 * * *"',
      '      expirationPolicy: { policy: log, fields: ["%header%"] }',
      '      keys: [{ property: JMSPriority, direction: descending }]',
      '    - name: orders.errors',
      '  distributedQueues:',
      '    - name: all',
      '      members: [{ name: a, weight: 2 }, { name: b }]',
    ),
    'gw.yaml',
    options,
  );
  assert.deepEqual(config.destinations.queues[0], {
    name: 'orders',
    options: {
      redeliveryLimit: 3,
      errorDestination: 'queue://orders.errors',
      timeToDeliverOverride: '0 0 0 2 * * *',
      expirationPolicy: { policy: 'log', fields: ['%header%'] },
      keys: [{ property: 'JMSPriority', direction: 'descending' }],
    },
  });
  assert.deepEqual(config.destinations.distributedQueues[0], {
    name: 'all',
    members: [
      { name: 'a', weight: 2 },
      { name: 'b', weight: 1 },
    ],
    loadBalancing: 'round-robin',
    memberOptions: {},
  });
  assert.deepEqual(
    problemsOf(
      yaml(
        'destinations:',
        '  queues:',
        '    - name: q',
        '      timeToDeliverOverride: "0 0 99 * * * *"',
        '      thresholds: { messagesHigh: 10, messagesLow: 20 }',
        '      expirationPolicy: { policy: discard, fields: [a] }',
        '      redeliveryBackoff: { maximumMs: 5 }',
        '    - name: q',
      ),
    ),
    [
      "gw.yaml:4:30: destinations.queues[0].timeToDeliverOverride: not a valid schedule: invalid schedule at column 5: 99 is out of range (0-59) in field 'minute'",
      'gw.yaml:5:35: destinations.queues[0].thresholds.messagesHigh: expected at least messagesLow (20)',
      "gw.yaml:6:52: destinations.queues[0].expirationPolicy.fields: only applies with policy: 'log'",
      'gw.yaml:7:26: destinations.queues[0].redeliveryBackoff.multiplier: is required: Growth factor (>= 1).',
      "gw.yaml:8:13: destinations.queues[1].name: 'queue://q' is declared twice (first at destinations.queues[0])",
    ],
  );
});

test('config - -1 on a destination override is no override and loads; below -1 is refused (DLV-1, DLV-2, DLV-4)', () => {
  const { config } = parseConfig(
    yaml(
      'destinations:',
      '  queues:',
      '    - { name: q, redeliveryLimit: -1, redeliveryDelayOverride: -1, timeToLiveOverride: -1 }',
    ),
    'gw.yaml',
    options,
  );
  assert.deepEqual(config.destinations.queues[0]?.options, {
    redeliveryLimit: -1,
    redeliveryDelayOverride: -1,
    timeToLiveOverride: -1,
  });
  assert.deepEqual(
    problemsOf(yaml('destinations:', '  queues:', '    - { name: q, timeToLiveOverride: -2 }')),
    ['gw.yaml:3:38: destinations.queues[0].timeToLiveOverride: expected an integer >= -1'],
  );
});

test('config - an error destination must be a declared queue or topic, not the destination itself nor a distributed one (DLV-3)', () => {
  const problems = problemsOf(
    yaml(
      'destinations:',
      '  queues:',
      '    - { name: typo, errorDestination: queue://orders.erors }',
      '    - { name: self, errorDestination: queue://self }',
      '    - { name: spread, errorDestination: queue://all }',
      '    - { name: alias, errorDestination: queue://all/a }',
      '    - { name: fine, errorDestination: queue://a }',
      '    - { name: orders.errors }',
      '  topics:',
      '    - { name: t, errorDestination: topic://nowhere }',
      '  distributedQueues:',
      '    - { name: all, members: [{ name: a }, { name: b }], memberOptions: { errorDestination: queue://b } }',
    ),
  );
  assert.deepEqual(problems, [
    "gw.yaml:3:39: destinations.queues[0].errorDestination: destination 'queue://orders.erors' is not declared under destinations: an error destination is never created on first use, so declare it (under destinations.queues)",
    'gw.yaml:4:39: destinations.queues[1].errorDestination: is the destination itself: its undeliverable messages would come straight back to it; name another queue or topic',
    "gw.yaml:5:41: destinations.queues[2].errorDestination: 'queue://all' is a distributed destination: an error destination must be a queue or topic (name one of its members, e.g. 'queue://a')",
    "gw.yaml:6:40: destinations.queues[3].errorDestination: 'queue://all/a' is a member's alias: name the member itself, 'queue://a'",
    "gw.yaml:10:36: destinations.topics[0].errorDestination: destination 'topic://nowhere' is not declared under destinations: an error destination is never created on first use, so declare it (under destinations.topics)",
    "gw.yaml:12:92: destinations.distributedQueues[0].memberOptions.errorDestination: 'queue://b' is a member of this distributed destination: its undeliverable messages would come straight back to it; name another queue or topic",
  ]);
  assert.deepEqual(
    problemsOf(
      yaml(
        'engine: { autoCreateDestinations: true }',
        'destinations:',
        '  queues: [{ name: q, errorDestination: queue://q.errors }]',
      ),
    ).length,
    1,
    'auto-creation does not make an undeclared error destination acceptable',
  );
});

test('config - ${ENV} references are substituted; an unset one is named; values are never echoed', () => {
  const env = { BROKER_URL: 'memory://user:s3cret@host', PREFETCH: '25', TOPIC: 'orders' };
  const text = yaml(
    'bridges:',
    '  - name: in',
    '    source: { type: memory, url: "${BROKER_URL}", topic: "${TOPIC}", prefetch: "${PREFETCH}" }',
    '    target: { type: jms, destination: "queue://$${literal}" }',
  );
  const { config } = parseConfig(text, 'gw.yaml', { ...options, env });
  const source = config.bridges[0]!.source as { config: { url: string; prefetch: number; topic: string } };
  assert.deepEqual(source.config, {
    url: env.BROKER_URL,
    topic: 'orders',
    prefetch: 25,
    sendDelayMs: 0,
    hang: false,
    key: { from: 'none' },
  });
  assert.equal((config.bridges[0]!.target as { destination: string }).destination, 'queue://${literal}');
  // Only the credential of the secret URL is a secret; the host, and values of other fields, are not.
  assert.ok(config.secrets.has('s3cret'));
  assert.ok(!config.secrets.has(env.BROKER_URL) && !config.secrets.has('orders'));

  assert.deepEqual(problemsOf(text, { ...options, env: { PREFETCH: '25', TOPIC: 'o' } }), [
    "gw.yaml:3:34: bridges[0].source.url: environment variable 'BROKER_URL' is not set: export it before starting the gateway",
  ]);
  const leaked = problemsOf(text, { ...options, env: { ...env, BROKER_URL: 'http://s3cret-host' } });
  assert.deepEqual(leaked, ['gw.yaml:3:34: bridges[0].source.url: expected a string matching ^memory://']);
  assert.ok(!leaked.join('\n').includes('s3cret'));
  const unknownType = problemsOf(yaml('bridges:', '  - name: x', '    source: { type: "${T}" }'), {
    ...options,
    env: { T: 'supersecret' },
  });
  assert.ok(unknownType.some((p) => p.includes("unknown connector type '***'")));
  assert.ok(!unknownType.join('\n').includes('supersecret'));
});

test('config - an unknown connector type lists the known ones', () => {
  const problems = problemsOf(
    yaml(
      'bridges:',
      '  - name: a',
      '    source: { type: memoryy, topic: t }',
      '    target: { type: jms, destination: queue://out }',
    ),
  );
  assert.deepEqual(problems, [
    "gw.yaml:3:21: bridges[0].source.type: unknown connector type 'memoryy' (did you mean 'memory'? known: jms, memory, sinkonly)",
  ]);
});

test('config - broker endpoints merge over a named connection, whose problems are reported once', () => {
  const text = yaml(
    'connections:',
    '  main: { type: memory, url: "memory://main", prefetch: 5 }',
    'bridges:',
    '  - name: a',
    '    source: { type: memory, connection: main, topic: in }',
    '    target: { type: memory, connection: main, topic: out, prefetch: 7 }',
  );
  const { config } = parseConfig(text, 'gw.yaml', options);
  const { source, target } = config.bridges[0]!;
  assert.deepEqual((source as { config: unknown }).config, {
    url: 'memory://main',
    topic: 'in',
    prefetch: 5,
    sendDelayMs: 0,
    hang: false,
    key: { from: 'none' },
  });
  assert.equal((target as { connection: string }).connection, 'main');
  assert.equal((target as { config: { prefetch: number } }).config.prefetch, 7);

  assert.deepEqual(
    problemsOf(
      yaml(
        'connections:',
        '  main: { type: memory, url: "http://x", colour: red }',
        '  other: { type: sinkonly, url: x }',
        'bridges:',
        '  - name: a',
        '    source: { type: memory, connection: main, topic: in }',
        '    target: { type: memory, connection: nope, topic: out }',
        '    errorDestination: { type: memory, connection: other, topic: e }',
        '  - name: b',
        '    source: { type: memory, topic: in }',
        '    target: { type: sinkonly, url: x }',
      ),
    ),
    [
      'gw.yaml:2:30: connections.main.url: expected a string matching ^memory://',
      'gw.yaml:2:42: connections.main.colour: unknown setting (known: hang, key, prefetch, sendDelayMs, topic, url)',
      "gw.yaml:7:41: bridges[0].target.connection: unknown connection 'nope' (known: main, other)",
      "gw.yaml:8:51: bridges[0].errorDestination.connection: connection 'other' is of type 'sinkonly', this endpoint of type 'memory'",
      'gw.yaml:10:13: bridges[1].source.url: is required: Broker URL. (set it here, or in a connection named with `connection:`)',
    ],
  );
});

test('config - connectors check their endpoints, and the role each may play', () => {
  assert.deepEqual(
    problemsOf(
      yaml(
        'bridges:',
        '  - name: a',
        '    source: { type: sinkonly, url: x }',
        '    target: { type: jms, destination: queue://out }',
        '  - name: b',
        '    source: { type: memory, url: "memory://x", topic: "a#b" }',
        '    target: { type: memory, url: "memory://x", topic: t, key: { from: xpath, expression: "/order[" } }',
      ),
    ),
    [
      "gw.yaml:3:21: bridges[0].source.type: connector 'sinkonly' cannot be a source",
      'gw.yaml:6:55: bridges[1].source.topic: must not contain #',
      "gw.yaml:7:90: bridges[1].target.key.expression: invalid XPath expression '/order[': XPath parse error",
    ],
  );
});

test('config - the built-in connectors check their own cross-field rules', () => {
  const problems = problemsOf(
    yaml(
      'bridges:',
      '  - name: a',
      '    source: { type: amqp, url: "amqp://localhost" }',
      '    target: { type: kafka, brokers: ["k:9092"], topic: t, idempotent: true, acks: 1 }',
    ),
    { registry: builtinRegistry, env: {} },
  );
  assert.deepEqual(problems, [
    'gw.yaml:3:13: bridges[0].source.queue: is required for an amqp source: the queue to consume',
    'gw.yaml:4:83: bridges[0].target.acks: expected -1 (all in-sync replicas) while idempotent is true',
  ]);
});

test('config - bridges: selectors, names, loops, durable subscriptions and references are checked', () => {
  const problems = problemsOf(
    yaml(
      'engine: { autoCreateDestinations: false }',
      'destinations:',
      '  queues: [{ name: in }, { name: out }]',
      '  topics: [{ name: events }]',
      'bridges:',
      '  - name: a',
      '    source: { type: jms, destination: queue://in, selector: "color = " }',
      '    target: { type: jms, destination: queue://missing }',
      '    selector: "x = 1"',
      '  - name: a',
      '    source: { type: jms, destination: queue://in, durable: { clientId: c, name: s } }',
      '    target: { type: jms, destination: queue://in }',
      '  - name: b',
      '    source: { type: jms, destination: topic://events, durable: { clientId: c, name: s2 } }',
      '    target: { type: jms, destination: queue://out }',
      '    retry: { delay: { kind: fixed }, limit: -2 }',
      '    reconnect: { minMs: 100, maxMs: 10 }',
    ),
  );
  assert.deepEqual(problems, [
    "gw.yaml:7:61: bridges[0].source.selector: not a valid selector: invalid selector at column 8: expected a value after '=' but found end of selector",
    "gw.yaml:8:39: bridges[0].target.destination: destination 'queue://missing' is not declared under destinations: declare it, or set engine.autoCreateDestinations: true",
    'gw.yaml:9:15: bridges[0].selector: the source has a selector too: keep one (for a jms source they mean the same)',
    "gw.yaml:10:11: bridges[1].name: bridge 'a' is declared twice (first at bridges[0])",
    'gw.yaml:11:60: bridges[1].source.durable: a durable subscription needs a topic source (topic://name)',
    'gw.yaml:12:39: bridges[1].target.destination: is the source destination too: the bridge would loop',
    "gw.yaml:14:76: bridges[2].source.durable.clientId: client id 'c' is already used by bridges[1]: a client id belongs to one connection at a time",
    'gw.yaml:16:21: bridges[2].retry.delay.ms: is required: The delay, ms.',
    'gw.yaml:16:45: bridges[2].retry.limit: expected an integer >= -1',
    'gw.yaml:17:37: bridges[2].reconnect.maxMs: expected at least minMs (100)',
  ]);
});

test('config - a distributed/member name must name a declared member, even with auto-create, and a distributed topic has no durable subscriptions (DST-8)', () => {
  assert.deepEqual(
    problemsOf(
      yaml(
        'destinations:',
        '  distributedQueues: [{ name: all, members: [{ name: a }] }]',
        '  distributedTopics: [{ name: news, members: [{ name: n1 }] }]',
        'bridges:',
        '  - name: b',
        '    source: { type: jms, destination: queue://all/a }',
        '    target: { type: jms, destination: queue://all/nope }',
        '  - name: c',
        '    source: { type: jms, destination: topic://news, durable: { clientId: c, name: s } }',
        '    target: { type: jms, destination: queue://all }',
      ),
    ),
    [
      "gw.yaml:7:39: bridges[0].target.destination: destination 'queue://all/nope' names a member of a distributed destination ('distributed/member') that is not declared: declare the distributed destination with that member, or name a destination without '/'",
      "gw.yaml:9:62: bridges[1].source.durable: a durable subscription cannot be made on distributed topic 'topic://news': make it on one of its members ('topic://news/member')",
    ],
  );
});

test('config - the admin token only comes from the environment', () => {
  assert.deepEqual(problemsOf(yaml('admin:', '  token: abc')), [
    'gw.yaml:2:3: admin.token: the admin token is never written in the configuration: set the environment variable JMS_GATEWAY_ADMIN_TOKEN',
  ]);
  assert.deepEqual(problemsOf(yaml('admin:', '  host: 0.0.0.0')), [
    "gw.yaml:2:9: admin.host: '0.0.0.0' is not loopback, so the admin API needs a token: set the environment variable JMS_GATEWAY_ADMIN_TOKEN, or listen on 127.0.0.1",
  ]);
  assert.deepEqual(
    problemsOf(yaml('admin:', '  host: 0.0.0.0'), {
      ...options,
      env: { JMS_GATEWAY_ADMIN_TOKEN: '3f9c2a7be41d08c6f5a9e2d7b1c40e8a' },
    }),
    [],
  );
});

test('config - timeToDeliverOverride takes -1 for no override and ms written as a string; other negatives are refused (DLV-5)', () => {
  const queues = (value: string) =>
    yaml('destinations:', '  queues:', '    - name: q', `      timeToDeliverOverride: ${value}`);
  for (const accepted of ['-1', '0', '5000', '"5000"', '"-1"', '"0 0 0 2 * * *"'])
    assert.deepEqual(problemsOf(queues(accepted)), [], accepted);
  const [belowMinimum] = problemsOf(queues('-2'));
  assert.match(belowMinimum!, /^gw\.yaml:4:30: destinations\.queues\[0\]\.timeToDeliverOverride: /);
  assert.deepEqual(problemsOf(queues('"-5"')), [
    'gw.yaml:4:30: destinations.queues[0].timeToDeliverOverride: -5 ms: expected -1 (no override), ms >= 0 or a schedule',
  ]);
});

test('config - a maximum below its minimum is refused wherever the schema pairs them, at the value written', () => {
  const jms = (name: string) =>
    `source: { type: jms, destination: queue://${name}.in }, target: { type: jms, destination: queue://${name}.out }`;
  const problems = problemsOf(
    yaml(
      'engine:',
      '  throttling: { enabled: true, destinationThreshold: 50 }',
      'destinations:',
      '  queues:',
      '    - { name: a, messagesMaximum: 100, thresholds: { messagesHigh: 100 } }',
      '    - { name: b, redeliveryDelayOverride: 5000, redeliveryBackoff: { multiplier: 2, maximumMs: 1000 } }',
      '    - { name: c, thresholds: { bytesHigh: 10, bytesLow: 11 } }',
      'bridges:',
      `  - { name: r1, ${jms('r1')}, retry: { delay: { kind: exponential, initialMs: 5000, maxMs: 1000 } } }`,
      `  - { name: r2, ${jms('r2')}, retry: { delay: { kind: exponential, initialMs: 120000 } } }`,
      `  - { name: r3, ${jms('r3')}, reconnect: { minMs: 100000 } }`,
      `  - { name: r4, ${jms('r4')}, maxInFlight: 10, maxInFlightPerUnit: 20 }`,
    ),
  );
  assert.deepEqual(problems, [
    'gw.yaml:2:54: engine.throttling.destinationThreshold: expected at least lag (100, its default)',
    'gw.yaml:5:68: destinations.queues[0].thresholds.messagesHigh: expected less than messagesMaximum (100): flow control would never start, the quota refuses sends first',
    'gw.yaml:6:96: destinations.queues[1].redeliveryBackoff.maximumMs: expected at least redeliveryDelayOverride (5000): the cap would be below the first delay',
    'gw.yaml:7:43: destinations.queues[2].thresholds.bytesHigh: expected at least bytesLow (11)',
    'gw.yaml:9:181: bridges[0].retry.delay.maxMs: expected at least initialMs (5000)',
    'gw.yaml:10:168: bridges[1].retry.delay.initialMs: expected at most maxMs (60000, its default)',
    'gw.yaml:11:140: bridges[2].reconnect.minMs: expected at most maxMs (60000, its default)',
    'gw.yaml:12:133: bridges[3].maxInFlight: expected at least maxInFlightPerUnit (20)',
  ]);
});

test('config - a weak admin token is a problem validate reports, never showing the token', () => {
  assert.deepEqual(
    problemsOf(yaml('admin:', '  host: 0.0.0.0'), { ...options, env: { JMS_GATEWAY_ADMIN_TOKEN: 'secret' } }),
    [
      'gw.yaml:2:3: admin: the admin token in JMS_GATEWAY_ADMIN_TOKEN is not strong enough: it has 6 characters, at least 16 are needed; make one with: openssl rand -hex 16',
    ],
  );
});
