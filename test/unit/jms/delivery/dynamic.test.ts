import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  IllegalStateError,
  InvalidDestinationError,
  Queue,
  TextMessage,
  Topic,
} from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';

test('dynamic - deleting a topic removes its durable subscriptions and messages; new users get InvalidDestination (DST-6)', async () => {
  const t = testEngine();
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
  await t.close();
});

test('dynamic - an open transaction may commit after its destination was deleted; its effect there is nil (DST-6)', async () => {
  const t = testEngine();
  await t.engine.createQueue('gone');
  const tx = t.connect().createSession(true);
  await tx.createProducer(tx.createQueue('gone')).send(new TextMessage('x'));
  await t.engine.deleteDestination('queue://gone');
  await tx.commit();
  assert.equal(t.engine.statistics().totals.messagesCurrent, 0);
  await t.close();
});

test('dynamic - created destinations are stored and come back when an engine reopens the store (PER-2, DST-6)', async () => {
  const t = testEngine();
  await t.engine.createQueue('kept', { redeliveryLimit: 3 });
  await t.engine.createDistributedDestination('queue', 'dq', [{ name: 'm1', weight: 2 }, { name: 'm2' }]);
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('kept')).send(new TextMessage('persistent'));
  await t.close();
  const { JmsEngine } = await import('../../../../src/index.js');
  const reopened = await JmsEngine.open({ store: t.store, clock: t.clock });
  assert.deepEqual(
    reopened
      .destinations()
      .map((d) => d.toString())
      .sort(),
    ['queue://kept', 'queue://m1', 'queue://m2'],
  );
  assert.equal(reopened.destinationStatistics('queue://kept').messagesCurrent, 1);
  await reopened.close();
});

test('dynamic - a deleted distributed destination refuses sends and new consumers instead of becoming a plain queue; creating it again brings it back (DST-6, DST-8)', async () => {
  const t = testEngine();
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
  await t.close();
});

test('dynamic - deleting a queue closes its browsers: their enumeration fails with IllegalState (DST-6)', async () => {
  const t = testEngine();
  await t.engine.createQueue('browsed');
  const session = t.connect().createSession();
  await session.createProducer(new Queue('browsed')).send(new TextMessage('x'));
  const browser = session.createBrowser(new Queue('browsed'));
  assert.equal(browser.getEnumeration().length, 1);
  await t.engine.deleteDestination('queue://browsed');
  assert.throws(() => browser.getEnumeration(), IllegalStateError);
  assert.throws(() => [...browser], /browser is closed: its queue 'queue:\/\/browsed' was deleted/);
  await t.engine.createQueue('browsed');
  assert.throws(() => browser.getEnumeration(), IllegalStateError, 'a closed browser stays closed');
  browser.close();
  await t.close();
});
