/**
 * The store contract: what every MessageStore promises the engine, run against each store (memory,
 * file, PostgreSQL) by its own test file. A store under test is given by a factory whose `open`
 * opens the same durable state each time (the memory store hands back the same instance), so a
 * test can write, drop the store as a crash would, and read again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BytesMessage,
  ConnectionFactory,
  JmsEngine,
  type Message,
  type MessageStore,
  Session,
  type StoreOperation,
  TextMessage,
} from '../../src/index.js';
import { keepsForwardedIds } from '../../src/jms/store-port.js';
import type { CommitStats } from '../../src/store/commit-stats.js';
import { FakeClock } from './fake-clock.js';

/** One store's durable state, for one test. */
export interface StoreUnderTest {
  /** Opens the store on this test's state (again after `drop`, as after a restart). */
  open(): Promise<MessageStore>;
  /** Lets go of a store as a crash would leave it: nothing more is written. */
  drop(store: MessageStore): Promise<void>;
  /** Removes the test's state. */
  dispose(): Promise<void>;
}

export interface StoreContractOptions {
  /** Test names start with it: `postgres store`, `file store`, ... */
  name: string;
  /** A fresh state for one test; `skip` when the store cannot run here (no database). */
  create(): Promise<StoreUnderTest>;
  skip?: string | false;
  /** Whether the store reads messages back (PER-4 paging). */
  pages: boolean;
}

/** A text message's body, or null for no message. */
export function text(message: Message | null): string | null {
  return message === null ? null : (message as TextMessage).getText();
}

/**
 * A message and its references on `backlogs` (queue://a alone by default), as the engine commits a
 * persistent send. `body`: the text of a TextMessage (the id by default), or the message itself.
 */
export function addOps(
  id: string,
  seq: number,
  backlogs = ['queue://a'],
  body: string | Message = id,
): StoreOperation[] {
  const message = typeof body === 'string' ? new TextMessage(body) : body;
  message.setJMSMessageID(id);
  return [
    { op: 'addMessage', id, seq, message },
    ...backlogs.map((backlog): StoreOperation => ({
      op: 'addRef',
      backlog,
      id,
      seq,
      deliveryCount: 0,
      notBefore: 0,
    })),
  ];
}

/**
 * What a store recovers, its references read out while it is still open (they are read lazily).
 * A reference whose body the store left unread comes with its message read whole, once the
 * shell it came with is checked: headers and properties, an empty body, and the unread size
 * that of the whole body. `unreadBodies` counts them.
 */
export async function recoverAll(store: MessageStore) {
  const recovered = await store.recover();
  let unreadBodies = 0;
  const refs = [...recovered.refs].map((ref) => {
    if (ref.unreadBodyBytes === undefined) return ref;
    unreadBodies++;
    const { unreadBodyBytes, ...rest } = ref;
    const whole = store.readMessage?.(ref.id);
    assert.ok(whole, `a message whose body was left unread reads back whole: ${ref.id}`);
    assert.equal(ref.message.getBodySize(), 0, `the shell of ${ref.id} has an empty body`);
    assert.equal(unreadBodyBytes, whole.getBodySize(), `the unread body size of ${ref.id}`);
    assert.equal(ref.message.getSize() + unreadBodyBytes, whole.getSize());
    return { ...rest, message: whole };
  });
  return { ...recovered, refs, unreadBodies };
}

