/**
 * An internal source across stop, restart, pause and resume: what it read ahead and never passed
 * to the bridge goes back uncounted (SES-4, DLV-2), and a paused bridge holds nothing it has not
 * started on (BRG-7).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, type BridgeConfig, InternalSource } from '../../../src/bridge/index.js';
import { DeliveryMode, type Queue, TextMessage } from '../../../src/index.js';
import { type TestEngine, testEngine } from '../../helpers/engine.js';
import { FakeSink, idle, textOf } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

async function produce(t: TestEngine, queue: Queue, texts: string[], persistent = true): Promise<void> {
  const connection = t.connect();
  const producer = connection.createSession().createProducer(queue);
  producer.setDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
  for (const text of texts) await producer.send(new TextMessage(text));
  await connection.close();
}

/** The queue's available messages, as an operator browsing it sees them. */
function browse(t: TestEngine, queue: Queue): { text: string; deliveryCount: number }[] {
  const connection = t.connect();
  const messages = connection
    .createSession()
    .createBrowser(queue)
    .getEnumeration()
    .map((m) => ({ text: textOf(m), deliveryCount: m.deliveryCount }));
  void connection.close();
  return messages;
}

function setUp(t: TestEngine, config: Partial<BridgeConfig> = {}) {
  const sink = new FakeSink(t.clock);
  const bridge = new Bridge(
    {
      name: 'orders-out',
      source: new InternalSource({ engine: t.engine, destination: 'queue://orders' }),
      sink,
      retry: { delay: { kind: 'fixed', ms: 100 }, limit: -1 },
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
      stopTimeoutMs: 1_000,
      ...config,
    },
    { clock: t.clock },
  );
  return { sink, bridge };
}

/** `orders` gives up a message after one redelivery (DLV-2) into `orders-parked`. */
async function ordersWithLimitOne(t: TestEngine): Promise<Queue> {
  await t.engine.createQueue('orders-parked');
  return t.engine.createQueue('orders', { redeliveryLimit: 1, errorDestination: 'queue://orders-parked' });
}

const parked = (t: TestEngine) => t.engine.destinationStatistics('queue://orders-parked').messagesCurrent;

async function stopWithin(t: TestEngine, bridge: Bridge, ms: number): Promise<void> {
  const stopping = bridge.stop();
  await t.clock.advance(ms);
  await stopping;
}

test('bridge - a restart counts one delivery for a message the target was still sending, not two (SES-4, DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await ordersWithLimitOne(t);
  await produce(t, orders, ['m1']);
  const { sink, bridge } = setUp(t);
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  await idle();
  assert.equal(sink.hanging, 1);
  await stopWithin(t, bridge, 1_000);
  assert.equal(parked(t), 0, 'given back unsent once: within the redelivery limit of 1');
  assert.deepEqual(browse(t, orders), [{ text: 'm1', deliveryCount: 1 }]);

  sink.behaviour = () => 'ok';
  await bridge.start();
  await idle();
  assert.deepEqual(sink.texts, ['m1']);
  assert.equal(sink.attempts.at(-1)!.deliveryCount, 2, 'the bridge had it once before the restart');
  assert.equal(parked(t), 0);
});

test('bridge - a message that arrives while the bridge is paused and stopped is not counted as delivered (SES-4, DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await ordersWithLimitOne(t);
  const { sink, bridge } = setUp(t);
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  await bridge.pause();
  await produce(t, orders, ['m1']);
  await idle();
  await bridge.stop();
  assert.deepEqual(browse(t, orders), [{ text: 'm1', deliveryCount: 0 }]);

  sink.failNext('m1', 1);
  await bridge.start();
  await t.clock.advance(100);
  await idle();
  assert.deepEqual(
    sink.attempts.map((a) => [a.text, a.deliveryCount, a.redelivered]),
    [
      ['m1', 1, false],
      ['m1', 2, true],
    ],
  );
  assert.deepEqual(sink.texts, ['m1'], 'one failure is within the redelivery limit of 1');
  assert.equal(parked(t), 0);
});

test('bridge - a paused internal source holds nothing: the queue keeps every message, uncounted, until resume takes them in order (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await t.engine.createQueue('orders');
  const { sink, bridge } = setUp(t);
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  await bridge.pause();
  await produce(t, orders, ['m1', 'm2', 'm3']);
  await idle();
  assert.deepEqual(
    browse(t, orders),
    ['m1', 'm2', 'm3'].map((text) => ({ text, deliveryCount: 0 })),
    'an operator sees and can move every message',
  );
  assert.equal(sink.attempts.length, 0, 'nothing read while paused');
  assert.equal(bridge.counters.lag, 3);

  await bridge.resume();
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3']);
  assert.deepEqual(
    sink.attempts.map((a) => a.deliveryCount),
    [1, 1, 1],
  );
  assert.equal(t.engine.destinationStatistics(orders).messagesCurrent, 0);
});

test('bridge - pausing with messages already read lets them finish and leaves the rest on the queue, in order (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await t.engine.createQueue('orders');
  await produce(t, orders, ['m1', 'm2', 'm3', 'm4']);
  const { sink, bridge } = setUp(t, { maxInFlight: 2 });
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  await idle();
  assert.equal(sink.hanging, 1, 'one unit: m1 is sent, m2 waits behind it');
  await bridge.pause();
  sink.behaviour = () => 'ok';
  sink.confirmAll();
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2'], 'what the bridge had read still goes out');
  assert.deepEqual(
    browse(t, orders).map((m) => [m.text, m.deliveryCount]),
    [
      ['m3', 0],
      ['m4', 0],
    ],
  );
  await bridge.resume();
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4']);
});

test('bridge - a message that reaches the internal source as the bridge pauses is passed on, not held (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const orders = await t.engine.createQueue('orders');
  const { sink, bridge } = setUp(t);
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  const connection = t.connect();
  cleanup(() => connection.close());
  const producer = connection.createSession().createProducer(orders);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  const sent = producer.send(new TextMessage('m1'));
  const pausing = bridge.pause();
  await sent;
  await pausing;
  await idle();
  assert.deepEqual(
    [...sink.texts, ...browse(t, orders).map((m) => m.text)],
    ['m1'],
    'sent, or still on the queue for an operator',
  );
  assert.equal(t.engine.destinationStatistics(orders).messagesPending, 0, 'not held by the paused source');
  await bridge.resume();
  await idle();
  assert.deepEqual(sink.texts, ['m1']);
});

test('bridge - a paused durable topic source leaves published messages in its subscription, uncounted (BRG-7, DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const prices = await t.engine.createTopic('prices');
  const sink = new FakeSink(t.clock);
  const bridge = new Bridge(
    {
      name: 'prices-out',
      source: new InternalSource({
        engine: t.engine,
        destination: prices,
        durable: { clientId: 'bridge-prices', name: 'prices-out' },
      }),
      sink,
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
    },
    { clock: t.clock },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  await bridge.pause();
  const connection = t.connect();
  cleanup(() => connection.close());
  const producer = connection.createSession().createProducer(prices);
  for (const text of ['p1', 'p2']) await producer.send(new TextMessage(text));
  await idle();
  const subscription = () =>
    t.engine.durableSubscriptions().find((s) => s.clientId === 'bridge-prices' && s.name === 'prices-out');
  assert.equal(subscription()?.messages, 2);
  assert.equal(sink.attempts.length, 0);
  await bridge.stop();
  await bridge.start();
  await idle();
  assert.deepEqual(
    sink.attempts.map((a) => [a.text, a.deliveryCount]),
    [
      ['p1', 1],
      ['p2', 1],
    ],
  );
});
