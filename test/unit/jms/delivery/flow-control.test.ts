import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DeliveryMode,
  type DestinationOptions,
  type MessageProducer,
  ResourceAllocationError,
  Session,
  TextMessage,
  Topic,
} from '../../../../src/index.js';
import { type TestEngine, testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

/** Creates queue 'q' with the quota or thresholds under test, and a producer to it on a new session. */
async function producerToQueue(t: TestEngine, options: DestinationOptions) {
  await t.engine.createQueue('q', options);
  const session = t.connect().createSession();
  return { session, producer: session.createProducer(session.createQueue('q')) };
}

/** Makes the producer non-persistent (for the test's later sends too) and sends each text in turn. */
async function sendNonPersistent(producer: MessageProducer, texts: string[]) {
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (const text of texts) await producer.send(new TextMessage(text));
}

/** Whether a send goes in without waiting on the clock. */
async function goesAtOnce(send: Promise<void>): Promise<boolean> {
  let sent = false;
  void send.then(() => (sent = true));
  await settle();
  return sent;
}

/** What a send came to: the error it failed with, or 'sent'. */
function outcomeOf(send: Promise<void>): Promise<Error | 'sent'> {
  return send.then(
    () => 'sent' as const,
    (error: Error) => error,
  );
}

test('quota - a send to a full destination waits for room and goes in when a message is consumed (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, { messagesMaximum: 2 });
  await producer.send(new TextMessage('1'));
  await producer.send(new TextMessage('2'));
  const third = producer.send(new TextMessage('3'));
  assert.equal(await goesAtOnce(third), false);
  assert.equal(t.engine.blockedSends, 1);
  await session.createConsumer(session.createQueue('q')).receiveNoWait();
  await third;
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 2);
});

test('quota - a blocked send fails with ResourceAllocation after the send timeout; timeout 0 fails at once (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 3000 });
  cleanup(() => t.close());
  const { producer } = await producerToQueue(t, { bytesMaximum: 10 });
  await producer.send(new TextMessage('0123456789'));
  const outcome = outcomeOf(producer.send(new TextMessage('x')));
  await t.clock.advance(2999);
  await t.clock.advance(1);
  const error = await outcome;
  assert.ok(error instanceof ResourceAllocationError);
  assert.match(
    error.message,
    /destination 'queue:\/\/q' is full \(bytesMaximum 10\): the send waited 3000 ms/,
  );
  producer.setSendTimeout(0);
  await assert.rejects(producer.send(new TextMessage('y')), /send timeout of 0/);
});

test('quota - the gateway-wide quota counts every destination (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 }, { quota: { messagesMaximum: 3 } });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('a')).send(new TextMessage('1'));
  await session.createProducer(session.createQueue('b')).send(new TextMessage('2'));
  await session.createProducer(session.createQueue('c')).send(new TextMessage('3'));
  await assert.rejects(
    session.createProducer(session.createQueue('d')).send(new TextMessage('4')),
    /the gateway is full \(messagesMaximum 3\)/,
  );
});

test('quota - deleting a destination cancels its blocked sends with ResourceAllocation (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { producer } = await producerToQueue(t, { messagesMaximum: 1 });
  await producer.send(new TextMessage('1'));
  const blocked = producer.send(new TextMessage('2'));
  await settle();
  await t.engine.deleteDestination('queue://q');
  await assert.rejects(blocked, /send cancelled: destination 'queue:\/\/q' was deleted/);
});

test('quota - concurrent persistent sends cannot all pass a full destination: room is reserved when a send is admitted (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 });
  cleanup(() => t.close());
  const { producer } = await producerToQueue(t, { messagesMaximum: 2 });
  const outcomes = await Promise.allSettled(
    [1, 2, 3, 4, 5].map((i) => producer.send(new TextMessage(`${i}`))),
  );
  assert.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected'],
  );
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 2);
});

test('quota - the gateway-wide quota reserves room for concurrent persistent sends too (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 }, { quota: { messagesMaximum: 2 } });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const outcomes = await Promise.allSettled(
    ['a', 'b', 'c'].map((name) =>
      session.createProducer(session.createQueue(name)).send(new TextMessage(name)),
    ),
  );
  assert.deepEqual(
    outcomes.map((outcome) => outcome.status),
    ['fulfilled', 'fulfilled', 'rejected'],
  );
});

