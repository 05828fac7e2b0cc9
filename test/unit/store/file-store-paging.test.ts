import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ConnectionFactory,
  JmsEngine,
  type Message,
  type MessageStore,
  StoreError,
  TextMessage,
} from '../../../src/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';
import { teardown } from '../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('file store - past the paging threshold bodies are read back from disk, intact and in order, also after a restart (PER-4)', async (t) => {
  const cleanup = teardown(t);
  const dir = await mkdtemp(join(tmpdir(), 'file-store-paging-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const body = (i: number) => `${String(i).padStart(4, '0')}:${'x'.repeat(1000)}`;
  const engine = await JmsEngine.open({
    store: await FileStore.open({ path: dir }),
    pagingThresholdBytes: 20_000,
  });
  cleanup(() => engine.close());
  const connection = new ConnectionFactory(engine).createConnection();
  cleanup(() => connection.close());
  const session = connection.createSession();
  const producer = session.createProducer(session.createQueue('paged'));
  for (let i = 0; i < 200; i++) await producer.send(new TextMessage(body(i)));
  assert.ok(engine.messagesPagedOut >= 150, `paged ${engine.messagesPagedOut} of 200`);
  connection.start();
  const consumer = session.createConsumer(session.createQueue('paged'));
  for (let i = 0; i < 100; i++) assert.equal(text(await consumer.receiveNoWait()), body(i));
  await connection.close();
  await engine.close();

  const reopened = await JmsEngine.open({
    store: await FileStore.open({ path: dir }),
    pagingThresholdBytes: 20_000,
  });
  cleanup(() => reopened.close());
  assert.ok(reopened.messagesPagedOut >= 50, 'recovery pages out as it goes');
  const again = new ConnectionFactory(reopened).createConnection();
  cleanup(() => again.close());
  again.start();
  const rest = again.createSession().createConsumer(again.createSession().createQueue('paged'));
  for (let i = 100; i < 200; i++) assert.equal(text(await rest.receiveNoWait()), body(i));
  assert.equal(await rest.receiveNoWait(), null);
  await again.close();
  await reopened.close();
});

test('file store - delivery counts and redelivery delays still to run survive a restart (PER-1, PER-2)', async (t) => {
  const cleanup = teardown(t);
  const dir = await mkdtemp(join(tmpdir(), 'file-store-counts-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now, setTimer: () => undefined, clearTimer: () => {} };
  const engine = await JmsEngine.open({ store: await FileStore.open({ path: dir }), clock });
  cleanup(() => engine.close());
  await engine.createQueue('delayed', { redeliveryDelayOverride: 60_000 });
  const connection = new ConnectionFactory(engine).createConnection();
  connection.start();
  const tx = connection.createSession(true);
  const producer = tx.createProducer(tx.createQueue('crashed'));
  await producer.send(new TextMessage('in flight at the crash'));
  await tx.createProducer(tx.createQueue('delayed')).send(new TextMessage('rolled back'));
  await tx.commit();
  assert.equal(
    text(await tx.createConsumer(tx.createQueue('crashed')).receiveNoWait()),
    'in flight at the crash',
  );
  const delayedConsumer = tx.createConsumer(tx.createQueue('delayed'));
  await delayedConsumer.receiveNoWait();
  await tx.rollback();
  // The connection is never closed, so nothing is put back: the store holds what a crash leaves.
  await engine.close();
  now += 1_000;
  const reopened = await JmsEngine.open({ store: await FileStore.open({ path: dir }), clock });
  cleanup(() => reopened.close());
  const after = new ConnectionFactory(reopened).createConnection();
  cleanup(() => after.close());
  after.start();
  const session = after.createSession();
  const back = (await session.createConsumer(session.createQueue('crashed')).receiveNoWait())!;
  assert.equal(back.getJMSRedelivered(), true);
  assert.equal(back.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(
    reopened.destinationStatistics('queue://delayed').pendingMessagesByCause.redeliveryDelay,
    1,
    'still waiting out its delay',
  );
  await after.close();
  await reopened.close();
});

test("file store - a paged-out body the store cannot read is reported to the listener's connection and tried again, not lost (PER-4)", async (t) => {
  const cleanup = teardown(t);
  const dir = await mkdtemp(join(tmpdir(), 'file-store-paging-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const fileStore = await FileStore.open({ path: dir });
  cleanup(() => fileStore.close());
  let readsFail = true;
  const store: MessageStore = {
    recover: () => fileStore.recover(),
    commit: (operations) => fileStore.commit(operations),
    close: () => fileStore.close(),
    readMessage: (id) => {
      if (readsFail) throw new StoreError('open', fileStore.file, `reading '${id}' failed: I/O error`);
      return fileStore.readMessage(id);
    },
  };
  const clock = new FakeClock();
  const engine = await JmsEngine.open({ store, clock, pagingThresholdBytes: 0 });
  cleanup(() => engine.close());
  const connection = new ConnectionFactory(engine).createConnection();
  cleanup(() => connection.close());
  const reported: Error[] = [];
  connection.setExceptionListener((error) => reported.push(error));
  const session = connection.createSession();
  await session.createProducer(session.createQueue('paged')).send(new TextMessage('order 1'));
  assert.equal(engine.messagesPagedOut, 1);
  const received: string[] = [];
  session.createConsumer(session.createQueue('paged')).setMessageListener((message) => {
    received.push(text(message)!);
  });
  connection.start();
  await settle();
  assert.equal(received.length, 0);
  assert.match(reported[0]?.message ?? '', /reading '.+' failed: I\/O error/);
  assert.equal(
    engine.destinationStatistics('queue://paged').messagesPending,
    1,
    'kept, waiting to be tried again',
  );
  assert.equal(reported.length, 1, 'not tried again at once');

  readsFail = false;
  await clock.advance(1000);
  await settle();
  assert.deepEqual(received, ['order 1']);

  // A synchronous receive fails with the store's error, and the message stays for the next one.
  await session.createProducer(session.createQueue('receive')).send(new TextMessage('order 2'));
  const consumer = connection.createSession().createConsumer(session.createQueue('receive'));
  readsFail = true;
  await assert.rejects(consumer.receiveNoWait(), /I\/O error/);
  readsFail = false;
  assert.equal(await consumer.receiveNoWait(), null, 'waiting out the retry delay');
  await clock.advance(1000);
  assert.equal(text(await consumer.receiveNoWait()), 'order 2');
  await connection.close();
  await engine.close();
});
