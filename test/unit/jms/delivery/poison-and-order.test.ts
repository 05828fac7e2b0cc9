import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Message, PoisonMessageError, Session, TextMessage } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('poison - a listener throwing PoisonMessageError sends the message to the error destination at once (DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors', redeliveryLimit: 5 });
  const connection = t.connect();
  const reported: Error[] = [];
  connection.setExceptionListener((error) => reported.push(error));
  const session = connection.createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('bad'));
  let calls = 0;
  session.createConsumer(session.createQueue('q')).setMessageListener(() => {
    calls++;
    throw new PoisonMessageError('cannot parse order');
  });
  await settle();
  assert.equal(calls, 1);
  assert.deepEqual(reported, [], 'a parked poison message is the outcome asked for, not a connection error');
  const parked = (await session.createConsumer(session.createQueue('errors')).receiveNoWait())!;
  assert.equal(parked.getStringProperty('JMS_ErrorReason'), 'poison: cannot parse order');
  assert.equal(parked.getIntProperty('JMS_ErrorDeliveryCount'), 1);
});

test('poison - session.reject parks a received message without using up redeliveries (DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  await session.createProducer(session.createQueue('q')).send(new TextMessage('bad'));
  const received = (await session.createConsumer(session.createQueue('q')).receiveNoWait())!;
  session.reject(received, 'schema violation');
  assert.throws(() => session.reject(received), /not yet acknowledged/);
  const parked = await session.createConsumer(session.createQueue('errors')).receiveNoWait();
  assert.equal(parked?.getStringProperty('JMS_ErrorReason'), 'poison: schema violation');
});

test('poison - a message an AUTO_ACKNOWLEDGE receive returned is acknowledged and can no longer be rejected (DLV-9, SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('bad'));
  const received = (await session.createConsumer(session.createQueue('q')).receiveNoWait())!;
  assert.throws(
    () => session.reject(received),
    /only a message received by this session and not yet acknowledged/,
  );
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 0);
});

test('error destination - it cannot be deleted while another destination names it (DLV-3, DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  await assert.rejects(
    t.engine.deleteDestination('queue://errors'),
    /is the error destination of 'queue:\/\/q'/,
  );
  await t.engine.deleteDestination('queue://q');
  await t.engine.deleteDestination('queue://errors');
});

test('unit of order - messages of one group go one at a time, in order; other groups proceed on other consumers (ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 10 });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('uoo');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 3; i++) {
    for (const group of ['A', 'B']) {
      const m = new TextMessage(`${group}${i}`);
      m.setStringProperty('JMSXGroupID', group);
      await producer.send(m);
    }
  }
  const c1 = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const c2 = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const first = c1.createConsumer(queue);
  const second = c2.createConsumer(queue);
  const a0 = await first.receiveNoWait();
  const b0 = await second.receiveNoWait();
  assert.deepEqual([text(a0), text(b0)], ['A0', 'B0']);
  assert.equal(await first.receiveNoWait(), null, 'A1 and B1 wait for A0 and B0');
  assert.equal(await second.receiveNoWait(), null);
  await b0!.acknowledge();
  assert.equal(text(await first.receiveNoWait()), 'B1', 'a group may move to another consumer once free');
  await a0!.acknowledge();
  assert.equal(text(await second.receiveNoWait()), 'A1');
});

test('unit of order - a rolled-back message keeps its group waiting through the redelivery delay (ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 500 });
  cleanup(() => t.close());
  await t.engine.createQueue('uoo', { unitOfOrderProperty: 'orderId' });
  const session = t.connect().createSession();
  const queue = session.createQueue('uoo');
  const producer = session.createProducer(queue);
  for (const [text, orderId] of [
    ['o1-a', 'o1'],
    ['o1-b', 'o1'],
    ['o2-a', 'o2'],
  ]) {
    const m = new TextMessage(text);
    m.setStringProperty('orderId', orderId!);
    await producer.send(m);
  }
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(queue);
  assert.equal(text(await consumer.receiveNoWait()), 'o1-a');
  await tx.rollback();
  assert.equal(text(await consumer.receiveNoWait()), 'o2-a', 'another unit goes on');
  assert.equal(await consumer.receiveNoWait(), null, 'o1-b waits for o1-a');
  await t.clock.advance(500);
  assert.equal(text(await consumer.receiveNoWait()), 'o1-a');
  await tx.commit();
  assert.equal(text(await consumer.receiveNoWait()), 'o1-b');
});

test('unit of order - a group moved to the error destination releases the next message (ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (const body of ['g1', 'g2']) {
    const m = new TextMessage(body);
    m.setStringProperty('JMSXGroupID', 'g');
    await producer.send(m);
  }
  const consumer = session.createConsumer(queue);
  const first = (await consumer.receiveNoWait())!;
  assert.equal(await consumer.receiveNoWait(), null);
  session.reject(first);
  assert.equal(text(await consumer.receiveNoWait()), 'g2');
});

test('unit of order - a selector consumer whose selector does not match the head of a unit waits for the unit (ORD-4, SEL-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (const [body, kind] of [
    ['g0', 'no'],
    ['g1', 'yes'],
  ]) {
    const m = new TextMessage(body);
    m.setStringProperty('JMSXGroupID', 'g');
    m.setStringProperty('kind', kind!);
    await producer.send(m);
  }
  const selective = session.createConsumer(queue, "kind = 'yes'");
  assert.equal(await selective.receiveNoWait(), null, 'g1 matches, but g0 heads the unit');
  const head = (await session.createConsumer(queue).receiveNoWait())!;
  assert.equal(text(head), 'g0');
  assert.equal(await selective.receiveNoWait(), null, 'still out');
  await head.acknowledge();
  assert.equal(text(await selective.receiveNoWait()), 'g1');
});

test('poison - the error-destination copy records when the message was given up, as a bridge’s does (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  await session.createProducer(session.createQueue('q')).send(new TextMessage('bad'));
  const received = (await session.createConsumer(session.createQueue('q')).receiveNoWait())!;
  await t.clock.advance(1_234);
  const givenUpAt = t.clock.now();
  session.reject(received, 'schema violation');
  const parked = (await session.createConsumer(session.createQueue('errors')).receiveNoWait())!;
  assert.equal(parked.getLongProperty('JMS_ErrorTime'), BigInt(givenUpAt));
  assert.equal(parked.getStringProperty('JMS_ErrorOrigin'), 'queue://q');
  assert.equal(parked.propertyExists('JMS_ErrorBridge'), false, 'no bridge gave it up');
});
