import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Message, Queue, Session, TextMessage } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

async function oneMessage(t: ReturnType<typeof testEngine>, queueName: string, limit?: number) {
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue(queueName));
  if (limit !== undefined) producer.setRedeliveryLimit(limit);
  await producer.send(new TextMessage('m'));
}

test('redelivery - a rolled-back message waits out the factory delay before it is available again (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 5000 });
  cleanup(() => t.close());
  await oneMessage(t, 'q');
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  await consumer.receiveNoWait();
  await tx.rollback();
  assert.equal(await consumer.receiveNoWait(), null);
  assert.equal(t.engine.destinationStatistics('queue://q').pendingMessagesByCause.redeliveryDelay, 1);
  await t.clock.advance(4999);
  assert.equal(await consumer.receiveNoWait(), null);
  await t.clock.advance(1);
  const back = await consumer.receiveNoWait();
  assert.equal(back?.getIntProperty('JMSXDeliveryCount'), 2);
});

test('redelivery - a session override beats the factory delay and a destination override beats both (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 5000 });
  cleanup(() => t.close());
  await oneMessage(t, 'session');
  await t.engine.createQueue('dest', { redeliveryDelayOverride: 100 });
  await oneMessage(t, 'dest');
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  session.setRedeliveryDelay(1000);
  const a = session.createConsumer(session.createQueue('session'));
  const b = session.createConsumer(session.createQueue('dest'));
  await a.receiveNoWait();
  await b.receiveNoWait();
  await session.recover();
  await t.clock.advance(100);
  assert.equal(text(await b.receiveNoWait()), 'm', 'destination override: 100 ms');
  assert.equal(await a.receiveNoWait(), null);
  await t.clock.advance(900);
  assert.equal(text(await a.receiveNoWait()), 'm', 'session override: 1000 ms');
});

test('redelivery - a session redelivery delay is checked as the factory checks it (DLV-1)', (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 250 });
  cleanup(() => t.close());
  const session = t.connect().createSession(true);
  for (const bad of [-5, Number.NaN, Infinity]) {
    assert.throws(
      () => session.setRedeliveryDelay(bad),
      new RegExp(`redeliveryDelay ${String(bad)} is not valid \\(expected a number of ms >= 0\\)`),
    );
  }
  assert.equal(session.getRedeliveryDelay(), 250, 'a refused value changes nothing');
  session.setRedeliveryDelay(0);
  assert.equal(session.getRedeliveryDelay(), 0);
  session.setRedeliveryDelay(undefined);
  assert.equal(session.getRedeliveryDelay(), 250, "undefined goes back to the factory's");
});

test('redelivery - an exponential backoff grows the delay per redelivery up to its maximum (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', {
    redeliveryDelayOverride: 100,
    redeliveryBackoff: { multiplier: 2, maximumMs: 300 },
  });
  await oneMessage(t, 'q');
  assert.deepEqual(await backoffWaits(t, 'q', 4, 50), [100, 200, 300, 300]);
});

/** Rolls the one message on `queue` back `rounds` times and returns how long each redelivery waited, in steps of `step` ms. */
async function backoffWaits(t: ReturnType<typeof testEngine>, queue: string, rounds: number, step: number) {
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue(queue));
  const waits: number[] = [];
  await consumer.receiveNoWait();
  for (let round = 0; round < rounds; round++) {
    await tx.rollback();
    let waited = 0;
    while ((await consumer.receiveNoWait()) === null) {
      await t.clock.advance(step);
      waited += step;
    }
    waits.push(waited);
  }
  return waits;
}

test('redelivery - a backoff without a maximum grows the delay uncapped (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { redeliveryDelayOverride: 100, redeliveryBackoff: { multiplier: 2 } });
  await oneMessage(t, 'q');
  assert.deepEqual(await backoffWaits(t, 'q', 5, 100), [100, 200, 400, 800, 1600]);
});

test('redelivery - a backoff that outgrows every number still waits a finite delay (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  // No expiration scan: the clock jumps thousands of years, and the scan would run at every 30 s of them.
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  await t.engine.createQueue('q', {
    redeliveryDelayOverride: 100,
    redeliveryBackoff: { multiplier: 1e300 },
  });
  await oneMessage(t, 'q');
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  for (let delivery = 1; delivery <= 3; delivery++) {
    assert.equal((await consumer.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), delivery);
    await tx.rollback();
    assert.equal(await consumer.receiveNoWait(), null, 'not back at once');
    // 100 ms, then 1e302 ms and then Infinity, both held at the longest delay (2^47 ms).
    await t.clock.advance(delivery === 1 ? 100 : 2 ** 47);
  }
  assert.equal((await consumer.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), 4);
});

