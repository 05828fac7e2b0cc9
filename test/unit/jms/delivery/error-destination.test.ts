import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type EngineLogger,
  InvalidDestinationError,
  type Message,
  PoisonMessageError,
  Session,
  TextMessage,
} from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

function recordingLogger() {
  const errors: { fields: Record<string, unknown>; message: string }[] = [];
  const ignore = () => undefined;
  const logger: EngineLogger = {
    error: (fields, message) => void errors.push({ fields, message }),
    warn: ignore,
    info: ignore,
    debug: ignore,
  };
  return { logger, errors };
}

/** Messages the queue holds in any state, and those parked for room in its error destination. */
function held(t: ReturnType<typeof testEngine>, queue: string) {
  const stats = t.engine.destinationStatistics(queue);
  return {
    held: stats.messagesCurrent + stats.messagesPending,
    parked: stats.pendingMessagesByCause.errorDestinationFull,
  };
}

/** An error queue that holds one message, already full. */
async function fullErrorQueue(t: ReturnType<typeof testEngine>) {
  await t.engine.createQueue('errors', { messagesMaximum: 1 });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('errors')).send(new TextMessage('filler'));
  return session.createConsumer(session.createQueue('errors'));
}

/**
 * Queue 'q', whose undeliverable messages go to the full error queue, and a client-acknowledge
 * session to send to it and reject what it delivers.
 */
async function queueIntoFullErrorQueue(t: ReturnType<typeof testEngine>) {
  const errorQueue = await fullErrorQueue(t);
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  return { errorQueue, session, producer: session.createProducer(session.createQueue('q')) };
}

/** Queue 'q' under the Redirect expiration policy into the full error queue, holding 'late', expired 100 ms ago. */
async function expiredIntoFullErrorQueue(t: ReturnType<typeof testEngine>) {
  const errorQueue = await fullErrorQueue(t);
  await t.engine.createQueue('q', {
    errorDestination: 'queue://errors',
    expirationPolicy: { policy: 'redirect' },
  });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('late'), { timeToLive: 100 });
  await t.clock.advance(200);
  return { errorQueue, session };
}

test('error destination - a full one holds an undeliverable message for no consumer and moves it once there is room (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const { logger, errors } = recordingLogger();
  const t = testEngine({}, { logger });
  cleanup(() => t.close());
  const errorQueue = await fullErrorQueue(t);
  await t.engine.createQueue('q', { errorDestination: 'queue://errors', redeliveryLimit: 0 });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('m'));
  const tx = t.connect().createSession(true);
  const consumer = tx.createConsumer(tx.createQueue('q'));
  assert.equal((await consumer.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), 1);
  await tx.rollback();
  assert.deepEqual(held(t, 'queue://q'), { held: 1, parked: 1 });
  await t.clock.advance(5_000);
  assert.equal(await consumer.receiveNoWait(), null, 'a limit-0 message is never delivered again');
  assert.deepEqual(held(t, 'queue://q'), { held: 1, parked: 1 });
  assert.equal(errors.length, 1, 'logged once per interval');
  assert.match(errors[0]!.message, /error destination is full/);
  assert.equal(errors[0]!.fields.errorDestination, 'queue://errors');

  assert.equal(text(await errorQueue.receiveNoWait()), 'filler');
  await settle();
  assert.deepEqual(held(t, 'queue://q'), { held: 0, parked: 0 }, 'moved as soon as the error queue drained');
  const parked = await errorQueue.receiveNoWait();
  assert.equal(text(parked), 'm');
  assert.equal(parked?.getStringProperty('JMS_ErrorReason'), 'redelivery limit 0 reached after 1 deliveries');
  assert.equal(t.engine.messagesDiscarded, 0);
});

