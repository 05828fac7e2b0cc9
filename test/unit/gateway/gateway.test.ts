import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../../src/config/load-config.js';
import type { GatewayConfig } from '../../../src/config/gateway-config.js';
import {
  Gateway,
  type GatewayConnectorContext,
  type GatewayLogger,
  silentGatewayLogger,
} from '../../../src/gateway/index.js';
import { DeliveryMode, Session, TextMessage, XMLMessage } from '../../../src/index.js';
import type { Message } from '../../../src/index.js';
import {
  parseSelector,
  setXPathLimitListener,
  setXPathLimits,
  xpathLimits,
} from '../../../src/jms/selector/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { statusChanges, until } from '../../helpers/until.js';
import { MemoryBroker, fakeRegistry } from '../config/fake-connectors.js';

/** A configuration from YAML lines, with the fake `memory` connector; in memory, no admin API. */
function configOf(broker: MemoryBroker, ...lines: string[]): GatewayConfig {
  const text = ['store: { memory: true }', 'admin: { enabled: false }', ...lines].join('\n');
  return parseConfig(text, 'gw.yaml', { registry: fakeRegistry(broker), env: {} }).config;
}

const texts = (messages: readonly Message[] | undefined) =>
  (messages ?? []).map((m) => (m as TextMessage).getText());

test('gateway - builds destinations and bridges from a configuration and moves messages along an internal route', async () => {
  const gateway = await Gateway.start(
    configOf(
      new MemoryBroker(),
      'destinations:',
      '  queues: [{ name: in }, { name: out }, { name: errors }]',
      '  distributedQueues: [{ name: spread, members: [{ name: a }, { name: b }] }]',
      'bridges:',
      '  - name: move',
      '    source: { type: jms, destination: queue://in }',
      '    target: { type: jms, destination: queue://out }',
      '    errorDestination: { type: jms, destination: queue://errors }',
    ),
    silentGatewayLogger,
  );
  const connection = gateway.connectionFactory.createConnection();
  try {
    assert.deepEqual(
      gateway.engine
        .destinations()
        .map((d) => d.toString())
        .sort(),
      ['queue://a', 'queue://b', 'queue://errors', 'queue://in', 'queue://out'],
    );
    connection.start();
    const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    const producer = session.createProducer(session.createQueue('in'));
    for (const text of ['one', 'two', 'three']) await producer.send(new TextMessage(text));
    const consumer = session.createConsumer(session.createQueue('out'));
    const received: string[] = [];
    for (let i = 0; i < 3; i++) received.push(((await consumer.receive(5_000)) as TextMessage).getText()!);
    assert.deepEqual(received, ['one', 'two', 'three']);
    assert.equal(gateway.bridge('move')?.counters.out, 3);
  } finally {
    await connection.close();
    assert.deepEqual(await gateway.stop(5_000), { clean: true });
  }
});

test("gateway - broker endpoints are built through the registry, with the runtime's XPath evaluator", async () => {
  const broker = new MemoryBroker();
  const gateway = await Gateway.start(
    configOf(
      broker,
      'connections:',
      '  main: { type: memory, url: "memory://main" }',
      'bridges:',
      '  - name: orders',
      '    source: { type: memory, connection: main, topic: orders.in }',
      '    selector: "region = \'EU\'"',
      '    target: { type: memory, connection: main, topic: orders.eu, key: { from: xpath, expression: /order/@id } }',
      '    errorDestination: { type: memory, connection: main, topic: orders.errors }',
    ),
    silentGatewayLogger,
  );
  try {
    // Validation tried each endpoint once already; these are the ones the gateway built.
    const created = broker.created.slice(-3);
    const eu = new XMLMessage('<order id="7"/>');
    eu.setStringProperty('region', 'EU');
    const us = new XMLMessage('<order id="8"/>');
    us.setStringProperty('region', 'US');
    broker.publish('orders.in', eu);
    broker.publish('orders.in', us);
    await until(() => broker.settled.length === 2, 'both settled', [broker.onChange.bind(broker)]);
    assert.equal(broker.topics.get('orders.eu')?.length, 1);
    assert.equal(gateway.bridge('orders')?.counters.filtered, 1);
    const contexts = created.map(({ role, config, context }) => ({
      role,
      topic: config.topic,
      name: context.name,
    }));
    assert.deepEqual(contexts, [
      { role: 'source', topic: 'orders.in', name: 'orders' },
      { role: 'sink', topic: 'orders.eu', name: 'orders' },
      { role: 'sink', topic: 'orders.errors', name: 'orders-errors' },
    ]);
    const sinkContext = created[1]!.context as GatewayConnectorContext;
    assert.equal(sinkContext.evaluateXPath(eu, '/order/@id'), '7');
    assert.equal(sinkContext.evaluateXPath(new XMLMessage('<order id='), '/order/@id'), null);
  } finally {
    await gateway.stop(5_000);
  }
});