test('redelivery - a backoff the engine cannot run with is refused when the destination is created (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(
    t.engine.createQueue('q', { redeliveryBackoff: { multiplier: Number.NaN } }),
    /redeliveryBackoff.multiplier NaN is not valid \(expected a finite number >= 1\)/,
  );
  await assert.rejects(
    t.engine.createQueue('q', { redeliveryBackoff: { multiplier: 2, maximumMs: -1 } }),
    /redeliveryBackoff.maximumMs -1 is not valid/,
  );
  assert.equal(t.engine.destinationOptions(new Queue('q')), undefined);
});

test('redelivery - messages left unacknowledged by a closed connection come back without delay (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 60_000 });
  cleanup(() => t.close());
  await oneMessage(t, 'q');
  const connection = t.connect();
  const session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  await session.createConsumer(session.createQueue('q')).receiveNoWait();
  await connection.close();
  const again = t.connect().createSession().createConsumer(session.createQueue('q'));
  const back = await again.receiveNoWait();
  assert.equal(back?.getJMSRedelivered(), true);
});

test('redelivery - past the producer limit a message moves to the error destination with origin, reason and count (DLV-2, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  await oneMessage(t, 'q', 2);
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  const counts: number[] = [];
  for (;;) {
    const m = await consumer.receiveNoWait();
    if (!m) break;
    counts.push(m.getIntProperty('JMSXDeliveryCount'));
    await tx.rollback();
  }
  assert.deepEqual(counts, [1, 2, 3], 'a limit of 2 allows the first delivery and two redeliveries');
  const parked = (await tx.createConsumer(tx.createQueue('errors')).receiveNoWait())!;
  assert.equal(text(parked), 'm');
  assert.equal(parked.getStringProperty('JMS_ErrorOrigin'), 'queue://q');
  assert.match(parked.getStringProperty('JMS_ErrorReason')!, /redelivery limit 2 reached after 3 deliveries/);
  assert.equal(parked.getIntProperty('JMS_ErrorDeliveryCount'), 3);
  assert.equal(t.engine.messagesMovedToErrorDestinations, 1);
});

test('redelivery - a destination limit overrides the producer; without an error destination the message is deleted and counted (DLV-2, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { redeliveryLimit: 0 });
  await oneMessage(t, 'q', 10);
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  await consumer.receiveNoWait();
  await tx.rollback();
  assert.equal(await consumer.receiveNoWait(), null);
  assert.equal(t.engine.messagesDiscarded, 1);
  const stats = t.engine.destinationStatistics('queue://q');
  assert.equal(stats.messagesCurrent + stats.messagesPending, 0);
});

/** Rolls back the one message on `queue` until it stops coming and returns its delivery counts. */
async function deliveriesUntilGone(t: ReturnType<typeof testEngine>, queue: string, most = 10) {
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue(queue));
  const counts: number[] = [];
  for (let i = 0; i < most; i++) {
    const m = await consumer.receiveNoWait();
    if (!m) break;
    counts.push(m.getIntProperty('JMSXDeliveryCount'));
    await tx.rollback();
  }
  return counts;
}

test('redelivery - a destination limit of -1 is no override: the producer limit applies (DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', { redeliveryLimit: -1, errorDestination: 'queue://errors' });
  await oneMessage(t, 'q', 1);
  assert.deepEqual(await deliveriesUntilGone(t, 'q'), [1, 2], "the producer's limit of 1");
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 1);
});

test('redelivery - a producer limit of -1 is no limit (DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await oneMessage(t, 'q', -1);
  assert.deepEqual(
    await deliveriesUntilGone(t, 'q', 25),
    Array.from({ length: 25 }, (_, i) => i + 1),
  );
  assert.equal(t.engine.messagesDiscarded, 0);
});

test('redelivery - a destination delay override of -1 is no override: the session delay applies (DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 500 });
  cleanup(() => t.close());
  await t.engine.createQueue('q', { redeliveryDelayOverride: -1 });
  await oneMessage(t, 'q');
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  await consumer.receiveNoWait();
  await tx.rollback();
  await t.clock.advance(499);
  assert.equal(await consumer.receiveNoWait(), null, 'still waiting out the factory delay');
  await t.clock.advance(1);
  assert.equal(text(await consumer.receiveNoWait()), 'm');
});

test('redelivery - override values the engine cannot run with are refused when the destination is created (DLV-1, DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(
    t.engine.createQueue('q', { redeliveryLimit: -2 }),
    /redeliveryLimit -2 is not valid \(expected -1 \(no override\) or an integer >= 0\)/,
  );
  await assert.rejects(
    t.engine.createQueue('q', { redeliveryDelayOverride: Number.NaN }),
    /redeliveryDelayOverride NaN is not valid/,
  );
  await assert.rejects(
    t.engine.createQueue('q', { timeToLiveOverride: -5 }),
    /timeToLiveOverride -5 is not valid/,
  );
});

