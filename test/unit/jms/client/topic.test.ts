import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IllegalStateError, type Message, Session, TextMessage, Topic } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('topic - every subscription present at publish gets the message; later ones do not (DST-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const topic = session.createTopic('prices');
  const a = session.createConsumer(topic);
  const b = session.createConsumer(topic);
  const producer = session.createProducer(topic);
  await producer.send(new TextMessage('p1'));
  const late = session.createConsumer(topic);
  assert.equal(text(await a.receiveNoWait()), 'p1');
  assert.equal(text(await b.receiveNoWait()), 'p1');
  assert.equal(await late.receiveNoWait(), null);
});

test('topic - a subscriber selector filters at publish (DST-2, SEL-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const topic = session.createTopic('t');
  const big = session.createConsumer(topic, 'amount > 100');
  const flagged = session.createConsumer(topic, 'urgent IS NOT NULL');
  const producer = session.createProducer(topic);
  const m1 = new TextMessage('small');
  m1.setIntProperty('amount', 5);
  const m2 = new TextMessage('large');
  m2.setIntProperty('amount', 500);
  m2.setBooleanProperty('urgent', true);
  await producer.send(m1);
  await producer.send(m2);
  assert.equal(text(await big.receiveNoWait()), 'large');
  assert.equal(await big.receiveNoWait(), null);
  assert.equal(text(await flagged.receiveNoWait()), 'large');
  assert.equal(big.getMessageSelector(), 'amount > 100');
});

test('topic - noLocal subscribers skip messages published on their own connection (DST-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const mine = t.connect();
  const other = t.connect();
  const session = mine.createSession();
  const topic = session.createTopic('chat');
  const subscriber = session.createConsumer(topic, null, true);
  assert.equal(subscriber.getNoLocal(), true);
  await session.createProducer(topic).send(new TextMessage('own'));
  await other.createSession().createProducer(topic).send(new TextMessage('theirs'));
  assert.equal(text(await subscriber.receiveNoWait()), 'theirs');
  assert.equal(await subscriber.receiveNoWait(), null);
});

test('topic - an inactive durable subscriber collects messages and gets them when it returns (DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect({ clientId: 'client-1' });
  const session = connection.createSession();
  const topic = session.createTopic('news');
  const subscriber = session.createDurableSubscriber(topic, 'sub');
  await subscriber.close();
  const producer = session.createProducer(topic);
  await producer.send(new TextMessage('while away 1'));
  await producer.send(new TextMessage('while away 2'));
  assert.deepEqual(
    t.engine.durableSubscriptions().map((s) => [s.name, s.active, s.messages]),
    [['sub', false, 2]],
  );
  const back = session.createDurableSubscriber(topic, 'sub');
  assert.equal(text(await back.receiveNoWait()), 'while away 1');
  assert.equal(text(await back.receiveNoWait()), 'while away 2');
  assert.equal(t.engine.durableSubscriptions()[0]!.active, true);
});

test('topic - durable subscriptions: one active subscriber, client id needed, replaced on change, unsubscribe rules (DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const anonymous = t.connect().createSession();
  assert.throws(() => anonymous.createDurableSubscriber(new Topic('news'), 'sub'), /needs a client id/);
  const session = t.connect({ clientId: 'c' }).createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const topic = session.createTopic('news');
  const first = session.createDurableSubscriber(topic, 'sub');
  assert.throws(() => session.createDurableSubscriber(topic, 'sub'), /already has an active subscriber/);
  assert.throws(() => session.unsubscribe('sub'), IllegalStateError);
  await session.createProducer(topic).send(new TextMessage('one'));
  await first.receiveNoWait();
  await first.close();
  // The message went back to the subscription when its consumer closed; changing the selector replaces it.
  const replaced = session.createDurableSubscriber(topic, 'sub', "kind = 'x'");
  assert.equal(await replaced.receiveNoWait(), null);
  await replaced.close();
  session.unsubscribe('sub');
  assert.deepEqual(t.engine.durableSubscriptions(), []);
  assert.throws(() => session.unsubscribe('sub'), /no durable subscription 'sub'/);
});

test('topic - unsubscribe is refused while the subscription holds unacknowledged messages (DST-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect({ clientId: 'c' });
  const session = connection.createSession(true);
  const topic = session.createTopic('news');
  const subscriber = session.createDurableSubscriber(topic, 'sub');
  await connection.createSession().createProducer(topic).send(new TextMessage('m'));
  await subscriber.receiveNoWait();
  await subscriber.close();
  assert.throws(() => session.unsubscribe('sub'), /holds 1 unacknowledged or uncommitted/);
  await session.commit();
  session.unsubscribe('sub');
});

test('topic - shared subscriptions split messages between their consumers (DST-3, JMS 2.0)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const other = t.connect().createSession();
  const topic = session.createTopic('work');
  const a = session.createSharedConsumer(topic, 'workers');
  const b = other.createSharedConsumer(topic, 'workers');
  const producer = session.createProducer(topic);
  for (let i = 0; i < 6; i++) await producer.send(new TextMessage(`w${i}`));
  const got: string[] = [];
  for (const consumer of [a, b, a, b, a, b]) {
    const m = await consumer.receiveNoWait();
    if (m) got.push(text(m)!);
  }
  const rest = [await a.receiveNoWait(), await b.receiveNoWait()].filter(Boolean).map(text) as string[];
  assert.deepEqual([...got, ...rest].sort(), ['w0', 'w1', 'w2', 'w3', 'w4', 'w5']);
  const durable = session.createSharedDurableConsumer(topic, 'archive');
  await durable.close();
  await producer.send(new TextMessage('kept'));
  assert.equal(text(await other.createSharedDurableConsumer(topic, 'archive').receiveNoWait()), 'kept');
});

test('topic - statistics count the messages held by subscriptions (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect({ clientId: 'c' }).createSession();
  const topic = session.createTopic('t');
  session.createConsumer(topic);
  session.createDurableSubscriber(topic, 'd');
  await session.createProducer(topic).send(new TextMessage('abc'));
  const stats = t.engine.destinationStatistics(topic);
  assert.equal(stats.messagesReceived, 1);
  assert.equal(stats.messagesCurrent, 2);
  assert.equal(stats.bytesCurrent, 6);
  assert.equal(stats.subscriptions, 2);
  assert.equal(stats.consumersCurrent, 2);
});