test('gateway - the bridge control lists status and counters, pauses, resumes and restarts one bridge', async () => {
  const text = [
    'store: { memory: true }',
    'admin: { port: 0 }',
    'destinations:',
    '  queues: [{ name: in }, { name: out }, { name: idle.in }, { name: idle.out }]',
    'bridges:',
    '  - { name: busy, source: { type: jms, destination: queue://in }, target: { type: jms, destination: queue://out } }',
    '  - name: idle',
    '    autoStart: false',
    '    source: { type: jms, destination: queue://idle.in }',
    '    target: { type: jms, destination: queue://idle.out }',
  ].join('\n');
  const { config } = parseConfig(text, 'gw.yaml', { registry: fakeRegistry(), env: {} });
  const gateway = await Gateway.start(config, silentGatewayLogger);
  try {
    const control = gateway.control;
    const busy = statusChanges(gateway.bridge('busy'));
    const idle = statusChanges(gateway.bridge('idle'));
    await until(() => control.list()[0]?.status === 'connected', 'busy connected', [busy]);
    assert.deepEqual(
      control.list().map(({ name, status, source, target }) => ({ name, status, source, target })),
      [
        { name: 'busy', status: 'connected', source: 'queue://in', target: 'queue://out' },
        { name: 'idle', status: 'stopped', source: 'queue://idle.in', target: 'queue://idle.out' },
      ],
    );
    assert.equal(control.list()[0]!.counters.in, 0);

    const response = await fetch(`${gateway.adminUrl!}/bridges/busy/pause`, { method: 'POST' });
    assert.equal(response.status, 200);
    assert.equal(((await response.json()) as { status: string }).status, 'paused');
    await control.resume('busy');
    assert.equal(control.list()[0]!.status, 'connected');

    await assert.rejects(control.pause('idle'), /not running/);
    await control.restart('idle');
    await until(() => control.list()[1]?.status === 'connected', 'idle started by restart', [idle]);
    await control.restart('busy');
    await until(() => control.list()[0]?.status === 'connected', 'busy restarted', [busy]);
    await assert.rejects(control.pause('nope'), /there is no bridge 'nope'/);
    assert.equal((await fetch(`${gateway.adminUrl!}/bridges/nope/pause`, { method: 'POST' })).status, 404);
  } finally {
    await gateway.stop(5_000);
  }
});

test('gateway - stop lets in-flight messages finish and gives back the rest, losing nothing', async () => {
  const broker = new MemoryBroker();
  for (let i = 0; i < 50; i++) broker.publish('in', new TextMessage(`m${i}`));
  const clock = new FakeClock();
  const gateway = await Gateway.start(
    configOf(
      broker,
      'bridges:',
      '  - name: slow',
      '    source: { type: memory, url: "memory://x", topic: in }',
      '    target: { type: memory, url: "memory://x", topic: out, sendDelayMs: 20 }',
      '    ordering: none',
      '    concurrency: 4',
    ),
    silentGatewayLogger,
    { clock },
  );
  const sentOut = () => broker.topics.get('out')?.length ?? 0;
  let stopped: { clean: boolean } | undefined;
  try {
    // Each send takes 20 ms of the gateway's clock.
    for (let i = 0; i < 50 && sentOut() < 4; i++) await clock.advance(20);
    await until(() => sentOut() >= 4, 'some sent', [broker.onChange.bind(broker)]);
  } finally {
    // The sends in flight at the stop finish as the clock moves on (well inside the deadline).
    const stopping = gateway.stop(5_000);
    let done = false;
    void stopping.finally(() => (done = true));
    for (let i = 0; i < 50 && !done; i++) await clock.advance(20);
    stopped = await stopping;
  }
  assert.deepEqual(stopped, { clean: true });
  const out = texts(broker.topics.get('out'));
  const back = texts(broker.topics.get('in'));
  assert.ok(out.length >= 4);
  assert.deepEqual([...out, ...back].sort(), Array.from({ length: 50 }, (_, i) => `m${i}`).sort());
  assert.equal(gateway.bridge('slow')?.status, 'stopped');
});

