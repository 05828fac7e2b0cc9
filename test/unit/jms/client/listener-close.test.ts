/**
 * Closing while an asynchronous listener is in progress (SES-1): close waits for it, its message
 * goes to no other consumer meanwhile, and a close made from inside the listener neither waits
 * for itself nor lets go of the listener's message before it returns.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type Connection,
  IllegalStateError,
  type Message,
  type MessageConsumer,
  Session,
  TextMessage,
} from '../../../../src/index.js';
import { testEngine, type TestEngine } from '../../../helpers/engine.js';
import { settle } from '../../../helpers/fake-clock.js';
import { withTimeout } from '../../../helpers/timeout.js';
import { teardown } from '../../../helpers/teardown.js';

/** A promise the test settles itself. */
function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Tracks whether a promise has settled, without awaiting it. */
function track(promise: Promise<unknown>): { settled: boolean } {
  const state = { settled: false };
  void promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  return state;
}

const text = (message: Message | null) => (message as TextMessage | null)?.getText() ?? null;

interface Rig {
  t: TestEngine;
  connection: Connection;
  session: Session;
  consumer: MessageConsumer;
  /** A consumer on another connection, which must not see the listener's message while it runs. */
  other: MessageConsumer;
  queueName: string;
}

/** One message on a queue, a listener consumer (not yet listening) and a second, synchronous consumer. */
async function rig(mode: 'auto' | 'client' | 'transacted'): Promise<Rig> {
  const t = testEngine();
  const queueName = 'orders';
  const producerSession = t.connect().createSession();
  const queue = producerSession.createQueue(queueName);
  await producerSession.createProducer(queue).send(new TextMessage('m0'));
  const connection = t.connect({ start: false });
  const session =
    mode === 'transacted'
      ? connection.createSession(true)
      : connection.createSession(
          false,
          mode === 'client' ? Session.CLIENT_ACKNOWLEDGE : Session.AUTO_ACKNOWLEDGE,
        );
  const consumer = session.createConsumer(queue);
  const other = t.connect().createSession().createConsumer(queue);
  return { t, connection, session, consumer, other, queueName };
}

type CloseKind = 'consumer' | 'session' | 'connection';
const closeKinds: readonly CloseKind[] = ['consumer', 'session', 'connection'];

function closeOf(r: Rig, kind: CloseKind): () => Promise<void> {
  if (kind === 'consumer') return () => r.consumer.close();
  if (kind === 'session') return () => r.session.close();
  return () => r.connection.close();
}

for (const kind of closeKinds) {
  test(`listener close - ${kind}.close() waits for a listener awaiting a promise, and no other consumer gets its message meanwhile (SES-1)`, async (context) => {
    const cleanup = teardown(context);
    const r = await rig('auto');
    cleanup(() => r.t.close());
    const entered = deferred();
    const release = deferred();
    // Registered last, so it runs first: a close waiting for the listener would wait forever.
    cleanup(() => release.resolve());
    const events: string[] = [];
    r.consumer.setMessageListener(async (message) => {
      events.push(`listener got ${text(message)}`);
      entered.resolve();
      await release.promise;
      events.push('listener returned');
    });
    r.connection.start();
    await withTimeout(entered.promise, 2000, 'the listener to start');

    const closing = closeOf(r, kind)();
    const closed = track(closing);
    await settle();
    assert.equal(closed.settled, false, `${kind}.close() returned while the listener was running`);
    assert.equal(
      await r.other.receiveNoWait(),
      null,
      'another consumer got the message the listener was still processing',
    );

    release.resolve();
    await withTimeout(closing, 2000, `${kind}.close()`);
    events.push('close returned');
    assert.deepEqual(events, ['listener got m0', 'listener returned', 'close returned']);
    // The listener returned normally in AUTO mode: its message is acknowledged, not redelivered.
    assert.equal(await r.other.receiveNoWait(), null);
    assert.equal(r.t.engine.destinationStatistics(`queue://${r.queueName}`).messagesCurrent, 0);
  });
}

test('listener close - the listener keeps the full use of its session while connection.close() waits: a transaction it commits is committed (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('transacted');
  cleanup(() => r.t.close());
  const entered = deferred();
  const release = deferred();
  // Registered last, so it runs first: a close waiting for the listener would wait forever.
  cleanup(() => release.resolve());
  const committed = deferred<string>();
  r.consumer.setMessageListener(async () => {
    entered.resolve();
    await release.promise;
    try {
      await r.session.commit();
      committed.resolve('committed');
    } catch (error) {
      committed.resolve(`commit failed: ${(error as Error).message}`);
    }
  });
  r.connection.start();
  await withTimeout(entered.promise, 2000, 'the listener to start');
  const closing = r.connection.close();
  await settle();
  release.resolve();
  await withTimeout(closing, 2000, 'connection.close()');
  assert.equal(await committed.promise, 'committed');
  assert.equal(await r.other.receiveNoWait(), null, 'a committed message came back');
});

test('listener close - session.close() in CLIENT mode puts the listener message back only after the listener returned (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('client');
  cleanup(() => r.t.close());
  const entered = deferred();
  const release = deferred();
  // Registered last, so it runs first: a close waiting for the listener would wait forever.
  cleanup(() => release.resolve());
  r.consumer.setMessageListener(async () => {
    entered.resolve();
    await release.promise;
  });
  r.connection.start();
  await withTimeout(entered.promise, 2000, 'the listener to start');
  const closing = r.session.close();
  await settle();
  assert.equal(await r.other.receiveNoWait(), null, 'the message went back while its listener ran');
  release.resolve();
  await withTimeout(closing, 2000, 'session.close()');
  const back = await r.other.receiveNoWait();
  assert.equal(text(back), 'm0', 'an unacknowledged CLIENT-mode message goes back on close');
  assert.equal(back?.getJMSRedelivered(), true);
});