test('redelivery - with one consumer and MessagesMaximum 1 a rolled-back message comes back before anything sent after it (ORD-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 1 });
  cleanup(() => t.close());
  const producerSession = t.connect().createSession();
  const queue = producerSession.createQueue('ordered');
  const producer = producerSession.createProducer(queue);
  for (let i = 0; i < 5; i++) await producer.send(new TextMessage(`m${i}`));
  const tx = t.connect().createSession(true);
  const seen: string[] = [];
  let failedOnce = false;
  tx.createConsumer(queue).setMessageListener(async (message) => {
    seen.push(text(message)!);
    if (text(message) === 'm2' && !failedOnce) {
      failedOnce = true;
      await tx.rollback();
      return;
    }
    await tx.commit();
  });
  await settle();
  await producer.send(new TextMessage('m5'));
  await settle();
  assert.deepEqual(seen, ['m0', 'm1', 'm2', 'm2', 'm3', 'm4', 'm5']);
});

/** Five messages to an AUTO_ACKNOWLEDGE listener that throws on the first delivery of m1: the order it sees them in. */
async function orderWithFailingListener(messagesMaximum: number) {
  const t = testEngine({ messagesMaximum });
  const producerSession = t.connect().createSession();
  const queue = producerSession.createQueue('ordered');
  const producer = producerSession.createProducer(queue);
  for (let i = 0; i < 5; i++) await producer.send(new TextMessage(`m${i}`));
  const seen: string[] = [];
  t.connect()
    .createSession()
    .createConsumer(queue)
    .setMessageListener((message) => {
      seen.push(text(message)!);
      if (text(message) === 'm1' && message.getIntProperty('JMSXDeliveryCount') === 1)
        throw new Error('not now');
    });
  await settle();
  await t.close();
  return seen;
}

test('redelivery - with MessagesMaximum 1 a message a listener threw on comes back before the next one (ORD-2, SES-4, SES-6)', async () => {
  assert.deepEqual(await orderWithFailingListener(1), ['m0', 'm1', 'm1', 'm2', 'm3', 'm4']);
});

test('redelivery - caveat: with MessagesMaximum 10 a message a listener threw on comes back after those already in its pipeline (ORD-2, SES-6)', async () => {
  assert.deepEqual(await orderWithFailingListener(10), ['m0', 'm1', 'm2', 'm3', 'm4', 'm1']);
});

test('redelivery - MessagesMaximum is 10 by default: a busy listener has at most 10 messages handed to it (SES-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  assert.equal(t.factory.options.messagesMaximum, 10);
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 15; i++) await producer.send(new TextMessage(`m${i}`));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  session.createConsumer(queue).setMessageListener(async () => {
    calls++;
    await gate;
  });
  await settle();
  const stats = t.engine.destinationStatistics(queue);
  assert.equal(calls, 1);
  assert.equal(stats.pendingMessagesByCause.unacknowledged, 10, 'the one being processed and 9 in flight');
  assert.equal(stats.messagesCurrent, 5);
  release();
  await settle();
  assert.equal(calls, 15);
});

test('redelivery - on a topic subscription a rolled-back message waits out its delay and counts its deliveries, apart from other subscriptions (DLV-1, DST-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 1000 });
  cleanup(() => t.close());
  const tx = t.connect().createSession(true);
  const topic = tx.createTopic('prices');
  const failing = tx.createConsumer(topic);
  const other = t.connect().createSession().createConsumer(topic);
  await t.connect().createSession().createProducer(topic).send(new TextMessage('tick'));
  assert.equal((await failing.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), 1);
  await tx.rollback();
  assert.equal(await failing.receiveNoWait(), null, 'waiting out the delay');
  assert.equal(t.engine.destinationStatistics('topic://prices').pendingMessagesByCause.redeliveryDelay, 1);
  const elsewhere = await other.receiveNoWait();
  assert.equal(elsewhere?.getIntProperty('JMSXDeliveryCount'), 1, 'the other subscription has its own count');
  assert.equal(elsewhere?.getJMSRedelivered(), false);
  await t.clock.advance(1000);
  const back = await failing.receiveNoWait();
  assert.equal(back?.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(back?.getJMSRedelivered(), true);
  await tx.commit();
});

test('redelivery - caveat: during a redelivery delay later messages may pass (ORD-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 1, redeliveryDelay: 1000 });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`m${i}`));
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(queue);
  assert.equal(text(await consumer.receiveNoWait()), 'm0');
  await tx.rollback();
  assert.equal(text(await consumer.receiveNoWait()), 'm1', 'm1 passes while m0 waits out its delay');
  await tx.commit();
  await t.clock.advance(1000);
  assert.equal(text(await consumer.receiveNoWait()), 'm0');
});
