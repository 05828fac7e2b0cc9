import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type EngineLogger, type Message, TextMessage } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

function recordingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, fields, message });
  const logger: EngineLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return { logger, lines };
}

test('expiry - an expired message is never delivered: checked lazily at dispatch (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  await producer.send(new TextMessage('short'), { timeToLive: 1000 });
  await producer.send(new TextMessage('long'), { timeToLive: 5000 });
  await t.clock.advance(1000);
  assert.equal(text(await session.createConsumer(queue).receiveNoWait()), 'long');
  assert.equal(t.engine.destinationStatistics(queue).messagesExpired, 1);
});

test('expiry - the active scan removes expired messages nobody reads, every ExpirationScanInterval (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 10_000 });
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  await session.createProducer(queue).send(new TextMessage('x'), { timeToLive: 1000 });
  await t.clock.advance(9_999);
  assert.equal(t.engine.destinationStatistics(queue).messagesCurrent, 1, 'not scanned yet');
  await t.clock.advance(1);
  assert.equal(t.engine.destinationStatistics(queue).messagesCurrent, 0);
  assert.equal(t.engine.destinationStatistics(queue).messagesExpired, 1);
});

test('expiry - a destination time-to-live override wins over the producer (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  await t.engine.createQueue('q', { timeToLiveOverride: 100 });
  const session = t.connect().createSession();
  const message = new TextMessage('x');
  await session.createProducer(session.createQueue('q')).send(message, { timeToLive: 60_000 });
  assert.equal(message.getJMSExpiration(), t.clock.now() + 100);
});

test('expiry - a destination time-to-live override of -1 is no override: the producer time to live applies (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { timeToLiveOverride: -1 });
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('q'));
  producer.setTimeToLive(1000);
  const sent = new TextMessage('m');
  await producer.send(sent);
  assert.equal(sent.getJMSExpiration(), t.clock.now() + 1000);
});

test('expiry - the Log policy logs the message id and the listed fields, never the body (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const { logger, lines } = recordingLogger();
  const t = testEngine({}, { logger, expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  await t.engine.createQueue('q', {
    expirationPolicy: { policy: 'log', fields: ['JMSPriority', 'orderId', '%properties%'] },
  });
  const session = t.connect().createSession();
  const message = new TextMessage('secret body');
  message.setStringProperty('orderId', 'o-7');
  message.setLongProperty('amount', 12n);
  await session.createProducer(session.createQueue('q')).send(message, { timeToLive: 10, priority: 6 });
  await t.clock.advance(10);
  assert.equal(t.engine.expireNow(), 1);
  const line = lines.find((l) => l.message === 'message expired')!;
  assert.deepEqual(line.fields, {
    destination: 'queue://q',
    JMSMessageID: message.getJMSMessageID(),
    JMSPriority: 6,
    orderId: 'o-7',
    amount: '12',
  });
  assert.ok(!JSON.stringify(lines).includes('secret body'));
});

test('expiry - the Redirect policy moves expired messages to the error destination (DLV-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', {
    expirationPolicy: { policy: 'redirect' },
    errorDestination: 'queue://errors',
  });
  const session = t.connect().createSession();
  await session.createProducer(session.createQueue('q')).send(new TextMessage('late'), { timeToLive: 10 });
  await t.clock.advance(10);
  t.engine.expireNow();
  const parked = await session.createConsumer(session.createQueue('errors')).receiveNoWait();
  assert.equal(text(parked), 'late');
  assert.equal(parked?.getStringProperty('JMS_ErrorReason'), 'expired');
  assert.equal(parked?.getJMSExpiration(), 0, 'it does not expire again in the error destination');
});

/** Two messages living 1 s for a listener that holds on to the first for 2 s: the second waits in its pipeline. */
async function expiresInPipeline(t: ReturnType<typeof testEngine>, queue: string) {
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue(queue));
  await producer.send(new TextMessage('a'), { timeToLive: 1000 });
  await producer.send(new TextMessage('b'), { timeToLive: 1000 });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen: string[] = [];
  session.createConsumer(session.createQueue(queue)).setMessageListener(async (m) => {
    seen.push(text(m)!);
    if (seen.length === 1) await gate;
  });
  await settle();
  await t.clock.advance(2000);
  release();
  await settle();
  return seen;
}

test('expiry - a message that expires in a listener pipeline is never delivered (DLV-4, SES-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 10 }, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  assert.deepEqual(await expiresInPipeline(t, 'q'), ['a']);
  const stats = t.engine.destinationStatistics('queue://q');
  assert.equal(stats.messagesExpired, 1);
  assert.equal(stats.messagesCurrent + stats.messagesPending, 0);
});