/** Registers the contract's tests for one store. */
export function storeContract(options: StoreContractOptions): void {
  const { name } = options;
  const testOptions = { skip: options.skip ?? false };

  async function withStore(fn: (state: StoreUnderTest) => Promise<void>): Promise<void> {
    const state = await options.create();
    try {
      await fn(state);
    } finally {
      await state.dispose();
    }
  }

  async function engineOn(store: MessageStore, extra: { pagingThresholdBytes?: number } = {}) {
    const engine = await JmsEngine.open({ store, clock: new FakeClock(), ...extra });
    const factory = new ConnectionFactory(engine);
    return {
      engine,
      connect(clientId?: string) {
        const connection = factory.createConnection();
        if (clientId) connection.setClientID(clientId);
        connection.start();
        return connection;
      },
    };
  }

  test(
    `${name} - a resolved persistent send survives a crash; acknowledged messages do not come back (PER-1)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        const first = await engineOn(store);
        const session = first.connect().createSession();
        const queue = session.createQueue('orders');
        const producer = session.createProducer(queue);
        for (let i = 0; i < 5; i++) {
          const message = new TextMessage(`m${i}`);
          message.setLongProperty('n', BigInt(i) << 40n);
          await producer.send(message);
        }
        const consumer = session.createConsumer(queue);
        assert.equal(text(await consumer.receiveNoWait()), 'm0');
        assert.equal(text(await consumer.receiveNoWait()), 'm1');
        await state.drop(store);

        const again = await state.open();
        const second = await engineOn(again);
        const rest: (string | null)[] = [];
        const receiver = second.connect().createSession().createConsumer(queue);
        for (let m = await receiver.receiveNoWait(); m !== null; m = await receiver.receiveNoWait()) {
          rest.push(text(m));
          if (rest.length === 1) assert.equal(m.getLongProperty('n'), 2n << 40n);
        }
        assert.deepEqual(rest, ['m2', 'm3', 'm4']);
        await second.engine.close();
        const third = await state.open();
        assert.equal((await recoverAll(third)).refs.length, 0, 'what was acknowledged does not come back');
        await state.drop(third);
      }),
  );

  test(
    `${name} - uncommitted transactional sends are discarded, committed ones kept (PER-3)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        const first = await engineOn(store);
        const connection = first.connect();
        const plain = connection.createSession();
        const queue = plain.createQueue('work');
        await plain.createProducer(queue).send(new TextMessage('committed before'));
        const transacted = connection.createSession(true, Session.SESSION_TRANSACTED);
        const producer = transacted.createProducer(queue);
        await producer.send(new TextMessage('t1'));
        await producer.send(new TextMessage('t2'));
        await transacted.commit();
        await producer.send(new TextMessage('never committed'));
        await state.drop(store);

        const again = await state.open();
        const second = await engineOn(again);
        const consumer = second.connect().createSession().createConsumer(queue);
        const got: (string | null)[] = [];
        for (let m = await consumer.receiveNoWait(); m !== null; m = await consumer.receiveNoWait())
          got.push(text(m));
        assert.deepEqual(got, ['committed before', 't1', 't2']);
        await second.engine.close();
      }),
  );

  test(
    `${name} - durable subscriptions and destinations made at run time survive a restart (PER-2)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        const first = await engineOn(store);
        const connection = first.connect('client-a');
        const session = connection.createSession();
        const topic = session.createTopic('news');
        const subscriber = session.createDurableSubscriber(topic, 'sub-1');
        await subscriber.close();
        await session.createProducer(topic).send(new TextMessage('while away'));
        await state.drop(store);

        const again = await state.open();
        const recovered = await recoverAll(again);
        assert.ok(recovered.destinations.some((d) => d.kind === 'topic' && d.name === 'news'));
        assert.ok(recovered.subscriptions.some((s) => s.name === 'sub-1' && s.clientId === 'client-a'));
        await state.drop(again);
        const reopened = await state.open();
        const second = await engineOn(reopened);
        const back = second.connect('client-a').createSession();
        const durable = back.createDurableSubscriber(back.createTopic('news'), 'sub-1');
        assert.equal(text(await durable.receiveNoWait()), 'while away');
        await second.engine.close();
      }),
  );

  test(
    `${name} - recovery returns destinations, subscriptions, refs in seq order with their messages, and maxSeq (PER-1, PER-2)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        await store.recover();
        await store.commit([
          { op: 'putDestination', destination: { kind: 'queue', name: 'a', options: { maxMessages: 3 } } },
          {
            op: 'putSubscription',
            subscription: {
              key: 'sub://c/s',
              topic: 't',
              clientId: 'c',
              name: 's',
              selector: "x = 'y'",
              noLocal: true,
              shared: false,
            },
          },
        ]);
        await store.commit([
          ...addOps('ID:2', 2, ['queue://a', 'sub://c/s']),
          ...addOps('ID:1', 1, ['queue://a']),
        ]);
        const bytes = new BytesMessage();
        bytes.writeBytes(Buffer.from([0, 1, 2, 255]));
        bytes.setJMSMessageID('ID:3');
        await store.commit([
          {
            op: 'addMessage',
            id: 'ID:3',
            seq: 7,
            message: bytes,
            sender: { redeliveryLimit: 4, clientId: 'c' },
          },
          { op: 'addRef', backlog: 'queue://a', id: 'ID:3', seq: 7, deliveryCount: 2, notBefore: 12345 },
        ]);
        await state.drop(store);

        const again = await state.open();
        const recovered = await recoverAll(again);
        assert.deepEqual(recovered.destinations, [{ kind: 'queue', name: 'a', options: { maxMessages: 3 } }]);
        assert.deepEqual(recovered.subscriptions, [
          {
            key: 'sub://c/s',
            topic: 't',
            clientId: 'c',
            name: 's',
            selector: "x = 'y'",
            noLocal: true,
            shared: false,
          },
        ]);
        assert.equal(recovered.maxSeq, 7);
        assert.deepEqual(
          recovered.refs.map((r) => [r.seq, r.id, r.backlog].join(' ')).sort(),
          ['1 ID:1 queue://a', '2 ID:2 queue://a', '2 ID:2 sub://c/s', '7 ID:3 queue://a'].sort(),
        );
        assert.deepEqual(
          recovered.refs.map((r) => r.seq),
          [...recovered.refs.map((r) => r.seq)].sort((a, b) => a - b),
        );
        const third = recovered.refs.find((r) => r.id === 'ID:3')!;
        assert.equal(third.deliveryCount, 2);
        assert.equal(third.notBefore, 12345);
        assert.deepEqual(third.sender, { redeliveryLimit: 4, clientId: 'c' });
        const body = third.message as BytesMessage;
        body.reset();
        assert.deepEqual([...body.readBytes()], [0, 1, 2, 255]);
        assert.equal(text(recovered.refs.find((r) => r.id === 'ID:1')!.message), 'ID:1');
        await state.drop(again);
      }),
  );

  test(
    `${name} - delivery counts and redelivery delays are kept; a message goes with its last reference (PER-1)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        await store.recover();
        await store.commit(addOps('ID:1', 1, ['queue://a', 'queue://b']));
        await store.commit([
          { op: 'updateRef', backlog: 'queue://a', id: 'ID:1', deliveryCount: 3, notBefore: 999 },
        ]);
        await store.commit([{ op: 'removeRef', backlog: 'queue://b', id: 'ID:1' }]);
        await state.drop(store);
        const again = await state.open();
        const recovered = await recoverAll(again);
        assert.deepEqual(
          recovered.refs.map((r) => [r.backlog, r.deliveryCount, r.notBefore]),
          [['queue://a', 3, 999]],
        );
        await again.commit([{ op: 'removeRef', backlog: 'queue://a', id: 'ID:1' }]);
        if (options.pages)
          assert.equal(again.readMessage!('ID:1'), undefined, 'the message went with its last reference');
        await state.drop(again);
        const third = await state.open();
        assert.equal((await recoverAll(third)).refs.length, 0);
        await state.drop(third);
      }),
  );

  test(`${name} - deleting a destination or a subscription drops its messages (PER-2)`, testOptions, () =>
    withStore(async (state) => {
      const store = await state.open();
      await store.recover();
      await store.commit([
        { op: 'putDestination', destination: { kind: 'queue', name: 'gone', options: {} } },
        {
          op: 'putSubscription',
          subscription: {
            key: 'sub://c/s',
            topic: 't',
            clientId: 'c',
            name: 's',
            selector: null,
            noLocal: false,
            shared: false,
          },
        },
        ...addOps('ID:1', 1, ['queue://gone', 'sub://c/s']),
        ...addOps('ID:2', 2, ['queue://gone', 'queue://kept']),
      ]);
      // Dropped and made again in one commit: what comes after the drop stays.
      await store.commit([
        { op: 'removeDestination', kind: 'queue', name: 'gone' },
        { op: 'removeSubscription', key: 'sub://c/s' },
        { op: 'putDestination', destination: { kind: 'queue', name: 'gone', options: { again: true } } },
        ...addOps('ID:3', 3, ['queue://gone']),
      ]);
      await state.drop(store);
      const again = await state.open();
      const recovered = await recoverAll(again);
      assert.deepEqual(recovered.subscriptions, []);
      assert.deepEqual(recovered.destinations, [{ kind: 'queue', name: 'gone', options: { again: true } }]);
      assert.deepEqual(
        recovered.refs.map((r) => `${r.backlog} ${r.id}`),
        ['queue://kept ID:2', 'queue://gone ID:3'],
      );
      if (options.pages) assert.equal(again.readMessage!('ID:1'), undefined);
      await state.drop(again);
    }),
  );

  test(
    `${name} - many commits at once all resolve once stored, in one or more groups, none lost (group commit)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        await store.recover();
        const commits: Promise<void>[] = [];
        for (let i = 1; i <= 200; i++) commits.push(store.commit(addOps(`ID:${i}`, i, ['queue://many'])));
        // Acknowledged in the same burst: some of the removals share a group with their sends.
        for (let i = 1; i <= 200; i += 2)
          commits.push(store.commit([{ op: 'removeRef', backlog: 'queue://many', id: `ID:${i}` }]));
        await Promise.all(commits);
        const stats = (store as { stats?: CommitStats }).stats;
        if (stats)
          assert.ok(
            stats.transactions < stats.commits,
            `transactions ${stats.transactions} of ${stats.commits} commits`,
          );
        await state.drop(store);
        const again = await state.open();
        const recovered = await recoverAll(again);
        assert.deepEqual(
          recovered.refs.map((r) => r.id),
          Array.from({ length: 100 }, (_, i) => `ID:${2 * i + 2}`),
        );
        await state.drop(again);
      }),
  );

  test(
    `${name} - past the paging threshold bodies are read back, intact and in order, also after a restart (PER-4)`,
    { skip: !options.pages || testOptions.skip },
    () =>
      withStore(async (state) => {
        const body = (i: number) => `${String(i).padStart(4, '0')}:${'x'.repeat(1000)}`;
        const store = await state.open();
        const first = await engineOn(store, { pagingThresholdBytes: 20_000 });
        const connection = first.connect();
        const session = connection.createSession();
        const producer = session.createProducer(session.createQueue('paged'));
        for (let i = 0; i < 100; i++) await producer.send(new TextMessage(body(i)));
        assert.ok(first.engine.messagesPagedOut >= 60, `paged ${first.engine.messagesPagedOut} of 100`);
        const consumer = session.createConsumer(session.createQueue('paged'));
        for (let i = 0; i < 50; i++) assert.equal(text(await consumer.receiveNoWait()), body(i));
        await first.engine.close();

        const again = await state.open();
        const second = await engineOn(again, { pagingThresholdBytes: 20_000 });
        assert.ok(second.engine.messagesPagedOut >= 20, 'recovery pages out as it goes');
        const rest = second.connect().createSession().createConsumer(session.createQueue('paged'));
        for (let i = 50; i < 100; i++) assert.equal(text(await rest.receiveNoWait()), body(i));
        assert.equal(await rest.receiveNoWait(), null);
        await second.engine.close();
      }),
  );

  test(
    `${name} - a duplicate window is recorded with its commit, trimmed, and survives reopening (BRG-2)`,
    testOptions,
    () =>
      withStore(async (state) => {
        const store = await state.open();
        if (!keepsForwardedIds(store)) {
          await assert.rejects(
            store.commit([{ op: 'recordForwarded', window: 'w', ids: [{ id: 'ID:x', seq: 1, at: 1 }] }]),
            /keeps no duplicate windows/,
          );
          await state.drop(store);
          return;
        }
        await store.recover();
        await store.commit([
          ...addOps('ID:1', 1, ['queue://in']),
          { op: 'recordForwarded', window: 'bridge-a', ids: [{ id: 'ID:src-1', seq: 1, at: 100 }] },
        ]);
        await store.recordForwardedIds('bridge-a', [
          { id: 'ID:src-2', seq: 2, at: 200 },
          { id: 'ID:src-3', seq: 3, at: 300 },
        ]);
        await store.recordForwardedIds('bridge-a', [{ id: 'ID:src-1', seq: 4, at: 400 }], 2);
        await store.recordForwardedIds('bridge-b', [{ id: 'ID:other', seq: 1, at: 1 }]);
        assert.deepEqual(store.readForwardedIds('bridge-a'), [
          { id: 'ID:src-3', seq: 3, at: 300 },
          { id: 'ID:src-1', seq: 4, at: 400 },
        ]);
        await state.drop(store);
        const again = await state.open();
        assert.ok(keepsForwardedIds(again));
        assert.deepEqual(
          again.readForwardedIds('bridge-a').map((e) => e.id),
          ['ID:src-3', 'ID:src-1'],
        );
        assert.deepEqual(
          again.readForwardedIds('bridge-b').map((e) => e.id),
          ['ID:other'],
        );
        assert.deepEqual(again.readForwardedIds('none'), []);
        await state.drop(again);
      }),
  );

  test(`${name} - commit after close rejects with a clear error`, testOptions, () =>
    withStore(async (state) => {
      const store = await state.open();
      await store.recover();
      await store.close();
      if (store.constructor.name === 'MemoryStore') return; // keeps working: nothing to release
      await assert.rejects(store.commit(addOps('ID:1', 1, ['queue://a'])), /closed/);
    }),
  );
}