test('gateway - a stop that passes its deadline closes anyway and says so', async () => {
  const broker = new MemoryBroker();
  broker.publish('in', new TextMessage('stuck'));
  const clock = new FakeClock();
  const gateway = await Gateway.start(
    configOf(
      broker,
      'bridges:',
      '  - name: stuck',
      '    source: { type: memory, url: "memory://x", topic: in }',
      '    target: { type: memory, url: "memory://x", topic: out, hang: true }',
      '    stopTimeoutMs: 60000',
    ),
    silentGatewayLogger,
    { clock },
  );
  let stopping: Promise<{ clean: boolean }> | undefined;
  try {
    await until(() => gateway.bridge('stuck')?.counters.inFlight === 1, 'the send under way', [
      broker.onChange.bind(broker),
    ]);
    let result: { clean: boolean } | undefined;
    stopping = gateway.stop(200);
    void stopping.then((r) => (result = r));
    await clock.advance(199);
    assert.equal(result, undefined, 'the stop waits for the stuck bridge until its deadline');
    await clock.advance(1);
    assert.deepEqual(await stopping, { clean: false });
  } finally {
    // Moved past the deadline whatever failed above, so the stop always ends.
    stopping ??= gateway.stop(200);
    await clock.advance(200);
    await stopping;
  }
});

test('gateway - check reports what building would refuse, with the path of the item', async () => {
  const broker = new MemoryBroker();
  const config = configOf(
    broker,
    'destinations:',
    '  queues: [{ name: ok }]',
    'bridges:',
    '  - { name: fine, source: { type: jms, destination: queue://ok }, target: { type: jms, destination: queue://x } }',
  );
  assert.deepEqual(await Gateway.check(config), []);
  // What validation would have caught, given to the gateway anyway (an embedding program's config).
  const broken: GatewayConfig = {
    ...config,
    destinations: { ...config.destinations, queues: [{ name: 'bad name', options: {} }] },
    bridges: [
      {
        ...config.bridges[0]!,
        source: { type: 'jms', destination: 'queue://ok', durable: { clientId: 'c', name: 'd' } },
      },
    ],
  };
  const problems = await Gateway.check(broken);
  assert.deepEqual(
    problems.map((p) => p.path),
    ['destinations.queues[0]', 'bridges[0]'],
  );
  assert.match(problems[1]!.message, /durable subscription needs a topic/);
});