test('quota - one consumed message lets in one waiting send, the oldest (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 10_000 });
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, { messagesMaximum: 2 });
  await sendNonPersistent(producer, ['a', 'b']);
  const sent: string[] = [];
  const waiting = ['w1', 'w2', 'w3'].map((text) =>
    producer.send(new TextMessage(text)).then(() => sent.push(text)),
  );
  await settle();
  assert.equal(t.engine.blockedSends, 3);
  const consumer = session.createConsumer(session.createQueue('q'));
  await consumer.receiveNoWait();
  await settle();
  assert.deepEqual(sent, ['w1'], 'one message out, one send in');
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 2);
  assert.equal(t.engine.blockedSends, 2);
  await consumer.receiveNoWait();
  await consumer.receiveNoWait();
  await Promise.all(waiting);
  assert.deepEqual(sent, ['w1', 'w2', 'w3']);
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 2);
});

test('quota - a waiting send is not overtaken by later ones that would fit: room goes oldest first (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 10_000 });
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, { bytesMaximum: 10 });
  await sendNonPersistent(producer, ['12345', '12345']);
  const sent: string[] = [];
  const big = producer.send(new TextMessage('12345678')).then(() => sent.push('big'));
  const small = producer.send(new TextMessage('12')).then(() => sent.push('small'));
  await settle();
  const consumer = session.createConsumer(session.createQueue('q'));
  await consumer.receiveNoWait();
  await settle();
  assert.deepEqual(sent, [], '5 bytes free: the big send does not fit, and the small one waits behind it');
  const late = session.createProducer(session.createQueue('q'));
  late.setSendTimeout(0);
  await assert.rejects(
    late.send(new TextMessage('1'), { deliveryMode: DeliveryMode.NON_PERSISTENT }),
    /destination 'queue:\/\/q' is full/,
    'a new send does not take room an older one waits for',
  );
  const elsewhere = session.createProducer(session.createQueue('other'));
  await elsewhere.send(new TextMessage('free'));
  await consumer.receiveNoWait();
  await Promise.all([big, small]);
  assert.deepEqual(sent, ['big', 'small']);
  assert.equal(t.engine.destinationStatistics('queue://q').bytesCurrent, 10);
});

test('quota - a send that times out at the head of the line lets the ones behind it in (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, { bytesMaximum: 10 });
  await sendNonPersistent(producer, ['12345', '12345']);
  await session.createConsumer(session.createQueue('q')).receiveNoWait();
  producer.setSendTimeout(1000);
  const big = producer.send(new TextMessage('12345678')).then(
    () => 'sent',
    () => 'failed',
  );
  producer.setSendTimeout(5000);
  let small = false;
  const smallSend = producer.send(new TextMessage('12')).then(() => (small = true));
  await settle();
  assert.equal(small, false);
  await t.clock.advance(1000);
  assert.equal(await big, 'failed');
  await smallSend;
  assert.equal(t.engine.destinationStatistics('queue://q').bytesCurrent, 7);
});

test('quota - a persistent send the store refuses gives its reserved room back (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 });
  cleanup(() => t.close());
  const { producer } = await producerToQueue(t, { messagesMaximum: 1 });
  t.store.failNextCommit(new Error('disk full'));
  await assert.rejects(producer.send(new TextMessage('lost')), /disk full/);
  await producer.send(new TextMessage('kept'));
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 1);
});

test('quota - an uncommitted send holds its room until commit; a rollback frees it for a waiting send (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 10_000 });
  cleanup(() => t.close());
  await t.engine.createQueue('q', { messagesMaximum: 1 });
  const connection = t.connect();
  const tx = connection.createSession(true);
  await tx.createProducer(tx.createQueue('q')).send(new TextMessage('uncommitted'));
  const session = connection.createSession();
  const producer = session.createProducer(session.createQueue('q'));
  producer.setSendTimeout(0);
  await assert.rejects(producer.send(new TextMessage('no room')), /is full \(messagesMaximum 1\)/);
  producer.setSendTimeout(10_000);
  const waiting = producer.send(new TextMessage('waits'));
  assert.equal(await goesAtOnce(waiting), false);
  await tx.rollback();
  await waiting;
  assert.equal(t.engine.destinationStatistics('queue://q').messagesCurrent, 1);
});

test('quota - a send to a distributed topic needs room in every member it goes to (DLV-7, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 });
  cleanup(() => t.close());
  await t.engine.createTopic('east');
  await t.engine.createTopic('west', { messagesMaximum: 1 });
  const prices = await t.engine.createDistributedDestination('topic', 'prices', [
    { name: 'east' },
    { name: 'west' },
  ]);
  const session = t.connect().createSession();
  session.createConsumer(new Topic('east'));
  session.createConsumer(new Topic('west'));
  const producer = session.createProducer(prices);
  await producer.send(new TextMessage('1'));
  await assert.rejects(
    producer.send(new TextMessage('2')),
    /destination 'topic:\/\/west' is full \(messagesMaximum 1\)/,
  );
  assert.equal(t.engine.destinationStatistics('topic://west').messagesCurrent, 1);
  assert.equal(
    t.engine.destinationStatistics('topic://east').messagesCurrent,
    1,
    'a refused send goes to no member',
  );
  await assert.rejects(
    session.createProducer(new Topic('east')).send(new TextMessage('straight to a member')),
    /destination 'topic:\/\/west' is full/,
    "sent to 'east' it goes on to 'west' too",
  );
});

