import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DeliveryMode,
  InvalidClientIDError,
  InvalidDestinationError,
  type Message,
  Requestor,
  Session,
  TextMessage,
} from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('connection - created stopped: nothing is delivered until start, and stop pauses delivery (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect({ start: false });
  const session = connection.createSession();
  const queue = session.createQueue('q');
  await session.createProducer(queue).send(new TextMessage('a'));
  const consumer = session.createConsumer(queue);
  assert.equal(await consumer.receiveNoWait(), null);
  connection.start();
  assert.equal(text(await consumer.receiveNoWait()), 'a');
  await connection.stop();
  await session.createProducer(queue).send(new TextMessage('b'));
  assert.equal(await consumer.receiveNoWait(), null, 'sends are allowed while stopped, delivery is not');
  connection.start();
  assert.equal(text(await consumer.receiveNoWait()), 'b');
});

test('connection - closing makes a pending receive return null and closing twice is a no-op (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const consumer = connection.createSession().createConsumer(connection.createSession().createQueue('q'));
  const pending = consumer.receive();
  await connection.close();
  assert.equal(await pending, null);
  await connection.close();
  assert.throws(() => connection.createSession(), /connection is closed/);
});

test('connection - closing rolls back open transactions and returns CLIENT-mode messages unacknowledged (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const setup = t.connect().createSession();
  const queue = setup.createQueue('q');
  const producer = setup.createProducer(queue);
  await producer.send(new TextMessage('one'));
  await producer.send(new TextMessage('two'));
  const connection = t.connect();
  const client = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  await client.createConsumer(queue, 'JMSMessageID IS NOT NULL').receiveNoWait();
  const tx = connection.createSession(true);
  await tx.createProducer(queue).send(new TextMessage('never'));
  await connection.close();
  const after = t.connect().createSession().createConsumer(queue);
  const first = await after.receiveNoWait();
  assert.deepEqual([text(first), first?.getJMSRedelivered()], ['one', true]);
  assert.equal(text(await after.receiveNoWait()), 'two');
  assert.equal(await after.receiveNoWait(), null);
});

for (const transacted of [false, true]) {
  test(`connection - closing a ${transacted ? 'transacted' : 'CLIENT'} session puts its messages back uncounted, not into its own pending receive (SES-1, SES-4)`, async (context) => {
    const cleanup = teardown(context);
    const t = testEngine();
    cleanup(() => t.close());
    const setup = t.connect().createSession();
    const queue = setup.createQueue('q');
    await setup.createProducer(queue).send(new TextMessage('one'));
    const session = t.connect().createSession(transacted, Session.CLIENT_ACKNOWLEDGE);
    const consumer = session.createConsumer(queue);
    assert.equal(text(await consumer.receive()), 'one');
    const pending = consumer.receive();
    await session.close();
    assert.equal(await pending, null, 'a closed session hands out nothing');
    const stats = t.engine.destinationStatistics(queue);
    assert.deepEqual([stats.messagesCurrent, stats.messagesPending], [1, 0]);
    const again = (await t.connect().createSession().createConsumer(queue).receiveNoWait())!;
    assert.deepEqual([text(again), again.deliveryCount], ['one', 2]);
  });
}

test('connection - client id: set once, before use, unique across connections (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const a = t.connect({ start: false });
  a.setClientID('app');
  assert.throws(() => a.setClientID('again'), /only be set once/);
  const b = t.connect({ start: false });
  assert.throws(() => b.setClientID('app'), InvalidClientIDError);
  b.createSession();
  assert.throws(() => b.setClientID('late'), /before the connection is used/);
  await a.close();
  const c = t.connect({ start: false });
  c.setClientID('app');
});

test('connection - an unknown acknowledge mode is refused with the valid ones named', (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  assert.throws(() => t.connect().createSession(false, 9 as never), /acknowledge mode 9 is not valid/);
});

test('connection - a temporary queue is consumed only by its own connection and deleted with it (DST-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const owner = t.connect();
  const stranger = t.connect();
  const session = owner.createSession();
  const temporary = session.createTemporaryQueue();
  assert.throws(() => stranger.createSession().createConsumer(temporary), /belongs to another connection/);
  const message = new TextMessage('x');
  await stranger.createSession().createProducer(temporary).send(message);
  assert.equal(
    message.getJMSDeliveryMode(),
    DeliveryMode.NON_PERSISTENT,
    'persistent sends to a temporary destination become non-persistent',
  );
  assert.equal(text(await session.createConsumer(temporary).receiveNoWait()), 'x');
  await owner.close();
  assert.throws(() => stranger.createSession().createProducer(temporary), InvalidDestinationError);
});

test('connection - a temporary destination cannot be deleted while consumed, and refuses durable subscriptions (DST-5)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect({ clientId: 'c' });
  const session = connection.createSession();
  const queue = session.createTemporaryQueue();
  const consumer = session.createConsumer(queue);
  assert.throws(() => queue.delete(), /still has consumers/);
  await consumer.close();
  queue.delete();
  assert.throws(() => session.createConsumer(queue), InvalidDestinationError);
  assert.throws(
    () => session.createDurableSubscriber(session.createTemporaryTopic(), 'd'),
    /temporary topic/,
  );
});

test('connection - a requestor gets the reply matched by correlation id, or null after its timeout (SES-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const serverSession = t.connect().createSession();
  const service = serverSession.createQueue('service');
  const replier = serverSession.createProducer();
  serverSession.createConsumer(service).setMessageListener(async (request) => {
    if (text(request) === 'ignore me') return;
    const reply = new TextMessage(`re: ${text(request)}`);
    reply.setJMSCorrelationID(request.getJMSMessageID());
    await replier.send(request.getJMSReplyTo()!, reply);
  });
  const requestor = new Requestor(t.connect().createSession(), service, 5000);
  cleanup(() => requestor.close());
  const [a, b] = await Promise.all([
    requestor.request(new TextMessage('a')),
    requestor.request(new TextMessage('b')),
  ]);
  assert.deepEqual([text(a), text(b)], ['re: a', 're: b']);
  const unanswered = requestor.request(new TextMessage('ignore me'), 2000);
  await settle();
  await t.clock.advance(2000);
  assert.equal(await unanswered, null);
});

test('connection - deleting a destination closes its consumers and fails new ones (DST-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const connection = t.connect();
  const errors: Error[] = [];
  connection.setExceptionListener((e) => errors.push(e));
  const session = connection.createSession();
  const queue = session.createQueue('doomed');
  const waiting = session.createConsumer(queue).receive();
  session.createConsumer(queue).setMessageListener(() => {});
  await t.engine.deleteDestination(queue);
  assert.equal(await waiting, null);
  assert.match(errors[0]?.message ?? '', /destination 'queue:\/\/doomed' was deleted/);
  assert.throws(() => session.createConsumer(queue), InvalidDestinationError);
});
