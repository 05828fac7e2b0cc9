import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Message, Session, TextMessage } from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

async function fill(session: Session, name: string, count: number) {
  const queue = session.createQueue(name);
  const producer = session.createProducer(queue);
  for (let i = 0; i < count; i++) await producer.send(new TextMessage(`m${i}`));
  return queue;
}

test('acknowledge - AUTO removes a message once receive returns (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession();
  const queue = await fill(session, 'q', 1);
  assert.equal(text(await session.createConsumer(queue).receiveNoWait()), 'm0');
  assert.equal(t.engine.destinationStatistics(queue).messagesPending, 0);
  assert.equal(t.engine.destinationStatistics(queue).messagesAcknowledged, 1);
  await connection.close();
  const again = t.connect().createSession().createConsumer(queue);
  assert.equal(await again.receiveNoWait(), null);
});

test('acknowledge - CLIENT policy All acknowledges everything the session received (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ acknowledgePolicy: 'all' });
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = await fill(session, 'q', 3);
  const consumer = session.createConsumer(queue);
  const first = (await consumer.receiveNoWait())!;
  await consumer.receiveNoWait();
  await consumer.receiveNoWait();
  await first.acknowledge();
  assert.equal(t.engine.destinationStatistics(queue).messagesPending, 0);
  await connection.close();
  assert.equal(t.engine.destinationStatistics(queue).messagesCurrent, 0);
});

test('acknowledge - CLIENT policy Previous acknowledges only up to and including that message (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ acknowledgePolicy: 'previous' });
  cleanup(() => t.close());
  const connection = t.connect();
  const session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = await fill(session, 'q', 3);
  const consumer = session.createConsumer(queue);
  await consumer.receiveNoWait();
  const second = (await consumer.receiveNoWait())!;
  await consumer.receiveNoWait();
  await second.acknowledge();
  assert.equal(t.engine.destinationStatistics(queue).pendingMessagesByCause.unacknowledged, 1);
  await connection.close();
  const other = t.connect().createSession().createConsumer(queue);
  const back = (await other.receiveNoWait())!;
  assert.equal(text(back), 'm2');
  assert.equal(back.getJMSRedelivered(), true);
  assert.equal(await other.receiveNoWait(), null);
});

test('acknowledge - recover() redelivers every unacknowledged message, marked redelivered, oldest first (SES-3, ORD-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = await fill(session, 'q', 3);
  const consumer = session.createConsumer(queue);
  assert.deepEqual(
    [text(await consumer.receiveNoWait()), text(await consumer.receiveNoWait())],
    ['m0', 'm1'],
  );
  await session.recover();
  const again = [
    await consumer.receiveNoWait(),
    await consumer.receiveNoWait(),
    await consumer.receiveNoWait(),
  ];
  assert.deepEqual(again.map(text), ['m0', 'm1', 'm2']);
  assert.deepEqual(
    again.map((m) => m!.getJMSRedelivered()),
    [true, true, false],
  );
  assert.deepEqual(
    again.map((m) => m!.getIntProperty('JMSXDeliveryCount')),
    [2, 2, 1],
  );
});

test('acknowledge - rolling back a transacted receive makes it available again with JMSXDeliveryCount 2 (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const queue = await fill(connection.createSession(), 'q', 1);
  const tx = connection.createSession(true);
  const consumer = tx.createConsumer(queue);
  const first = (await consumer.receiveNoWait())!;
  assert.equal(first.getIntProperty('JMSXDeliveryCount'), 1);
  await tx.rollback();
  const second = (await consumer.receiveNoWait())!;
  assert.equal(text(second), 'm0');
  assert.equal(second.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(second.getJMSRedelivered(), true);
  await tx.commit();
  assert.equal(await consumer.receiveNoWait(), null);
  assert.equal(t.engine.destinationStatistics(queue).messagesPending, 0);
});

test('acknowledge - a transaction commits its sends and receives together; rollback discards its sends (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const plain = connection.createSession();
  const input = await fill(plain, 'in', 1);
  const output = plain.createQueue('out');
  const tx = connection.createSession(true);
  const producer = tx.createProducer(output);
  const got = await tx.createConsumer(input).receiveNoWait();
  await producer.send(new TextMessage(`processed ${text(got)}`));
  const outConsumer = plain.createConsumer(output);
  assert.equal(await outConsumer.receiveNoWait(), null, 'an uncommitted send is not visible');
  assert.equal(t.engine.destinationStatistics(output).pendingMessagesByCause.uncommitted, 1);
  await tx.commit();
  assert.equal(text(await outConsumer.receiveNoWait()), 'processed m0');
  assert.equal(
    t.engine.destinationStatistics(input).messagesCurrent +
      t.engine.destinationStatistics(input).messagesPending,
    0,
  );
  await producer.send(new TextMessage('dropped'));
  await tx.rollback();
  assert.equal(await outConsumer.receiveNoWait(), null);
  assert.equal(t.engine.destinationStatistics(output).messagesPending, 0);
});