test('quota - a send to a distributed topic waits until every member has room (DLV-7, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 10_000 });
  cleanup(() => t.close());
  await t.engine.createTopic('east', { messagesMaximum: 1 });
  await t.engine.createTopic('west', { messagesMaximum: 1 });
  const prices = await t.engine.createDistributedDestination('topic', 'prices', [
    { name: 'east' },
    { name: 'west' },
  ]);
  const session = t.connect().createSession();
  const east = session.createConsumer(new Topic('east'));
  const west = session.createConsumer(new Topic('west'));
  const producer = session.createProducer(prices);
  await producer.send(new TextMessage('1'));
  let sent = false;
  const waiting = producer.send(new TextMessage('2')).then(() => (sent = true));
  await east.receiveNoWait();
  await settle();
  assert.equal(sent, false, "'west' is still full");
  await west.receiveNoWait();
  await waiting;
  assert.equal(t.engine.destinationStatistics('topic://east').messagesCurrent, 1);
  assert.equal(t.engine.destinationStatistics('topic://west').messagesCurrent, 1);
});

test('flow control - above the high threshold sends are slowed until the destination drops below the low one (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, {
    thresholds: { messagesHigh: 3, messagesLow: 1, delayMs: 100 },
  });
  for (let i = 0; i < 4; i++) await producer.send(new TextMessage(`${i}`));
  const slowed = producer.send(new TextMessage('slow'));
  assert.equal(await goesAtOnce(slowed), false, 'over the high threshold: the send is slowed');
  await t.clock.advance(100);
  await slowed;
  const consumer = session.createConsumer(session.createQueue('q'));
  for (let i = 0; i < 5; i++) await consumer.receiveNoWait();
  assert.equal(
    await goesAtOnce(producer.send(new TextMessage('fast'))),
    true,
    'below the low threshold flow control is off',
  );
});

test('flow control - starts only above the high threshold and stops only below the low one, not at them (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, {
    thresholds: { messagesHigh: 3, messagesLow: 1, delayMs: 100 },
  });
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`${i}`));
  assert.equal(await goesAtOnce(producer.send(new TextMessage('at high'))), true, 'holding 3 is not above 3');
  const slowed = producer.send(new TextMessage('above high'));
  assert.equal(await goesAtOnce(slowed), false, 'holding 4 is above 3');
  await t.clock.advance(100);
  await slowed;
  const consumer = session.createConsumer(session.createQueue('q'));
  for (let i = 0; i < 4; i++) await consumer.receiveNoWait();
  const atLow = producer.send(new TextMessage('at low'));
  assert.equal(await goesAtOnce(atLow), false, 'holding 1 is not below 1: still slowed');
  await t.clock.advance(100);
  await atLow;
  await consumer.receiveNoWait();
  await consumer.receiveNoWait();
  assert.equal(await goesAtOnce(producer.send(new TextMessage('below low'))), true, 'holding 0 is below 1');
});

test('flow control - bytes thresholds: above bytesHigh on, below bytesLow off (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { session, producer } = await producerToQueue(t, {
    thresholds: { bytesHigh: 10, bytesLow: 5, delayMs: 100 },
  });
  await producer.send(new TextMessage('0123456789'));
  assert.equal(await goesAtOnce(producer.send(new TextMessage(''))), true, '10 bytes is not above 10');
  await producer.send(new TextMessage('x'));
  const slowed = producer.send(new TextMessage(''));
  assert.equal(await goesAtOnce(slowed), false, '11 bytes is above 10');
  await t.clock.advance(100);
  await slowed;
  const consumer = session.createConsumer(session.createQueue('q'));
  await consumer.receiveNoWait();
  assert.equal(await goesAtOnce(producer.send(new TextMessage(''))), true, '1 byte is below 5');
});