test('error destination - a poison message waiting for a full one is never handed back to the listener (DLV-3, DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors', { messagesMaximum: 0 });
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('bad'));
  let calls = 0;
  session.createConsumer(session.createQueue('q')).setMessageListener(() => {
    calls++;
    throw new PoisonMessageError('cannot parse');
  });
  await settle();
  await t.clock.advance(10_000);
  assert.equal(calls, 1);
  assert.deepEqual(held(t, 'queue://q'), { held: 1, parked: 1 });
  assert.equal(t.engine.statistics().totals.pendingMessagesByCause.errorDestinationFull, 1);
});

test('error destination - while full, it is reported again once per interval (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const { logger, errors } = recordingLogger();
  const t = testEngine({}, { logger, expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  const { session, producer } = await queueIntoFullErrorQueue(t);
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`m${i}`));
  const consumer = session.createConsumer(session.createQueue('q'));
  for (let i = 0; i < 3; i++) session.reject((await consumer.receiveNoWait())!);
  assert.equal(errors.length, 1);
  await t.clock.advance(59_999);
  assert.equal(errors.length, 1);
  await t.clock.advance(1_000);
  assert.equal(errors.length, 2, 'still full a minute later');
  assert.equal(errors[1]!.fields.parked, 3);
});

test('error destination - parked messages move in the order they failed, as room frees up (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { errorQueue, session, producer } = await queueIntoFullErrorQueue(t);
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`m${i}`));
  const consumer = session.createConsumer(session.createQueue('q'));
  const received = [];
  for (let i = 0; i < 3; i++) received.push((await consumer.receiveNoWait())!);
  for (const i of [2, 0, 1]) session.reject(received[i]!);
  const moved: (string | null)[] = [];
  for (let i = 0; i < 4; i++) {
    moved.push(text(await errorQueue.receiveNoWait()));
    await settle();
  }
  assert.deepEqual(moved, ['filler', 'm2', 'm0', 'm1']);
  assert.deepEqual(held(t, 'queue://q'), { held: 0, parked: 0 });
});

test('error destination - a parked message keeps its unit of order waiting until it has moved (DLV-3, ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { errorQueue, session, producer } = await queueIntoFullErrorQueue(t);
  for (const body of ['g1', 'g2']) {
    const m = new TextMessage(body);
    m.setStringProperty('JMSXGroupID', 'g');
    await producer.send(m);
  }
  const consumer = session.createConsumer(session.createQueue('q'));
  session.reject((await consumer.receiveNoWait())!);
  assert.equal(await consumer.receiveNoWait(), null, 'g2 waits: g1 has not reached the error destination');
  await errorQueue.receiveNoWait();
  await settle();
  assert.equal(text(await consumer.receiveNoWait()), 'g2');
});

test('error destination - an expired message found at dispatch under the Redirect policy is held, not lost, while it is full (DLV-3, DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  const { errorQueue, session } = await expiredIntoFullErrorQueue(t);
  const consumer = session.createConsumer(session.createQueue('q'));
  assert.equal(await consumer.receiveNoWait(), null);
  assert.deepEqual(held(t, 'queue://q'), { held: 1, parked: 1 });
  assert.equal(t.engine.expireNow(), 0, 'a parked message is not expired twice');
  await errorQueue.receiveNoWait();
  await settle();
  const moved = await errorQueue.receiveNoWait();
  assert.equal(text(moved), 'late');
  assert.equal(moved?.getStringProperty('JMS_ErrorReason'), 'expired');
  assert.equal(t.engine.destinationStatistics('queue://q').messagesExpired, 1);
});

test('error destination - an expired message found by the active scan under the Redirect policy is held while it is full (DLV-3, DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  const { errorQueue } = await expiredIntoFullErrorQueue(t);
  assert.equal(t.engine.expireNow(), 1);
  assert.deepEqual(held(t, 'queue://q'), { held: 1, parked: 1 });
  await errorQueue.receiveNoWait();
  await settle();
  assert.equal(text(await errorQueue.receiveNoWait()), 'late');
});

