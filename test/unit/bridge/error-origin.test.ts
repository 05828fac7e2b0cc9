/**
 * What a bridge records as the origin of a message it parks, and what replaying to that origin
 * does: an internal source's destination can be sent back to; an external source cannot.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DestinationOperations } from '../../../src/admin/destination-operations.js';
import {
  Bridge,
  type BridgeConfig,
  ERROR_BRIDGE,
  ERROR_ORIGIN,
  ERROR_REASON,
  ERROR_TIME,
  InternalSink,
  InternalSource,
} from '../../../src/bridge/index.js';
import { type Message, Queue, TextMessage, type Topic } from '../../../src/index.js';
import { type TestEngine, testEngine } from '../../helpers/engine.js';
import { FakeSink, FakeSource, idle, message, textOf } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

async function produce(t: TestEngine, destination: Queue | Topic, texts: string[]): Promise<void> {
  const connection = t.connect();
  const producer = connection.createSession().createProducer(destination);
  for (const text of texts) {
    const m = new TextMessage(text);
    m.setStringProperty('region', 'eu');
    await producer.send(m);
  }
  await connection.close();
}

async function drain(t: TestEngine, queue: string): Promise<Message[]> {
  const connection = t.connect();
  const consumer = connection.createSession().createConsumer(new Queue(queue));
  const messages: Message[] = [];
  for (let m = await consumer.receiveNoWait(); m; m = await consumer.receiveNoWait()) messages.push(m);
  await connection.close();
  return messages;
}

function browse(t: TestEngine, queue: string): Message[] {
  const connection = t.connect();
  const messages = connection.createSession().createBrowser(new Queue(queue)).getEnumeration();
  void connection.close();
  return messages;
}

/** A bridge into a sink that refuses 'bad' as poison, parking it in the internal queue `errors`. */
function parkingBridge(t: TestEngine, source: BridgeConfig['source'], name = 'orders-out') {
  const sink = new FakeSink(t.clock);
  sink.poisoned.add('bad');
  return new Bridge(
    {
      name,
      source,
      sink,
      errorDestination: new InternalSink({ engine: t.engine, destination: 'queue://errors' }),
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
    },
    { clock: t.clock },
  );
}

test('bridge - a message parked from an internal queue source names the queue as its origin and the bridge apart (BRG-4, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  const orders = await t.engine.createQueue('orders');
  await produce(t, orders, ['bad', 'good']);
  const bridge = parkingBridge(t, new InternalSource({ engine: t.engine, destination: orders }));
  await bridge.start();
  await idle();
  await bridge.stop();
  const [parked] = browse(t, 'errors');
  assert.equal(textOf(parked!), 'bad');
  assert.equal(parked!.getStringProperty(ERROR_ORIGIN), 'queue://orders');
  assert.equal(parked!.getStringProperty(ERROR_BRIDGE), 'orders-out');
  assert.match(parked!.getStringProperty(ERROR_REASON)!, /^poison: /);
});

test('bridge - a message parked from a durable topic source names the topic as its origin (BRG-4, DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  const prices = await t.engine.createTopic('prices');
  const bridge = parkingBridge(
    t,
    new InternalSource({
      engine: t.engine,
      destination: 'topic://prices',
      durable: { clientId: 'bridge-prices', name: 'prices-out' },
    }),
    'prices-out',
  );
  await bridge.start();
  await idle();
  await produce(t, prices, ['bad']);
  await idle();
  await bridge.stop();
  const [parked] = browse(t, 'errors');
  assert.equal(parked!.getStringProperty(ERROR_ORIGIN), 'topic://prices');
  assert.equal(parked!.getStringProperty(ERROR_BRIDGE), 'prices-out');
});

test('bridge - replay to origin sends a message the bridge parked back to its internal source queue, bridge properties removed', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  const orders = await t.engine.createQueue('orders');
  await produce(t, orders, ['bad']);
  const bridge = parkingBridge(t, new InternalSource({ engine: t.engine, destination: orders }));
  await bridge.start();
  await idle();
  await bridge.stop();
  const operations = new DestinationOperations(t.engine);
  cleanup(() => operations.close());
  assert.deepEqual(await operations.move('errors', 'origin'), { moved: 1 });
  const [back] = await drain(t, 'orders');
  assert.equal(textOf(back!), 'bad');
  assert.equal(back!.getStringProperty('region'), 'eu', 'application properties kept');
  assert.equal(back!.deliveryCount, 1, 'the delivery count starts again');
  for (const name of [ERROR_ORIGIN, ERROR_BRIDGE, ERROR_REASON, ERROR_TIME])
    assert.equal(back!.propertyExists(name), false, `${name} removed`);
});

test('bridge - replay to origin refuses a message parked from an external source and says to give a target; an explicit target works', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('retry-here');
  const source = new FakeSource(t.clock);
  const bridge = parkingBridge(t, source, 'amqp-in');
  await bridge.start();
  source.push(message('bad'));
  await idle();
  await bridge.stop();
  const [parked] = browse(t, 'errors');
  assert.equal(parked!.getStringProperty(ERROR_ORIGIN), 'bridge://amqp-in');
  assert.equal(parked!.getStringProperty(ERROR_BRIDGE), 'amqp-in');

  const operations = new DestinationOperations(t.engine);
  cleanup(() => operations.close());
  await assert.rejects(
    operations.move('errors', 'origin'),
    (error: Error) =>
      error.name === 'InvalidDestinationError' &&
      /came through bridge 'amqp-in' from an external source/.test(error.message) &&
      /give a target destination/.test(error.message),
  );
  assert.equal(browse(t, 'errors').length, 1, 'nothing moved, nothing lost');
  assert.deepEqual(
    await operations.move('errors', 'origin', { selector: "JMS_ErrorOrigin NOT LIKE 'bridge://%'" }),
    { moved: 0 },
    'the documented selector leaves external ones out of a replay to origin',
  );
  assert.deepEqual(await operations.move('errors', 'queue://retry-here'), { moved: 1 });
  assert.deepEqual((await drain(t, 'retry-here')).map(textOf), ['bad']);
});