test('throttling - the IQ-Manager defaults 100,000 / 1,000 / 100 pause producers of a busy destination until it drops below 900 (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 60_000 }, { throttling: true });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const filler = session.createProducer(session.createQueue('filler'));
  filler.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (let i = 0; i < 99_600; i++) await filler.send(new TextMessage(''));
  const busy = session.createProducer(session.createQueue('busy'));
  busy.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (let i = 0; i < 1_001; i++) await busy.send(new TextMessage(''));
  // The gateway now holds 100,601 messages (over 100,000) and 'busy' 1,001 (over 1,000); draining
  // 'busy' keeps the gateway over its threshold, so only the destination rule can end throttling.
  let sent = false;
  const throttled = busy.send(new TextMessage('waits')).then(() => (sent = true));
  await settle();
  assert.equal(sent, false, 'throttled');
  const other = session.createProducer(session.createQueue('quiet'));
  await other.send(new TextMessage('free'), { deliveryMode: DeliveryMode.NON_PERSISTENT });
  const consumer = session.createConsumer(session.createQueue('busy'));
  for (let i = 0; i < 101; i++) await consumer.receiveNoWait();
  await settle();
  assert.equal(sent, false, 'at 900 it is not yet below threshold minus lag');
  await consumer.receiveNoWait();
  await throttled;
  assert.equal(
    t.engine.destinationStatistics('queue://busy').messagesCurrent,
    900,
    '899 plus the send that waited',
  );
});

test('throttling - producers go on once the gateway falls below its threshold (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 60_000 },
    { throttling: { serverThreshold: 10, destinationThreshold: 5, lag: 2 } },
  );
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const other = session.createProducer(session.createQueue('other'));
  for (let i = 0; i < 5; i++) await other.send(new TextMessage(''));
  const busy = session.createProducer(session.createQueue('busy'));
  for (let i = 0; i < 6; i++) await busy.send(new TextMessage(''));
  let sent = false;
  const throttled = busy.send(new TextMessage('')).then(() => (sent = true));
  await settle();
  assert.equal(sent, false);
  const drain = session.createConsumer(session.createQueue('other'));
  await drain.receiveNoWait();
  await drain.receiveNoWait();
  await throttled;
});

test('throttling - a topic message counts once, however many subscriptions hold it, until every subscriber has it (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 60_000 },
    { throttling: { serverThreshold: 5, destinationThreshold: 5, lag: 1 } },
  );
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const topic = session.createTopic('prices');
  const first = session.createConsumer(topic);
  const second = session.createConsumer(topic);
  const producer = session.createProducer(topic);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (let i = 0; i < 6; i++)
    assert.equal(await goesAtOnce(producer.send(new TextMessage(`${i}`))), true, `publish ${i}`);
  const throttled = producer.send(new TextMessage('6'));
  assert.equal(await goesAtOnce(throttled), false, '6 messages are over 5, counted once each');
  for (let i = 0; i < 6; i++) await first.receiveNoWait();
  await settle();
  assert.equal(t.engine.blockedSends, 1, 'the second subscriber has none of them yet');
  for (let i = 0; i < 3; i++) await second.receiveNoWait();
  await settle();
  assert.equal(t.engine.blockedSends, 0, '3 undelivered is below 5 - 1');
  await throttled;
});

test('throttling - a message delivered outside a transaction stops counting; one received in a transaction counts until commit (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 60_000 },
    { throttling: { serverThreshold: 3, destinationThreshold: 3, lag: 1 } },
  );
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession();
  const producer = session.createProducer(session.createQueue('q'));
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  for (let i = 0; i < 4; i++) await producer.send(new TextMessage(`${i}`));
  const tx = connection.createSession(true);
  const transacted = tx.createConsumer(tx.createQueue('q'));
  for (let i = 0; i < 3; i++) await transacted.receiveNoWait();
  const first = producer.send(new TextMessage('first'));
  assert.equal(await goesAtOnce(first), false, 'received but not committed: still undelivered');
  await tx.commit();
  await first;
  await transacted.close();
  for (let i = 0; i < 2; i++) await producer.send(new TextMessage(`more ${i}`));
  const second = producer.send(new TextMessage('second'));
  assert.equal(await goesAtOnce(second), false, '4 undelivered: throttled again');
  const client = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const unacknowledged = client.createConsumer(client.createQueue('q'));
  for (let i = 0; i < 4; i++) await unacknowledged.receiveNoWait();
  await second;
  assert.equal(
    t.engine.destinationStatistics('queue://q').pendingMessagesByCause.unacknowledged,
    4,
    'delivered and not acknowledged: held, but no longer undelivered',
  );
});

test('throttling - while the gateway is under its server threshold no producer is throttled, whatever a destination holds (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 0 },
    { throttling: { serverThreshold: 100, destinationThreshold: 3, lag: 1 } },
  );
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('busy'));
  for (let i = 0; i < 50; i++) await producer.send(new TextMessage(`${i}`));
  assert.equal(t.engine.destinationStatistics('queue://busy').messagesCurrent, 50);
});

