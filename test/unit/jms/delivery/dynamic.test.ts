import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  IllegalStateError,
  InvalidDestinationError,
  Queue,
  ResourceAllocationError,
  Session,
  TextMessage,
  Topic,
} from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

test('dynamic - deleting a topic removes its durable subscriptions and messages; new users get InvalidDestination (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createTopic('news');
  const session = t.connect({ clientId: 'c' }).createSession();
  const subscriber = session.createDurableSubscriber(new Topic('news'), 'sub');
  await subscriber.close();
  await session.createProducer(new Topic('news')).send(new TextMessage('x'));
  assert.equal(t.engine.durableSubscriptions().length, 1);
  await t.engine.deleteDestination('topic://news');
  assert.deepEqual(t.engine.durableSubscriptions(), []);
  assert.throws(() => session.createProducer(new Topic('news')), InvalidDestinationError);
  await t.engine.createTopic('news');
  session.createProducer(new Topic('news'));
});

test('dynamic - an open transaction may commit after its destination was deleted; its effect there is nil (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('gone');
  const tx = t.connect().createSession(true);
  await tx.createProducer(tx.createQueue('gone')).send(new TextMessage('x'));
  await t.engine.deleteDestination('queue://gone');
  await tx.commit();
  assert.equal(t.engine.statistics().totals.messagesCurrent, 0);
});

test('dynamic - created destinations are stored and come back when an engine reopens the store (PER-2, DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  await t.engine.createQueue('kept', { redeliveryLimit: 3 });
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm1', weight: 2 }, { name: 'm2' }]);
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('kept')).send(new TextMessage('persistent'));
  await t.close();
  const { JmsEngine } = await import('../../../../src/index.js');
  const reopened = await JmsEngine.open({ store: t.store, clock: t.clock });
  cleanup(() => reopened.close());
  assert.deepEqual(
    reopened
      .destinations()
      .map((d) => d.toString())
      .sort(),
    ['queue://kept', 'queue://m1', 'queue://m2'],
  );
  assert.equal(reopened.destinationStatistics('queue://kept').messagesCurrent, 1);
});

test('dynamic - a deleted distributed destination refuses sends and new consumers instead of becoming a plain queue; creating it again brings it back (DST-6, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'dq.m1' }, { name: 'dq.m2' }]);
  await t.engine.deleteDestination('queue://dq');
  const session = t.connect().createSession();
  await assert.rejects(
    session.createProducer(null).send(new Queue('dq'), new TextMessage('x')),
    InvalidDestinationError,
  );
  assert.throws(() => session.createProducer(new Queue('dq')), InvalidDestinationError);
  assert.throws(() => session.createConsumer(new Queue('dq')), InvalidDestinationError);
  assert.ok(!t.engine.destinations().some((d) => d.toString() === 'queue://dq'), 'no plain queue was made');
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'dq.m1' }, { name: 'dq.m2' }]);
  const message = new TextMessage('again');
  await session.createProducer(new Queue('dq')).send(message);
  assert.match(message.getJMSDestination()!.name, /^dq\.m[12]$/);
});

test('dynamic - deleting a queue closes its browsers: their enumeration fails with IllegalState (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('browsed');
  const session = t.connect().createSession();
  await session.createProducer(new Queue('browsed')).send(new TextMessage('x'));
  const browser = session.createBrowser(new Queue('browsed'));
  cleanup(() => browser.close());
  assert.equal(browser.getEnumeration().length, 1);
  await t.engine.deleteDestination('queue://browsed');
  assert.throws(() => browser.getEnumeration(), IllegalStateError);
  assert.throws(() => [...browser], /browser is closed: its queue 'queue:\/\/browsed' was deleted/);
  await t.engine.createQueue('browsed');
  assert.throws(() => browser.getEnumeration(), IllegalStateError, 'a closed browser stays closed');
});

