import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  Bridge,
  type BridgeConfig,
  ERROR_BRIDGE,
  ERROR_DELIVERY_COUNT,
  ERROR_ORIGIN,
  ERROR_REASON,
  InternalSink,
  InternalSource,
} from '../../../src/bridge/index.js';
import { type Message, Queue, Topic, TextMessage } from '../../../src/index.js';
import { type TestEngine, testEngine } from '../../helpers/engine.js';
import { FakeSink, FlakySink, idle, textOf } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

async function produce(
  t: TestEngine,
  destination: Queue | Topic,
  messages: { text: string; properties?: Record<string, string> }[],
): Promise<void> {
  const connection = t.connect();
  const producer = connection.createSession().createProducer(destination);
  for (const { text, properties } of messages) {
    const m = new TextMessage(text);
    for (const [name, value] of Object.entries(properties ?? {})) m.setStringProperty(name, value);
    await producer.send(m);
  }
  await connection.close();
}

async function drain(t: TestEngine, queue: Queue): Promise<Message[]> {
  const connection = t.connect();
  const consumer = connection.createSession().createConsumer(queue);
  const messages: Message[] = [];
  for (let m = await consumer.receiveNoWait(); m; m = await consumer.receiveNoWait()) messages.push(m);
  await connection.close();
  return messages;
}

function internalBridge(
  t: TestEngine,
  config: Partial<BridgeConfig> & Pick<BridgeConfig, 'source' | 'sink'>,
) {
  return new Bridge(
    {
      name: 'internal',
      retry: { delay: { kind: 'fixed', ms: 100 }, limit: -1 },
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
      ...config,
    },
    { clock: t.clock },
  );
}

const receiveSignal = () => new AbortController().signal;

/** Messages still on a queue: available plus pending (unacknowledged, uncommitted, delayed). */
function remaining(t: TestEngine, queue: Queue): number {
  const stats = t.engine.destinationStatistics(queue);
  return stats.messagesCurrent + stats.messagesPending;
}

const acknowledged = (t: TestEngine, queue: Queue) =>
  t.engine.destinationStatistics(queue).messagesAcknowledged;

test('bridge - internal queue to internal queue moves every message in order, properties kept (BRG-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  const output = new Queue('out');
  await produce(t, input, [{ text: 'm1', properties: { colour: 'red' } }, { text: 'm2' }, { text: 'm3' }]);
  const bridge = internalBridge(t, {
    source: new InternalSource({ engine: t.engine, destination: input }),
    sink: new InternalSink({ engine: t.engine, destination: 'queue://out' }),
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  const moved = await drain(t, output);
  assert.deepEqual(moved.map(textOf), ['m1', 'm2', 'm3']);
  assert.equal(moved[0]!.getStringProperty('colour'), 'red');
  assert.equal(remaining(t, input), 0);
  assert.equal(bridge.counters.out, 3);
});

test('bridge - an internal queue source with a selector leaves non-matching messages on the queue (BRG-3, SEL-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(t, input, [
    { text: 'r1', properties: { colour: 'red' } },
    { text: 'b1', properties: { colour: 'blue' } },
    { text: 'r2', properties: { colour: 'red' } },
  ]);
  const bridge = internalBridge(t, {
    source: new InternalSource({ engine: t.engine, destination: input, selector: "colour = 'red'" }),
    sink: new InternalSink({ engine: t.engine, destination: 'queue://out' }),
  });
  await bridge.start();
  await idle();
  await bridge.stop();
  assert.deepEqual((await drain(t, new Queue('out'))).map(textOf), ['r1', 'r2']);
  assert.deepEqual((await drain(t, input)).map(textOf), ['b1'], 'the blue message stays');
  assert.equal(bridge.counters.filtered, 0, 'the engine filtered, not the runtime');
});