test('expiry - a message that expires in a listener pipeline follows the Redirect policy (DLV-4, SES-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 10 }, { expirationScanIntervalMs: 0 });
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('q', {
    errorDestination: 'queue://errors',
    expirationPolicy: { policy: 'redirect' },
  });
  assert.deepEqual(await expiresInPipeline(t, 'q'), ['a']);
  const session = t.connect().createSession();
  const moved = await session.createConsumer(session.createQueue('errors')).receiveNoWait();
  assert.equal(text(moved), 'b');
  assert.equal(moved?.getStringProperty('JMS_ErrorReason'), 'expired');
});

test('delivery time - a message is invisible until its delivery delay has passed (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  producer.setDeliveryDelay(2000);
  await producer.send(new TextMessage('later'));
  const consumer = session.createConsumer(queue);
  assert.equal(await consumer.receiveNoWait(), null);
  assert.equal(session.createBrowser(queue).getEnumeration().length, 0, 'a browser does not show it either');
  assert.equal(t.engine.destinationStatistics(queue).pendingMessagesByCause.scheduled, 1);
  await t.clock.advance(2000);
  assert.equal(text(await consumer.receiveNoWait()), 'later');
});

test('delivery time - a schedule as TimeToDeliverOverride holds messages until the next scheduled time (DLV-5, DLV-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  // The fake clock starts at 2026-01-01T00:00:00Z; fire at the next quarter hour, evaluated in UTC by the schedule.
  await t.engine.createQueue('q', { timeToDeliverOverride: '0 0 0,15,30,45 * * * *' });
  const session = t.connect().createSession();
  await t.clock.advance(60_000);
  const message = new TextMessage('batch');
  await session.createProducer(session.createQueue('q')).send(message);
  const delivery = message.getJMSDeliveryTime();
  assert.ok(delivery > t.clock.now(), 'scheduled in the future');
  assert.equal(new Date(delivery).getMinutes() % 15, 0);
  assert.equal(new Date(delivery).getSeconds(), 0);
  const consumer = session.createConsumer(session.createQueue('q'));
  await t.clock.advance(delivery - t.clock.now() - 1);
  assert.equal(await consumer.receiveNoWait(), null);
  await t.clock.advance(1);
  assert.equal(text(await consumer.receiveNoWait()), 'batch');
});

test('delivery time - a relative TimeToDeliverOverride wins over the producer delay (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { timeToDeliverOverride: 500 });
  const session = t.connect().createSession();
  const message = new TextMessage('x');
  await session.createProducer(session.createQueue('q')).send(message, { deliveryDelay: 60_000 });
  assert.equal(message.getJMSDeliveryTime(), t.clock.now() + 500);
});

test('delivery time - a TimeToDeliverOverride of -1 is no override: the producer delay applies (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { timeToDeliverOverride: -1 });
  const session = t.connect().createSession();
  const delayed = new TextMessage('later');
  await session.createProducer(session.createQueue('q')).send(delayed, { deliveryDelay: 2000 });
  assert.equal(delayed.getJMSDeliveryTime(), t.clock.now() + 2000);
  const now = new TextMessage('now');
  await session.createProducer(session.createQueue('q')).send(now);
  assert.equal(now.getJMSDeliveryTime(), t.clock.now(), 'no producer delay: delivered at once');
});

test('delivery time - a TimeToDeliverOverride written as an integer string is ms after the send, as WebLogic writes it (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q', { timeToDeliverOverride: '1500' });
  const session = t.connect().createSession();
  const message = new TextMessage('x');
  await session.createProducer(session.createQueue('q')).send(message, { deliveryDelay: 60_000 });
  assert.equal(message.getJMSDeliveryTime(), t.clock.now() + 1500);
  const consumer = session.createConsumer(session.createQueue('q'));
  await t.clock.advance(1499);
  assert.equal(await consumer.receiveNoWait(), null);
  await t.clock.advance(1);
  assert.equal(text(await consumer.receiveNoWait()), 'x');
});

test('delivery time - a negative TimeToDeliverOverride other than -1 is refused when the destination is made (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  for (const value of [-2, '-5']) {
    await assert.rejects(t.engine.createQueue('q', { timeToDeliverOverride: value }), {
      message: /timeToDeliverOverride.*-1 \(no override\), a number of ms >= 0 or a schedule/,
    });
  }
});

test('delivery time - a message that expires at or before its delivery time is accepted and silently expires (DLV-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  await session
    .createProducer(queue)
    .send(new TextMessage('never'), { deliveryDelay: 1000, timeToLive: 1000 });
  await t.clock.advance(5000);
  assert.equal(await session.createConsumer(queue).receiveNoWait(), null);
  const stats = t.engine.destinationStatistics(queue);
  assert.equal(stats.messagesExpired, 1);
  assert.equal(stats.messagesCurrent + stats.messagesPending, 0);
});

test('delivery time - an invalid schedule override is rejected with its position (DLV-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(t.engine.createQueue('q', { timeToDeliverOverride: '0 0 0 25 * * *' }), {
    name: 'ScheduleSyntaxError',
  });
});