test('gateway - a restart on the same file store keeps messages and recovered destinations', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-store-'));
  const text = [
    `store: { path: ${JSON.stringify(join(dir, 'data'))} }`,
    'admin: { enabled: false }',
    'destinations:',
    '  queues: [{ name: kept }]',
    '  distributedQueues: [{ name: spread, members: [{ name: a }, { name: b }] }]',
  ].join('\n');
  const { config } = parseConfig(text, 'gw.yaml', { registry: fakeRegistry(), env: {} });
  try {
    const first = await Gateway.start(config, silentGatewayLogger);
    try {
      const connection = first.connectionFactory.createConnection();
      const session = connection.createSession();
      const producer = session.createProducer(session.createQueue('kept'));
      producer.setDeliveryMode(DeliveryMode.PERSISTENT);
      await producer.send(new TextMessage('survives'));
      await connection.close();
    } finally {
      await first.stop(5_000);
    }

    const second = await Gateway.start(config, silentGatewayLogger);
    try {
      assert.equal(second.engine.destinationStatistics('queue://kept').messagesCurrent, 1);
    } finally {
      await second.stop(5_000);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('gateway - credentials of secret fields never reach the logs or the bridge view; the broker host does', async () => {
  const secret = 'memory://user:hunter2-secret@broker';
  const broker = new MemoryBroker();
  const text = [
    'store: { memory: true }',
    'admin: { enabled: false }',
    'bridges:',
    '  - name: in',
    '    source: { type: memory, url: "${BROKER_URL}", topic: in }',
    '    target: { type: jms, destination: queue://in.copy }',
  ].join('\n');
  const { config } = parseConfig(text, 'gw.yaml', {
    registry: fakeRegistry(broker),
    env: { BROKER_URL: secret },
  });
  const lines: string[] = [];
  const capture = (bindings: Record<string, unknown>): GatewayLogger => {
    const log = (fields: Record<string, unknown>, message: string) =>
      lines.push(JSON.stringify({ ...bindings, ...fields, message }));
    return {
      error: log,
      warn: log,
      info: log,
      debug: log,
      child: (more) => capture({ ...bindings, ...more }),
    };
  };
  const gateway = await Gateway.start(config, capture({}));
  try {
    await until(() => gateway.bridge('in')?.status === 'connected', 'connected', [
      statusChanges(gateway.bridge('in')),
    ]);
    const logged = lines.join('\n');
    assert.ok(logged.includes('source for memory://user:***@broker'), logged);
    assert.ok(!logged.includes('hunter2'), logged);
    assert.ok(!JSON.stringify(gateway.control.list()).includes('hunter2'));
  } finally {
    await gateway.stop(5_000);
  }
});

test('gateway - an exactly-once bridge keeps its duplicate window in the file store across a restart (BRG-2)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-window-'));
  const configFor = (broker: MemoryBroker) =>
    parseConfig(
      [
        `store: { path: ${JSON.stringify(join(dir, 'data'))} }`,
        'admin: { enabled: false }',
        'destinations:',
        '  queues: [{ name: out }]',
        'bridges:',
        '  - name: once',
        '    qos: exactly-once',
        '    source: { type: memory, url: "memory://x", topic: in }',
        '    target: { type: jms, destination: queue://out }',
      ].join('\n'),
      'gw.yaml',
      { registry: fakeRegistry(broker), env: {} },
    ).config;
  const order = (id: string) => {
    const message = new TextMessage(id);
    message.setJMSMessageID(`ID:${id}`);
    return message;
  };
  try {
    const before = new MemoryBroker();
    const first = await Gateway.start(configFor(before), silentGatewayLogger);
    try {
      before.publish('in', order('order-1'));
      await until(() => first.bridge('once')?.counters.out === 1, 'the first forward', [
        before.onChange.bind(before),
      ]);
    } finally {
      await first.stop(5_000);
    }

    // The source hands order-1 over again (its acknowledgement was lost), then a new order.
    const after = new MemoryBroker();
    const second = await Gateway.start(configFor(after), silentGatewayLogger);
    try {
      after.publish('in', order('order-1'));
      after.publish('in', order('order-2'));
      await until(() => second.bridge('once')?.counters.in === 2, 'both reads', [after.onChange.bind(after)]);
      await until(() => after.settled.length === 2, 'both settled at the source', [
        after.onChange.bind(after),
      ]);
      assert.equal(second.bridge('once')?.counters.duplicates, 1);
      assert.equal(second.bridge('once')?.counters.out, 1);
      const connection = second.connectionFactory.createConnection();
      const session = connection.createSession();
      const held = session.createBrowser(session.createQueue('out')).getEnumeration();
      assert.deepEqual(
        held.map((message) => (message as TextMessage).getText()),
        ['order-1', 'order-2'],
      );
      await connection.close();
    } finally {
      await second.stop(5_000);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('gateway - applies engine.xpath and logs each message an XPath limit stops at debug (SEL-4)', async (t) => {
  const before = setXPathLimits({});
  const previousListener = setXPathLimitListener(null);
  t.after(() => {
    setXPathLimits(before);
    setXPathLimitListener(previousListener);
  });
  const debug: { fields: Record<string, unknown>; message: string }[] = [];
  const logger: GatewayLogger = {
    ...silentGatewayLogger,
    debug: (fields, message) => debug.push({ fields, message }),
    child: () => logger,
  };
  const gateway = await Gateway.start(
    configOf(new MemoryBroker(), 'engine: { xpath: { maxAttributes: 2, maxSteps: 1234 } }'),
    logger,
  );
  try {
    assert.equal(xpathLimits().maxAttributes, 2);
    assert.equal(xpathLimits().maxSteps, 1234);
    const message = new XMLMessage('<order a="1" b="2" c="3"><id>1</id></order>');
    assert.equal(parseSelector("XPATH '/order/id'").evaluate(message), null);
    assert.deepEqual(debug, [
      {
        fields: { limit: 'maxAttributes' },
        message: 'xpath limit exceeded: no XPath selector selects the message',
      },
    ]);
  } finally {
    await gateway.stop(5_000);
  }
});