test('acknowledge - a failed store commit rolls the transaction back (SES-2, PER-3)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const queue = await fill(connection.createSession(), 'q', 1);
  const tx = connection.createSession(true);
  const consumer = tx.createConsumer(queue);
  await consumer.receiveNoWait();
  await tx.createProducer(queue).send(new TextMessage('new'));
  t.store.failNextCommit(new Error('disk full'));
  await assert.rejects(tx.commit(), { name: 'TransactionRolledBackError' });
  const back = (await consumer.receiveNoWait())!;
  assert.equal(text(back), 'm0');
  assert.equal(back.getJMSRedelivered(), true);
  assert.equal(await consumer.receiveNoWait(), null, 'the rolled-back send never appears');
});

test('acknowledge - a listener that throws in AUTO mode gets the message again (SES-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const errors: Error[] = [];
  connection.setExceptionListener((error) => errors.push(error));
  const session = connection.createSession();
  const queue = await fill(session, 'q', 1);
  const seen: number[] = [];
  const consumer = session.createConsumer(queue);
  consumer.setMessageListener((message) => {
    seen.push(message.getIntProperty('JMSXDeliveryCount'));
    if (seen.length === 1) throw new Error('boom');
  });
  await settle();
  assert.deepEqual(seen, [1, 2]);
  assert.equal(errors[0]?.message, 'boom');
  assert.equal(
    t.engine.destinationStatistics(queue).messagesPending +
      t.engine.destinationStatistics(queue).messagesCurrent,
    0,
  );
});

test('acknowledge - closing a consumer makes its unacknowledged messages available again as redelivered (SES-4)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = await fill(session, 'q', 2);
  const consumer = session.createConsumer(queue);
  await consumer.receiveNoWait();
  await consumer.close();
  const next = session.createConsumer(queue);
  const m = (await next.receiveNoWait())!;
  assert.equal(text(m), 'm0');
  assert.equal(m.getJMSRedelivered(), true);
});

test('acknowledge - NO_ACKNOWLEDGE removes a message at delivery (SES-2)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession(false, Session.NO_ACKNOWLEDGE);
  const queue = await fill(session, 'q', 1);
  await session.createConsumer(queue).receiveNoWait();
  const stats = t.engine.destinationStatistics(queue);
  assert.equal(stats.messagesPending + stats.messagesCurrent, 0);
  await session.recover();
  assert.equal(await session.createConsumer(queue).receiveNoWait(), null);
});

test('acknowledge - listeners of one session run one at a time, in order (SES-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession();
  const queue = await fill(session, 'q', 5);
  const order: string[] = [];
  let running = 0;
  let overlap = false;
  const done = new Promise<void>((resolve) => {
    session.createConsumer(queue).setMessageListener(async (message) => {
      running++;
      if (running > 1) overlap = true;
      await new Promise((r) => setImmediate(r));
      order.push(text(message)!);
      running--;
      if (order.length === 5) resolve();
    });
  });
  await done;
  assert.equal(overlap, false);
  assert.deepEqual(order, ['m0', 'm1', 'm2', 'm3', 'm4']);
});

test('acknowledge - MessagesMaximum bounds what is in flight to a listener (SES-6)', async (context) => {
  const cleanup = teardown(context);
  for (const messagesMaximum of [1, 3]) {
    const t = testEngine({ messagesMaximum });
    cleanup(() => t.close());
    const session = t.connect().createSession();
    const queue = await fill(session, 'q', 10);
    let release!: () => void;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    // Registered after the engine's, so it runs first: closing waits for the blocked listener.
    cleanup(() => release());
    session.createConsumer(queue).setMessageListener(() => blocked);
    await settle();
    assert.equal(
      t.engine.destinationStatistics(queue).pendingMessagesByCause.unacknowledged,
      messagesMaximum,
    );
    release();
    await t.close();
  }
});
