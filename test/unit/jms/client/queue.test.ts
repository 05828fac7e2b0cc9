import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeliveryMode, InvalidDestinationError, Queue, Session, TextMessage } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const texts = (messages: ({ getText(): string | null } | null)[]) =>
  messages.map((m) => m?.getText() ?? null);

test('queue - each message goes to exactly one of several consumers (DST-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const a = session.createConsumer(queue);
  const b = session.createConsumer(queue);
  const producer = session.createProducer(queue);
  for (let i = 0; i < 10; i++) await producer.send(new TextMessage(`m${i}`));
  const received: string[] = [];
  for (;;) {
    const m = (await a.receiveNoWait()) ?? (await b.receiveNoWait());
    if (!m) break;
    received.push((m as TextMessage).getText()!);
  }
  assert.deepEqual(received.sort(), Array.from({ length: 10 }, (_, i) => `m${i}`).sort());
});

test('queue - higher priority first, then send order (DST-1, ORD-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  const sends: [string, number][] = [
    ['a4', 4],
    ['b9', 9],
    ['c0', 0],
    ['d9', 9],
    ['e4', 4],
  ];
  for (const [text, priority] of sends) await producer.send(new TextMessage(text), { priority });
  const consumer = session.createConsumer(queue);
  const got = [];
  for (let i = 0; i < sends.length; i++) got.push(await consumer.receiveNoWait());
  assert.deepEqual(texts(got as TextMessage[]), ['b9', 'd9', 'a4', 'e4', 'c0']);
});

test('queue - a destination with keys sorts by them instead (DST-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('sorted', { keys: [{ property: 'rank', direction: 'ascending' }] });
  const session = t.connect().createSession();
  const queue = session.createQueue('sorted');
  const producer = session.createProducer(queue);
  for (const rank of [3, 1, 2]) {
    const m = new TextMessage(`r${rank}`);
    m.setIntProperty('rank', rank);
    await producer.send(m);
  }
  await producer.send(new TextMessage('none'));
  const consumer = session.createConsumer(queue);
  const got = [];
  for (let i = 0; i < 4; i++) got.push(await consumer.receiveNoWait());
  assert.deepEqual(texts(got as TextMessage[]), ['r1', 'r2', 'r3', 'none']);
});

test('queue - a pending receive gets the next message sent; receive(timeout) returns null after it (SES-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const consumer = session.createConsumer(queue);
  const pending = consumer.receive();
  await session.createProducer(queue).send(new TextMessage('hi'));
  assert.equal(((await pending) as TextMessage).getText(), 'hi');
  const timed = consumer.receive(1000);
  await t.clock.advance(999);
  let done = false;
  void timed.then(() => (done = true));
  await settle();
  assert.equal(done, false);
  await t.clock.advance(1);
  assert.equal(await timed, null);
  assert.equal(await consumer.receiveNoWait(), null);
});

test('queue - the producer sets provider headers at send, overwriting what the sender set (MSG-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const message = new TextMessage('x');
  message.setJMSMessageID('mine');
  message.setJMSTimestamp(1);
  await session
    .createProducer(queue)
    .send(message, { priority: 7, timeToLive: 5000, deliveryMode: DeliveryMode.NON_PERSISTENT });
  const now = t.clock.now();
  assert.match(message.getJMSMessageID()!, /^ID:/);
  assert.equal(message.getJMSTimestamp(), now);
  assert.equal(message.getJMSExpiration(), now + 5000);
  const received = (await session.createConsumer(queue).receiveNoWait())!;
  assert.equal(received.getJMSMessageID(), message.getJMSMessageID());
  assert.equal(received.getJMSPriority(), 7);
  assert.equal(received.getJMSDeliveryMode(), DeliveryMode.NON_PERSISTENT);
  assert.ok(received.getJMSDestination()?.equals(queue));
  assert.equal(received.getIntProperty('JMSXDeliveryCount'), 1);
  assert.equal(received.getJMSRedelivered(), false);
});

test('queue - message ids are unique across sends and engines (MSG-1)', async (context) => {
  const cleanup = teardown(context);
  const ids = new Set<string>();
  for (let e = 0; e < 2; e++) {
    const t = testEngine();
    cleanup(() => t.close());
    const session = t.connect().createSession();
    const producer = session.createProducer(session.createQueue('q'));
    for (let i = 0; i < 50; i++) {
      const m = new TextMessage('x');
      await producer.send(m);
      ids.add(m.getJMSMessageID()!);
    }
    await t.close();
  }
  assert.equal(ids.size, 100);
});