test('dynamic - messages a deleted destination still had out leave the gateway totals and the store once rolled back, released or committed (DST-6, DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const send = async (name: string) => {
    await t.engine.createQueue(name);
    await connection.createSession().createProducer(new Queue(name)).send(new TextMessage('x'));
  };
  await send('rolled-back');
  const tx = connection.createSession(true);
  assert.ok(await tx.createConsumer(new Queue('rolled-back')).receiveNoWait());
  await send('unacknowledged');
  const client = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const unacknowledged = await client.createConsumer(new Queue('unacknowledged')).receiveNoWait();
  const uncommitted = connection.createSession(true);
  await uncommitted.createProducer(new Queue('uncommitted')).send(new TextMessage('x'));
  await t.engine.createTopic('topic');
  const subscriber = t.connect({ clientId: 'c' }).createSession(true);
  const durable = subscriber.createDurableSubscriber(new Topic('topic'), 'sub');
  await connection.createSession().createProducer(new Topic('topic')).send(new TextMessage('x'));
  assert.ok(await durable.receiveNoWait());
  assert.equal(t.engine.held().messages, 4);

  for (const name of [
    'queue://rolled-back',
    'queue://unacknowledged',
    'queue://uncommitted',
    'topic://topic',
  ])
    await t.engine.deleteDestination(name);
  await tx.rollback();
  await subscriber.rollback();
  await unacknowledged!.acknowledge();
  await uncommitted.commit();
  await settle();

  assert.deepEqual(t.engine.held(), { messages: 0, bytes: 0 });
  assert.deepEqual(t.store.size, { messages: 0, refs: 0 });
});

test('dynamic - a gateway quota of 1 still takes sends after a queue was deleted with a message out (DST-6, DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 }, { quota: { messagesMaximum: 1 } });
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession();
  await session.createProducer(new Queue('first')).send(new TextMessage('x'));
  const tx = connection.createSession(true);
  assert.ok(await tx.createConsumer(new Queue('first')).receiveNoWait());
  await t.engine.deleteDestination('queue://first');
  await tx.commit();
  await session.createProducer(new Queue('second')).send(new TextMessage('y'));
  const other = connection.createSession(true);
  assert.ok(await other.createConsumer(new Queue('second')).receiveNoWait());
  await t.engine.deleteDestination('queue://second');
  await other.rollback();
  await session.createProducer(new Queue('third')).send(new TextMessage('z'));
  assert.equal(t.engine.held().messages, 1);
});

test('dynamic - a message rolled back after its queue was deleted is deleted, not moved to the error destination (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('limited', { redeliveryLimit: 0, errorDestination: 'queue://errors' });
  const connection = t.connect();
  await connection.createSession().createProducer(new Queue('limited')).send(new TextMessage('x'));
  const tx = connection.createSession(true);
  assert.ok(await tx.createConsumer(new Queue('limited')).receiveNoWait());
  await t.engine.deleteDestination('queue://limited');
  await tx.rollback();
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 0);
  assert.equal(t.engine.messagesMovedToErrorDestinations, 0);
  assert.deepEqual(t.engine.held(), { messages: 0, bytes: 0 });
});

test('dynamic - a send slowed by flow control fails with ResourceAllocation when its destination is deleted meanwhile (DST-6, DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('slowed', { thresholds: { messagesHigh: 0, delayMs: 100 } });
  const producer = t.connect().createSession().createProducer(new Queue('slowed'));
  await producer.send(new TextMessage('1'));
  const slowed = producer.send(new TextMessage('2')).then(
    () => 'sent',
    (error: unknown) => error,
  );
  await settle();
  await t.engine.deleteDestination('queue://slowed');
  await t.clock.advance(100);
  assert.ok((await slowed) instanceof ResourceAllocationError);
  await assert.rejects(producer.send(new TextMessage('3')), InvalidDestinationError);
  assert.deepEqual(t.engine.held(), { messages: 0, bytes: 0 });
  assert.deepEqual(t.store.size, { messages: 0, refs: 0 });
});

test('dynamic - a message rejected as poison after its destination was deleted is deleted with it, not moved to the error destination (DST-6, DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('gone', { errorDestination: 'queue://errors' });
  const connection = t.connect();
  await connection.createSession().createProducer(new Queue('gone')).send(new TextMessage('bad'));
  const tx = connection.createSession(true);
  const message = await tx.createConsumer(tx.createQueue('gone')).receiveNoWait();
  assert.ok(message);
  await t.engine.deleteDestination('queue://gone');
  tx.reject(message, 'cannot parse');
  await tx.commit();
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 0);
  assert.equal(t.engine.statistics().totals.messagesCurrent, 0);
  assert.equal(t.engine.statistics().totals.messagesPending, 0);
});