for (const kind of closeKinds) {
  test(`listener close - ${kind}.close() from inside its own listener, after an await, completes without deadlock and the AUTO message is acknowledged when the listener returns (SES-1)`, async (context) => {
    const cleanup = teardown(context);
    const r = await rig('auto');
    cleanup(() => r.t.close());
    const finished = deferred<string>();
    const close = closeOf(r, kind);
    r.consumer.setMessageListener(async () => {
      // After an await the listener runs in a later job, like any other caller: close must
      // still recognise it.
      await Promise.resolve();
      await close();
      const seenByOther = text(await r.other.receiveNoWait());
      finished.resolve(seenByOther === null ? 'completed' : `another consumer got ${seenByOther}`);
    });
    r.connection.start();
    assert.equal(
      await withTimeout(finished.promise, 2000, `the listener awaiting ${kind}.close()`),
      'completed',
    );
    await settle();
    assert.equal(await r.other.receiveNoWait(), null, 'the listener returned normally: acknowledged');
    assert.equal(r.t.engine.destinationStatistics(`queue://${r.queueName}`).messagesCurrent, 0);
    if (kind !== 'consumer') assert.throws(() => r.session.createProducer(null), IllegalStateError);
  });
}

test('listener close - a transacted session closed from its own listener rolls the message back once the listener returned, not before (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('transacted');
  cleanup(() => r.t.close());
  const finished = deferred<string | null>();
  r.consumer.setMessageListener(async () => {
    await r.session.close();
    finished.resolve(text(await r.other.receiveNoWait()));
  });
  r.connection.start();
  assert.equal(await withTimeout(finished.promise, 2000, 'the listener'), null);
  await settle();
  const back = await r.other.receiveNoWait();
  assert.equal(text(back), 'm0', 'the rolled-back message is available again');
});

test('listener close - a consumer closed from its own listener may still use its session, which stays open (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('client');
  cleanup(() => r.t.close());
  const finished = deferred<string>();
  r.consumer.setMessageListener(async (message) => {
    await r.consumer.close();
    await message.acknowledge();
    finished.resolve('acknowledged');
  });
  r.connection.start();
  assert.equal(await withTimeout(finished.promise, 2000, 'the listener'), 'acknowledged');
  await settle();
  assert.equal(await r.other.receiveNoWait(), null);
  assert.equal(r.session.closed, false);
  assert.throws(() => r.consumer.setMessageListener(null), /consumer is closed/);
});

test('listener close - a second close() waits as the first; from the listener it waits for, it returns at once (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('auto');
  cleanup(() => r.t.close());
  const entered = deferred();
  const release = deferred();
  // Registered last, so it runs first: a close waiting for the listener would wait forever.
  cleanup(() => release.resolve());
  const inner = deferred<string>();
  r.consumer.setMessageListener(async () => {
    entered.resolve();
    await release.promise;
    await r.connection.close();
    inner.resolve('returned');
  });
  r.connection.start();
  await withTimeout(entered.promise, 2000, 'the listener to start');
  const first = track(r.connection.close());
  const second = r.connection.close();
  const secondState = track(second);
  await settle();
  assert.equal(first.settled, false);
  assert.equal(secondState.settled, false, 'a second close returned before the listener');
  release.resolve();
  assert.equal(await withTimeout(inner.promise, 2000, 'close() from the listener'), 'returned');
  await withTimeout(second, 2000, 'the second close()');
});

test('listener close - connection.stop() from its own listener waits for the other listeners only, without deadlock (SES-1)', async (context) => {
  const cleanup = teardown(context);
  const r = await rig('auto');
  cleanup(() => r.t.close());
  const stopped = deferred<string>();
  r.consumer.setMessageListener(async () => {
    await Promise.resolve();
    await r.connection.stop();
    stopped.resolve('stopped');
  });
  r.connection.start();
  assert.equal(await withTimeout(stopped.promise, 2000, 'stop() from the listener'), 'stopped');
  assert.equal(r.connection.started, false);
});

test('listener close - messages prefetched for a consumer that is closing go back unseen, not to its listener (SES-1, SES-6)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ messagesMaximum: 10 });
  cleanup(() => t.close());
  const producerSession = t.connect().createSession();
  const queue = producerSession.createQueue('orders');
  const producer = producerSession.createProducer(queue);
  for (const text of ['m0', 'm1', 'm2']) await producer.send(new TextMessage(text));
  const connection = t.connect({ start: false });
  const consumer = connection.createSession().createConsumer(queue);
  const entered = deferred();
  const release = deferred();
  // Registered last, so it runs first: a close waiting for the listener would wait forever.
  cleanup(() => release.resolve());
  const seen: string[] = [];
  consumer.setMessageListener(async (message) => {
    seen.push(text(message)!);
    entered.resolve();
    await release.promise;
  });
  connection.start();
  await withTimeout(entered.promise, 2000, 'the listener to start');
  const closing = consumer.close();
  await settle();
  release.resolve();
  await withTimeout(closing, 2000, 'consumer.close()');
  await settle();
  assert.deepEqual(seen, ['m0'], 'the closing consumer got nothing after the message in progress');
  const other = t.connect().createSession().createConsumer(queue);
  const rest = [await other.receiveNoWait(), await other.receiveNoWait()];
  assert.deepEqual(rest.map(text), ['m1', 'm2']);
  assert.deepEqual(
    rest.map((message) => message?.getJMSRedelivered()),
    [false, false],
    'never handed to the application',
  );
});