test('queue - bad sends get JMS-named errors that say what was wrong', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('q'));
  await assert.rejects(producer.send(new TextMessage('x'), { priority: 10 }), /priority 10 is out of range/);
  await assert.rejects(
    producer.send(new TextMessage('x'), { timeToLive: -1 }),
    /time to live -1 is not valid/,
  );
  assert.throws(() => producer.setTimeToLive(-5), /time to live -5/);
  await assert.rejects(session.createProducer().send(new TextMessage('x')), InvalidDestinationError);
  await assert.rejects(session.createProducer().send(null as never, new TextMessage('x')), /no destination/);
});

test('queue - a browser shows available messages in order, through a selector, without consuming (DST-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 4; i++) {
    const m = new TextMessage(`m${i}`);
    m.setIntProperty('n', i);
    await producer.send(m);
  }
  const txSession = connection.createSession(true);
  await txSession.createProducer(queue).send(new TextMessage('uncommitted'));
  const received = await session.createConsumer(queue, 'n = 0').receiveNoWait();
  assert.equal((received as TextMessage).getText(), 'm0');
  assert.deepEqual(texts(session.createBrowser(queue).getEnumeration() as TextMessage[]), ['m1', 'm2', 'm3']);
  const browser = session.createBrowser(queue, 'n >= 2');
  assert.equal(browser.getMessageSelector(), 'n >= 2');
  assert.deepEqual(texts([...browser] as TextMessage[]), ['m2', 'm3']);
  assert.equal(t.engine.destinationStatistics(queue).messagesCurrent, 3);
});

test('queue - statistics count current and pending messages and bytes by cause (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = session.createQueue('stats');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage('12345'));
  await producer.send(new TextMessage('later'), { deliveryDelay: 60_000 });
  const tx = connection.createSession(true);
  await tx.createProducer(queue).send(new TextMessage('tx'));
  const consumer = session.createConsumer(queue);
  await consumer.receiveNoWait();
  const stats = t.engine.destinationStatistics(queue);
  assert.equal(stats.messagesCurrent, 2);
  assert.equal(stats.bytesCurrent, 10);
  assert.equal(stats.messagesPending, 3);
  assert.deepEqual(stats.pendingMessagesByCause, {
    uncommitted: 1,
    scheduled: 1,
    redeliveryDelay: 0,
    unacknowledged: 1,
    errorDestinationFull: 0,
  });
  assert.equal(stats.messagesReceived, 4);
  assert.equal(stats.consumersCurrent, 1);
  assert.equal(stats.messagesHighWater, 5);
  assert.equal(t.engine.statistics().totals.messagesPending, 3);
});

test('queue - an unknown destination is created on first use unless deleted or auto-create is off (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({}, { autoCreateDestinations: false });
  const session = t.connect().createSession();
  assert.throws(
    () => session.createConsumer(new Queue('nope')),
    /destination 'queue:\/\/nope' does not exist/,
  );
  await t.engine.createQueue('yes');
  session.createConsumer(new Queue('yes'));
  await t.close();
  const auto = testEngine();
  cleanup(() => auto.close());
  const s2 = auto.connect().createSession();
  s2.createProducer(new Queue('made'));
  assert.ok(auto.engine.destinations().some((d) => d.name === 'made'));
  await auto.engine.deleteDestination('queue://made');
  assert.throws(() => s2.createProducer(new Queue('made')), /it was deleted/);
});

test('queue - a selector consumer takes the matching messages already there and leaves the others (SEL-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  const producer = session.createProducer(queue);
  for (const color of ['red', 'blue', 'red', 'green']) {
    const m = new TextMessage(color);
    m.setStringProperty('color', color);
    await producer.send(m);
  }
  const reds = session.createConsumer(queue, "color = 'red'");
  assert.equal(reds.getMessageSelector(), "color = 'red'");
  assert.deepEqual(
    texts([
      await reds.receiveNoWait(),
      await reds.receiveNoWait(),
      await reds.receiveNoWait(),
    ] as TextMessage[]),
    ['red', 'red', null],
  );
  const all = session.createConsumer(queue);
  assert.deepEqual(
    texts([await all.receiveNoWait(), await all.receiveNoWait(), await all.receiveNoWait()] as TextMessage[]),
    ['blue', 'green', null],
  );
});

test('queue - an invalid selector fails consumer and browser creation (SEL-5)', (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = session.createQueue('q');
  assert.throws(() => session.createConsumer(queue, 'color = '), { name: 'InvalidSelectorError' });
  assert.throws(() => session.createBrowser(queue, 'a LIKE'), { name: 'InvalidSelectorError' });
});