test('error destination - deleting a destination drops its parked messages with it (DLV-3, DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const { errorQueue, session, producer } = await queueIntoFullErrorQueue(t);
  await producer.send(new TextMessage('m'));
  session.reject((await session.createConsumer(session.createQueue('q')).receiveNoWait())!);
  await t.engine.deleteDestination('queue://q');
  await errorQueue.receiveNoWait();
  await settle();
  assert.equal(await errorQueue.receiveNoWait(), null);
  assert.equal(t.engine.statistics().totals.messagesPending, 0);
});

test('error destination - a destination cannot be its own error destination (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(
    t.engine.createQueue('q', { errorDestination: 'queue://q' }),
    /destination 'queue:\/\/q' cannot be its own error destination: its undeliverable messages would come straight back to it/,
  );
  await assert.rejects(t.engine.createTopic('t', { errorDestination: 'topic://t' }), InvalidDestinationError);
  await assert.rejects(
    t.engine.createQueue('q', { errorDestination: 'orders.errors' }),
    /error destination 'orders.errors' of 'queue:\/\/q' is not valid \(expected 'queue:\/\/name' or 'topic:\/\/name'\)/,
  );
  assert.deepEqual(t.engine.destinations(), []);
});

test('error destination - a distributed destination cannot be one, whichever is created first (DLV-3, DST-8)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createDistributedDestination('queue', 'all', [{ name: 'a' }, { name: 'b' }]);
  await assert.rejects(
    t.engine.createQueue('q', { errorDestination: 'queue://all' }),
    /error destination 'queue:\/\/all' of 'queue:\/\/q' is a distributed destination: name one of its members instead \('queue:\/\/a', 'queue:\/\/b'\)/,
  );
  await assert.rejects(
    t.engine.createQueue('q', { errorDestination: 'queue://all/a' }),
    /is a member's alias: name the member itself, 'queue:\/\/a'/,
  );
  await t.engine.createQueue('named', { errorDestination: 'queue://later' });
  await assert.rejects(
    t.engine.createDistributedDestination('queue', 'later', [{ name: 'c' }]),
    /distributed destination 'queue:\/\/later' cannot be created: it would be the error destination of 'queue:\/\/named'/,
  );
  await assert.rejects(
    t.engine.createDistributedDestination('queue', 'own', [{ name: 'd' }], {
      memberOptions: { errorDestination: 'queue://own' },
    }),
    /it would be the error destination of its own members/,
  );
});
test('error destination - a topic as error destination gets the message for each of its subscriptions (DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createTopic('errors');
  await t.engine.createQueue('q', { errorDestination: 'topic://errors', redeliveryLimit: 0 });
  const session = t.connect().createSession();
  const first = session.createConsumer(session.createTopic('errors'));
  const second = session.createConsumer(session.createTopic('errors'));
  await session.createProducer(session.createQueue('q')).send(new TextMessage('m'));
  const tx = t.connect().createSession(true);
  await tx.createConsumer(tx.createQueue('q')).receiveNoWait();
  await tx.rollback();
  for (const subscriber of [first, second]) {
    const parked = await subscriber.receiveNoWait();
    assert.equal(text(parked), 'm');
    assert.equal(parked?.getStringProperty('JMS_ErrorOrigin'), 'queue://q');
    assert.equal(parked?.getJMSDestination()?.toString(), 'topic://errors');
  }
  assert.equal(t.engine.messagesMovedToErrorDestinations, 1);
});

test('error destination - a message of a deleted destination rejected while it is full is gone, not held for good (DLV-3, DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const errorQueue = await fullErrorQueue(t);
  await t.engine.createQueue('q', { errorDestination: 'queue://errors' });
  // A transaction keeps what it received through the delete (DST-6).
  const session = t.connect().createSession(true);
  await t.connect().createSession().createProducer(session.createQueue('q')).send(new TextMessage('m'));
  const received = (await session.createConsumer(session.createQueue('q')).receiveNoWait())!;
  await t.engine.deleteDestination('queue://q');
  session.reject(received);
  assert.equal(t.engine.held().messages, 1, 'only the filler is left');
  await errorQueue.receiveNoWait();
  await settle();
  assert.equal(t.engine.held().messages, 0);
});