test("throttling - a topic's publisher is throttled again when its backlog builds up again, and not while the gateway is unloaded (DLV-8, 004's example)", async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 60_000 },
    { throttling: { serverThreshold: 10, destinationThreshold: 5, lag: 2 } },
  );
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const filler = session.createProducer(session.createQueue('filler'));
  for (let i = 0; i < 10; i++) await filler.send(new TextMessage(`${i}`));
  const topic = session.createTopic('Topic_A');
  const subscribers = [session.createConsumer(topic), session.createConsumer(topic)];
  const publisher = session.createProducer(topic);
  const publish = (text: string) => goesAtOnce(publisher.send(new TextMessage(text)));
  for (let i = 0; i < 6; i++) assert.equal(await publish(`a${i}`), true, `a${i}`);
  // The gateway holds 16 undelivered messages (over 10) and Topic_A 6 (over 5), counted once each.
  const paused = publisher.send(new TextMessage('waits'));
  assert.equal(await goesAtOnce(paused), false, 'throttled');
  for (const subscriber of subscribers) for (let i = 0; i < 3; i++) await subscriber.receiveNoWait();
  await settle();
  assert.equal(t.engine.blockedSends, 1, '3 undelivered is not below 5 - 2');
  for (const subscriber of subscribers) await subscriber.receiveNoWait();
  await paused;
  // Released at 2 (now 3 with the send that waited): it builds up again.
  for (let i = 0; i < 3; i++) assert.equal(await publish(`b${i}`), true, `b${i}`);
  const again = publisher.send(new TextMessage('waits again'));
  assert.equal(await goesAtOnce(again), false, 'over 5 again with the gateway over 10: throttled again');
  const drain = session.createConsumer(session.createQueue('filler'));
  for (let i = 0; i < 10; i++) await drain.receiveNoWait();
  await again;
  // The gateway is no longer loaded: the topic builds a greater backlog without being throttled.
  for (let i = 0; i < 2; i++) assert.equal(await publish(`c${i}`), true, `c${i}`);
  assert.equal(t.engine.destinationStatistics('topic://Topic_A').messagesCurrent, 2 * 9);
});

test('throttling - a throttled send is paused, not failed, and its send timeout bounds the pause with an error that says it was throttled (DLV-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine(
    { sendTimeout: 1000 },
    { throttling: { serverThreshold: 3, destinationThreshold: 3, lag: 1 } },
  );
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('busy'));
  for (let i = 0; i < 4; i++) await producer.send(new TextMessage(`${i}`));
  const consumer = session.createConsumer(session.createQueue('busy'));
  const paused = producer.send(new TextMessage('paused'));
  await t.clock.advance(999);
  for (let i = 0; i < 3; i++) await consumer.receiveNoWait();
  await paused;
  await producer.send(new TextMessage('in'));
  await producer.send(new TextMessage('in too'));
  const outcome = outcomeOf(producer.send(new TextMessage('gives up')));
  await t.clock.advance(1000);
  const error = await outcome;
  assert.ok(error instanceof ResourceAllocationError);
  assert.equal(
    error.message,
    "producers to 'queue://busy' are throttled: the gateway holds 4 undelivered messages (serverThreshold 3) " +
      'and the destination 4 (destinationThreshold 3); the send was paused for its send timeout of 1000 ms and failed; ' +
      'sends resume once the gateway holds fewer than 3 or the destination fewer than 2 (destinationThreshold minus lag 1)',
  );
  producer.setSendTimeout(0);
  await assert.rejects(
    producer.send(new TextMessage('no wait')),
    /are throttled: .*; the send has a send timeout of 0, so it failed instead of pausing; sends resume/,
  );
});

test('quota - a message received in a transaction and rolled back after its subscription ended no longer counts against the topic (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ sendTimeout: 0 });
  cleanup(() => t.close());
  await t.engine.createTopic('t', { messagesMaximum: 1 });
  const connection = t.connect();
  const tx = connection.createSession(true);
  const subscriber = tx.createConsumer(tx.createTopic('t'));
  const producer = connection.createSession().createProducer(tx.createTopic('t'));
  await producer.send(new TextMessage('1'));
  await subscriber.receiveNoWait();
  await subscriber.close();
  await tx.rollback();
  tx.createConsumer(tx.createTopic('t'));
  await producer.send(new TextMessage('2'));
  assert.equal(t.engine.destinationStatistics('topic://t').messagesCurrent, 1);
  assert.equal(t.engine.statistics().totals.messagesPending, 0);
});
