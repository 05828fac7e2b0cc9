import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeliveryMode, Session, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { teardown } from '../../helpers/teardown.js';

test('statistics - pending messages and bytes by cause, per destination and summed in the totals (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 5000 });
  cleanup(() => t.close());
  const connection = t.connect();
  const client = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const tx = connection.createSession(true);
  const topic = client.createTopic('t');
  const ack = client.createConsumer(topic);
  const inTx = tx.createConsumer(topic);
  const producer = client.createProducer(topic);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  await producer.send(new TextMessage('unacked!'));
  await ack.receiveNoWait();
  await inTx.receiveNoWait();
  await tx.rollback();
  await producer.send(new TextMessage('later'), { deliveryDelay: 60_000 });
  await tx.createProducer(topic).send(new TextMessage('tx'));
  const queue = client.createQueue('q');
  await client.createProducer(queue).send(new TextMessage('123'));
  await client.createConsumer(queue).receiveNoWait();

  const stats = t.engine.destinationStatistics(topic);
  // 'unacked!' (8 bytes): unacknowledged by one subscriber, in its redelivery delay for the other.
  assert.deepEqual(stats.pendingMessagesByCause, {
    uncommitted: 2,
    scheduled: 2,
    redeliveryDelay: 1,
    unacknowledged: 1,
    errorDestinationFull: 0,
  });
  assert.deepEqual(stats.pendingBytesByCause, {
    uncommitted: 4,
    scheduled: 10,
    redeliveryDelay: 8,
    unacknowledged: 8,
    errorDestinationFull: 0,
  });
  assert.equal(stats.messagesPending, 6);
  assert.equal(stats.bytesPending, 30);
  const { totals } = t.engine.statistics();
  assert.deepEqual(totals.pendingMessagesByCause, {
    uncommitted: 2,
    scheduled: 2,
    redeliveryDelay: 1,
    unacknowledged: 2,
    errorDestinationFull: 0,
  });
  assert.deepEqual(totals.pendingBytesByCause, {
    uncommitted: 4,
    scheduled: 10,
    redeliveryDelay: 8,
    unacknowledged: 11,
    errorDestinationFull: 0,
  });
  assert.equal(totals.bytesPending, 33);
});

test('statistics - a topic high-water mark is the most its subscriptions held at once, not the sum of their own maxima (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const topic = session.createTopic('t');
  const a = session.createConsumer(topic);
  session.createConsumer(topic);
  const producer = session.createProducer(topic);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (let i = 0; i < 2; i++) await producer.send(new TextMessage(`${i}`));
  for (let i = 0; i < 2; i++) await a.receiveNoWait();
  await producer.send(new TextMessage('2'));
  // a held 2 at most and b 3, but never both at once: together they held 4 at most.
  const stats = t.engine.destinationStatistics(topic);
  assert.equal(stats.messagesHighWater, 4);
  assert.equal(stats.bytesHighWater, 4);
});

test("statistics - the totals' high-water mark is the most the gateway held at once (DST-9)", async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  for (const name of ['first', 'second']) {
    const queue = session.createQueue(name);
    const producer = session.createProducer(queue);
    for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`${i}`));
    const consumer = session.createConsumer(queue);
    for (let i = 0; i < 3; i++) await consumer.receiveNoWait();
    await consumer.close();
  }
  const { destinations, totals } = t.engine.statistics();
  assert.deepEqual(
    destinations.map((d) => d.messagesHighWater),
    [3, 3],
  );
  assert.equal(totals.messagesHighWater, 3, 'the queues never held 3 each at the same time');
  assert.equal(totals.bytesHighWater, 3);
});