test('bridge - a durable topic source with a selector keeps matching messages while stopped and drops the rest (BRG-3, DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const topic = new Topic('prices');
  const output = new Queue('out');
  const bridge = internalBridge(t, {
    source: new InternalSource({
      engine: t.engine,
      destination: 'topic://prices',
      selector: "colour = 'red'",
      durable: { clientId: 'bridge-prices', name: 'to-out' },
    }),
    sink: new InternalSink({ engine: t.engine, destination: output }),
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  await bridge.stop();
  await produce(t, topic, [
    { text: 'r1', properties: { colour: 'red' } },
    { text: 'b1', properties: { colour: 'blue' } },
    { text: 'r2', properties: { colour: 'red' } },
  ]);
  assert.deepEqual(await drain(t, output), [], 'nothing moves while the bridge is stopped');
  await bridge.start();
  await idle();
  assert.deepEqual((await drain(t, output)).map(textOf), ['r1', 'r2']);
});

test('bridge - order is kept at an internal target across a failing sink (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  const output = new Queue('out');
  await produce(
    t,
    input,
    ['m1', 'm2', 'm3', 'm4', 'm5'].map((text) => ({ text })),
  );
  const sink = new FlakySink(new InternalSink({ engine: t.engine, destination: output }));
  sink.failures.set('m2', 2);
  sink.failures.set('m4', 1);
  const bridge = internalBridge(t, {
    source: new InternalSource({ engine: t.engine, destination: input }),
    sink,
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  await t.clock.advance(1_000);
  assert.deepEqual((await drain(t, output)).map(textOf), ['m1', 'm2', 'm3', 'm4', 'm5']);
  assert.equal(bridge.counters.retried, 3);
  assert.equal(remaining(t, input), 0);
});

test('bridge - an internal error destination receives the message with origin, reason and delivery count (BRG-4, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(t, input, [{ text: 'bad' }, { text: 'good' }]);
  const sink = new FlakySink(new InternalSink({ engine: t.engine, destination: 'queue://out' }));
  sink.failures.set('bad', 10);
  const bridge = internalBridge(t, {
    source: new InternalSource({ engine: t.engine, destination: input }),
    sink,
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 1 },
    errorDestination: new InternalSink({ engine: t.engine, destination: 'queue://dlq' }),
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  await t.clock.advance(100);
  await idle();
  const dead = await drain(t, new Queue('dlq'));
  assert.deepEqual(dead.map(textOf), ['bad']);
  assert.equal(dead[0]!.getStringProperty(ERROR_ORIGIN), 'queue://in', 'where a replay sends it back');
  assert.equal(dead[0]!.getStringProperty(ERROR_BRIDGE), 'internal');
  assert.equal(dead[0]!.getIntProperty(ERROR_DELIVERY_COUNT), 2);
  assert.match(dead[0]!.getStringProperty(ERROR_REASON)!, /retry limit 1 reached/);
  assert.deepEqual((await drain(t, new Queue('out'))).map(textOf), ['good']);
  assert.equal(remaining(t, input), 0, 'rejected means acknowledged');
});

test('bridge - a bridge selector is refused on an internal source: the source takes it (BRG-3)', () => {
  const t = testEngine();
  assert.throws(
    () =>
      internalBridge(t, {
        source: new InternalSource({ engine: t.engine, destination: 'queue://in' }),
        sink: new InternalSink({ engine: t.engine, destination: 'queue://out' }),
        selector: "colour = 'red'",
      }),
    /give an internal source its selector on the source itself/,
  );
});

test('bridge - an internal source acknowledges out-of-order settles in receive order (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(t, input, [{ text: 'm1' }, { text: 'm2' }, { text: 'm3' }]);
  const source = new InternalSource({ engine: t.engine, destination: input });
  cleanup(() => source.close());
  await source.connect(receiveSignal());
  const [d1, d2, d3] = [
    await source.receive(receiveSignal()),
    await source.receive(receiveSignal()),
    await source.receive(receiveSignal()),
  ];
  await d2.settle({ kind: 'ack' });
  await d3.settle({ kind: 'reject', reason: new Error('in the error destination') });
  assert.equal(
    acknowledged(t, input),
    0,
    'm2 and m3 wait for m1: acknowledging them would acknowledge m1 too',
  );
  await d1.settle({ kind: 'ack' });
  assert.equal(acknowledged(t, input), 3);
  assert.equal(remaining(t, input), 0);
});

test('bridge - an internal source puts a retried message back without redelivering ones already settled (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(t, input, [{ text: 'm1' }, { text: 'm2' }, { text: 'm3' }]);
  const source = new InternalSource({ engine: t.engine, destination: input });
  cleanup(() => source.close());
  await source.connect(receiveSignal());
  const d1 = await source.receive(receiveSignal());
  const d2 = await source.receive(receiveSignal());
  await d1.settle({ kind: 'retry' });
  await d2.settle({ kind: 'ack' });
  const again = await source.receive(receiveSignal());
  assert.equal(textOf(again.message), 'm1');
  assert.equal(again.message.getJMSRedelivered(), true);
  await again.settle({ kind: 'ack' });
  const next = await source.receive(receiveSignal());
  assert.equal(textOf(next.message), 'm3', 'm2 came back from recover() and was acknowledged silently');
  await next.settle({ kind: 'ack' });
  assert.equal(remaining(t, input), 0);
});

test('bridge - a transacted internal source commits once every delivery of the transaction is settled (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(t, input, [{ text: 'm1' }, { text: 'm2' }, { text: 'm3' }]);
  const source = new InternalSource({
    engine: t.engine,
    destination: input,
    session: 'transacted',
    transactionSize: 2,
  });
  cleanup(() => source.close());
  await source.connect(receiveSignal());
  const d1 = await source.receive(receiveSignal());
  const d2 = await source.receive(receiveSignal());
  const held = new AbortController();
  const third = source.receive(held.signal);
  await idle();
  let thirdArrived = false;
  void third.then(() => (thirdArrived = true)).catch(() => {});
  await idle();
  assert.equal(thirdArrived, false, 'a full transaction holds reading');
  await d2.settle({ kind: 'ack' });
  assert.equal(acknowledged(t, input), 0, 'not committed while m1 is open');
  await d1.settle({ kind: 'ack' });
  assert.equal(acknowledged(t, input), 2);
  const d3 = await third;
  assert.equal(textOf(d3.message), 'm3');
  await d3.settle({ kind: 'ack' });
  assert.equal(remaining(t, input), 0);
});

test('bridge - a transacted internal source end to end through a bridge with parallel units (BRG-1, ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(
    t,
    input,
    ['a1', 'b1', 'a2', 'b2', 'a3'].map((text) => ({ text, properties: { JMSXGroupID: text[0]! } })),
  );
  const sink = new FlakySink(new InternalSink({ engine: t.engine, destination: 'queue://out' }));
  sink.failures.set('a1', 1);
  const bridge = internalBridge(t, {
    source: new InternalSource({
      engine: t.engine,
      destination: input,
      session: 'transacted',
      transactionSize: 3,
    }),
    sink,
    ordering: 'key',
    concurrency: 2,
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  await t.clock.advance(1_000);
  const out = (await drain(t, new Queue('out'))).map(textOf);
  assert.deepEqual(
    out.filter((x) => x.startsWith('a')),
    ['a1', 'a2', 'a3'],
  );
  assert.deepEqual(
    out.filter((x) => x.startsWith('b')),
    ['b1', 'b2'],
  );
  assert.equal(remaining(t, input), 0);
});

test('bridge - stopping a bridge over internal endpoints loses and duplicates nothing (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  const output = new Queue('out');
  const texts = Array.from({ length: 10 }, (_, i) => `m${i + 1}`);
  await produce(
    t,
    input,
    texts.map((text) => ({ text })),
  );
  const sink = new FlakySink(new InternalSink({ engine: t.engine, destination: output }));
  sink.failures.set('m4', 1);
  const bridge = internalBridge(t, {
    source: new InternalSource({ engine: t.engine, destination: input }),
    sink,
    ordering: 'none',
    concurrency: 3,
    stopTimeoutMs: 50,
  });
  await bridge.start();
  await idle();
  const stopped = bridge.stop();
  await t.clock.advance(50);
  await stopped;
  await bridge.start();
  await t.clock.advance(1_000);
  await bridge.stop();
  const moved = (await drain(t, output)).map(textOf);
  assert.deepEqual([...moved].sort(), [...texts].sort(), 'every message once');
  assert.equal(remaining(t, input), 0);
});

test('bridge - lag over an internal queue counts what the bridge holds and what waits on the queue', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('in');
  await produce(
    t,
    input,
    ['m1', 'm2', 'm3', 'm4', 'm5'].map((text) => ({ text })),
  );
  const sink = new FakeSink(t.clock);
  sink.hangAll();
  const source = new InternalSource({ engine: t.engine, destination: input });
  const bridge = internalBridge(t, { source, sink, maxInFlight: 2 });
  cleanup(() => bridge.stop());
  assert.equal(bridge.counters.lag, 0, 'a source not connected does not know its backlog');
  await bridge.start();
  await idle();
  assert.equal(bridge.counters.inFlight, 2);
  assert.equal(source.backlog(), 3);
  assert.equal(bridge.counters.lag, 5);
  for (let sent = 1; sent <= 5; sent++) {
    sink.confirmAll();
    await idle();
    assert.equal(bridge.counters.lag, 5 - sent, `after ${sent} confirmed`);
  }
  assert.equal(remaining(t, input), 0);
});

test('bridge - the backlog of a durable topic source is its subscription, of a non-durable one unknown', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const durable = new InternalSource({
    engine: t.engine,
    destination: 'topic://prices',
    durable: { clientId: 'lag', name: 'sub' },
  });
  cleanup(() => durable.close());
  const plain = new InternalSource({ engine: t.engine, destination: 'topic://prices' });
  cleanup(() => plain.close());
  await durable.connect(receiveSignal());
  await plain.connect(receiveSignal());
  await produce(t, new Topic('prices'), [{ text: 'p1' }, { text: 'p2' }]);
  assert.equal(durable.backlog(), 2);
  const delivery = await durable.receive(receiveSignal());
  assert.equal(durable.backlog(), 1, 'one handed out');
  await delivery.settle({ kind: 'ack' });
  assert.equal(durable.backlog(), 1);
  assert.equal(plain.backlog(), undefined);
});
