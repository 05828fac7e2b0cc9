import assert from 'node:assert/strict';
import { copyFile, open, stat, truncate, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import {
  ConnectionFactory,
  JmsEngine,
  Session,
  type StoreOperation,
  TextMessage,
  TransactionRolledBackError,
} from '../../../src/index.js';
import { type TempDirBody, withTempDir } from '../../helpers/temp-dir.js';
import { FileStore, type FileStoreOptions } from '../../../src/store/file-store.js';
import { StoreError } from '../../../src/store/store-error.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { addOps, recoverAll, text } from '../../helpers/store-contract.js';
import { assertRejectsAs } from '../../helpers/store-error.js';

function withDir(fn: TempDirBody): Promise<void> {
  return withTempDir('file-store-', fn);
}

/** An engine on a file store. `crash` drops the engine without closing connections, as kill -9 would, and releases the file. */
async function openEngine(dir: string, options: Partial<FileStoreOptions> = {}) {
  const store = await FileStore.open({ path: dir, ...options });
  const engine = await JmsEngine.open({ store, clock: new FakeClock() });
  const factory = new ConnectionFactory(engine);
  return {
    store,
    engine,
    connect(clientId?: string) {
      const connection = factory.createConnection();
      if (clientId) connection.setClientID(clientId);
      connection.start();
      return connection;
    },
    async crash() {
      await store.close();
    },
  };
}

async function reopenAndRecover(path: string) {
  const store = await FileStore.open({ path });
  try {
    return await recoverAll(store);
  } finally {
    await store.close();
  }
}

// --- through the engine (the store contract, test/helpers/store-contract.ts, has the rest) ---

test('file store - the producer redelivery limit and client id survive a restart (DLV-2, PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const first = await openEngine(dir);
    cleanup(() => first.crash());
    await first.engine.createQueue('dead');
    await first.engine.createQueue('orders', { errorDestination: 'queue://dead' });
    const session = first.connect('billing').createSession();
    const producer = session.createProducer(session.createQueue('orders'));
    producer.setRedeliveryLimit(1);
    await producer.send(new TextMessage('poison'));
    const unlimited = session.createProducer(session.createQueue('orders'));
    await unlimited.send(new TextMessage('fine'));
    const tx = first.connect().createSession(true);
    const consumer = tx.createConsumer(tx.createQueue('orders'));
    assert.equal(text(await consumer.receiveNoWait()), 'poison');
    await tx.rollback(); // delivery 1 of 2
    await first.engine.flush();
    await first.crash();

    const stored = await reopenAndRecover(dir);
    assert.deepEqual(
      stored.refs.map((ref) => [text(ref.message), ref.sender]),
      [
        ['poison', { redeliveryLimit: 1, clientId: 'billing' }],
        ['fine', { redeliveryLimit: -1, clientId: 'billing' }],
      ],
    );

    const second = await openEngine(dir);
    cleanup(() => second.crash());
    const tx2 = second.connect().createSession(true);
    const again = tx2.createConsumer(tx2.createQueue('orders'));
    const redelivered = await again.receiveNoWait();
    assert.equal(text(redelivered), 'poison');
    assert.equal(redelivered?.getIntProperty('JMSXDeliveryCount'), 2);
    await tx2.rollback(); // the limit, set before the restart, is reached: off to the error destination
    assert.equal(text(await again.receiveNoWait()), 'fine');
    await tx2.commit();
    assert.equal(await again.receiveNoWait(), null);
    const parked = await second
      .connect()
      .createSession()
      .createConsumer(tx2.createQueue('dead'))
      .receiveNoWait();
    assert.equal(text(parked), 'poison');
    assert.equal(parked?.getIntProperty('JMS_ErrorDeliveryCount'), 2);
    await second.crash();
  });
});

test('file store - with synchronous normal a resolved send survives a restart too (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const first = await openEngine(dir, { synchronous: 'normal' });
    cleanup(() => first.crash());
    const session = first.connect().createSession();
    await session.createProducer(session.createQueue('q')).send(new TextMessage('kept'));
    await first.crash();
    const second = await openEngine(dir, { synchronous: 'normal' });
    cleanup(() => second.crash());
    assert.equal(
      text(await second.connect().createSession().createConsumer(session.createQueue('q')).receiveNoWait()),
      'kept',
    );
    await second.crash();
  });
});

test('file store - uncommitted transactional sends are discarded and uncommitted receives come back (PER-3)', async () => {
  await withDir(async (dir, cleanup) => {
    const first = await openEngine(dir);
    cleanup(() => first.crash());
    const connection = first.connect();
    const plain = connection.createSession();
    const queue = plain.createQueue('work');
    await plain.createProducer(queue).send(new TextMessage('committed before'));
    const transacted = connection.createSession(true, Session.SESSION_TRANSACTED);
    await transacted.createProducer(queue).send(new TextMessage('never committed'));
    assert.equal(text(await transacted.createConsumer(queue).receiveNoWait()), 'committed before');
    await first.crash();

    const second = await openEngine(dir);
    cleanup(() => second.crash());
    const consumer = second.connect().createSession().createConsumer(queue);
    assert.equal(text(await consumer.receiveNoWait()), 'committed before');
    assert.equal(await consumer.receiveNoWait(), null);
    await second.crash();
  });
});

test('file store - a failed write makes the persistent send fail and the message is never delivered (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const first = await openEngine(dir, { maxBytes: 128 * 1024 });
    cleanup(() => first.crash());
    const session = first.connect().createSession();
    const queue = session.createQueue('full');
    const producer = session.createProducer(queue);
    const sent: string[] = [];
    let failure: unknown;
    for (let i = 0; i < 1000 && failure === undefined; i++) {
      try {
        await producer.send(new TextMessage(`${i}:${'x'.repeat(1024)}`));
        sent.push(String(i));
      } catch (error) {
        failure = error;
      }
    }
    assert.ok(
      failure instanceof StoreError,
      `the send should fail with a StoreError, got ${String(failure)}`,
    );
    assert.equal(failure.sqliteCode, 'SQLITE_FULL');
    assert.match(failure.message, /store '.*gateway\.db' is full .*nothing of this commit was stored/);
    assert.ok(sent.length > 10, `some sends should fit first (${sent.length})`);

    const transacted = first.connect().createSession(true, Session.SESSION_TRANSACTED);
    await transacted.createProducer(queue).send(new TextMessage(`tx:${'y'.repeat(4096)}`));
    await assert.rejects(transacted.commit(), TransactionRolledBackError);

    const received: string[] = [];
    const consumer = session.createConsumer(queue);
    for (let m = await consumer.receiveNoWait(); m !== null; m = await consumer.receiveNoWait())
      received.push(text(m)!.split(':')[0]!);
    assert.deepEqual(received, sent);
    await first.crash();

    // Nothing of the failed sends is on disk either: only what was acknowledged is gone.
    assert.equal((await reopenAndRecover(dir)).refs.length, 0);
  });
});

// --- the store port directly ---

test('file store - a message stays while any reference holds it and goes with the last one (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.recover();
    await store.commit(addOps('ID:1', 1, ['sub://a', 'sub://b']));
    await store.commit([{ op: 'removeRef', backlog: 'sub://a', id: 'ID:1' }]);
    // Removing what is not there changes nothing.
    await store.commit([{ op: 'removeRef', backlog: 'sub://a', id: 'ID:1' }]);
    await store.close();
    let recovered = await reopenAndRecover(dir);
    assert.deepEqual(
      recovered.refs.map((r) => r.backlog),
      ['sub://b'],
    );
    assert.equal(recovered.maxSeq, 1);

    const again = await FileStore.open({ path: dir });
    cleanup(() => again.close());
    await again.recover();
    await again.commit([{ op: 'removeRef', backlog: 'sub://b', id: 'ID:1' }]);
    // A message sent and acknowledged within one group never outlives it.
    await again.commit([
      ...addOps('ID:2', 2, ['queue://q']),
      { op: 'removeRef', backlog: 'queue://q', id: 'ID:2' },
    ]);
    await again.close();
    recovered = await reopenAndRecover(dir);
    assert.deepEqual(recovered.refs, []);
    assert.equal(recovered.maxSeq, 0, 'no message rows are left');
  });
});

test('file store - commits made in the same tick share one transaction (group commit)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.recover();
    const before = store.stats.transactions;
    await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.commit(addOps(`ID:${i + 1}`, i + 1, ['queue://q']))),
    );
    assert.equal(store.stats.transactions - before, 1);
    // Commits queued while the group is waiting to be written join it too.
    const a = store.commit(addOps('ID:100', 100, ['queue://q']));
    await Promise.resolve();
    const b = store.commit(addOps('ID:101', 101, ['queue://q']));
    await Promise.all([a, b]);
    assert.equal(store.stats.transactions - before, 2);
    await store.close();
    assert.equal((await reopenAndRecover(dir)).refs.length, 52);
  });
});

test('file store - a bad commit in a group is rejected alone; the others are stored (group commit)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.recover();
    const good = store.commit(addOps('ID:1', 1, ['queue://q']));
    const bad = store.commit([
      ...addOps('ID:2', 2, ['queue://q']),
      // JSON cannot hold a bigint: this fails half-way through the commit.
      { op: 'putDestination', destination: { kind: 'queue', name: 'x', options: { n: 1n } } },
    ]);
    const alsoGood = store.commit(addOps('ID:3', 3, ['queue://q']));
    await good;
    await assertRejectsAs(bad, 'write', /nothing of this commit was stored/);
    await alsoGood;
    await store.close();
    const recovered = await reopenAndRecover(dir);
    assert.deepEqual(
      recovered.refs.map((r) => r.id),
      ['ID:1', 'ID:3'],
    );
    assert.deepEqual(recovered.destinations, []);
  });
});

test('file store - a full store rejects the commit, keeps nothing of it, and takes commits again once there is room (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir, maxBytes: 64 * 1024 });
    cleanup(() => store.close());
    await store.recover();
    let seq = 0;
    const body = 'z'.repeat(2048);
    let failure: unknown;
    const stored: string[] = [];
    while (failure === undefined && seq < 1000) {
      const ids = [++seq, ++seq].map((n) => `ID:${n}`);
      try {
        await store.commit(ids.flatMap((id) => addOps(id, Number(id.slice(3)), ['queue://q'], body)));
        stored.push(...ids);
      } catch (error) {
        failure = error;
      }
    }
    assert.ok(failure instanceof StoreError);
    assert.equal(failure.kind, 'write');
    assert.equal(failure.sqliteCode, 'SQLITE_FULL');
    assert.match(failure.message, /is full .*free disk space or raise maxBytes/);
    await store.commit(
      stored.slice(0, 4).map((id): StoreOperation => ({ op: 'removeRef', backlog: 'queue://q', id })),
    );
    await store.commit(addOps('ID:after', ++seq, ['queue://q'], body));
    await store.close();
    assert.deepEqual(
      (await reopenAndRecover(dir)).refs.map((r) => r.id),
      [...stored.slice(4), 'ID:after'],
    );
  });
});

test('file store - commit and recover after close reject with a clear error', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.close();
    await store.close();
    await assertRejectsAs(store.commit([]), 'closed', /store '.*' is closed/);
    await assertRejectsAs(store.recover(), 'closed', /is closed/);
  });
});

// --- opening ---

test('file store - a directory holds gateway.db; any other path is the database file itself', async () => {
  await withDir(async (dir, cleanup) => {
    const inDir = await FileStore.open({ path: dir });
    cleanup(() => inDir.close());
    assert.equal(inDir.file, join(dir, 'gateway.db'));
    await inDir.close();
    const fresh = await FileStore.open({ path: join(dir, 'nested', 'new') + '/' });
    cleanup(() => fresh.close());
    assert.equal(fresh.file, join(dir, 'nested', 'new', 'gateway.db'));
    await fresh.close();
    const named = await FileStore.open({ path: join(dir, 'deep', 'my.store') });
    cleanup(() => named.close());
    assert.equal(named.file, join(dir, 'deep', 'my.store'));
    await named.close();
    assert.ok(existsSync(join(dir, 'deep', 'my.store')));
  });
});

test('file store - a second open of a store in use is refused (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await assertRejectsAs(
      FileStore.open({ path: dir, busyTimeoutMs: 50 }),
      'locked',
      /is in use by another process/,
    );
    await store.close();
    await (await FileStore.open({ path: dir })).close();
  });
});

/** A store file with some messages in it, closed. */
async function filledStore(dir: string): Promise<string> {
  const store = await FileStore.open({ path: dir });
  await store.recover();
  const operations: StoreOperation[] = [];
  for (let i = 1; i <= 500; i++) operations.push(...addOps(`ID:${i}`, i, ['queue://q'], 'b'.repeat(1000)));
  await store.commit(operations);
  await store.close();
  return store.file;
}

test('file store - a truncated store file is refused, naming the file and what to do (PER-1)', async () => {
  await withDir(async (dir) => {
    const file = await filledStore(dir);
    const size = (await stat(file)).size;
    const original = join(dir, 'original.db');
    await copyFile(file, original);
    for (const length of [Math.floor(size / 2), 4096, 100]) {
      await copyFile(original, file);
      await truncate(file, length);
      await assertRejectsAs(
        FileStore.open({ path: dir }),
        'corrupt',
        /^store '.*gateway\.db' is corrupt \(.+\): restore it from a backup or move it aside to start empty$/,
      );
    }
    await truncate(file, 0);
    await assertRejectsAs(FileStore.open({ path: dir }), 'corrupt', /is corrupt \(the file is empty\)/);
  });
});

test('file store - a store file overwritten with garbage is refused (PER-1)', async () => {
  await withDir(async (dir) => {
    const file = await filledStore(dir);
    await writeFile(file, Buffer.alloc(64 * 1024, 'garbage!'));
    await assertRejectsAs(FileStore.open({ path: dir }), 'corrupt', /is corrupt \(file is not a database\)/);

    // Damage inside, with a valid header: the check at open finds it.
    const inner = await filledStore(join(dir, 'b') + '/');
    const handle = await open(inner, 'r+');
    await handle.write(Buffer.alloc(3 * 4096, 0x5a), 0, 3 * 4096, 4096 * 20);
    await handle.close();
    await assertRejectsAs(FileStore.open({ path: join(dir, 'b') }), 'corrupt', /is corrupt/);
  });
});

test('file store - a message row that cannot be decoded fails recovery when it is read, naming the message (PER-1)', async () => {
  await withDir(async (dir, cleanup) => {
    const file = await filledStore(dir);
    const db = new Database(file);
    db.prepare("UPDATE messages SET headers = 'not json' WHERE id = 'ID:250'").run();
    db.close();

    // References are read lazily: recover() itself succeeds; reading reaches the damaged row.
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    const recovered = await store.recover();
    let read = 0;
    assert.throws(
      () => {
        for (const ref of recovered.refs) if (ref) read++;
      },
      (error: unknown) =>
        error instanceof StoreError &&
        error.kind === 'corrupt' &&
        /^store '.*gateway\.db' is corrupt \(message 'ID:250' cannot be read: .+\): restore it from a backup/.test(
          error.message,
        ),
    );
    assert.equal(read, 249, 'the rows before it were read');
    await store.close();

    // Through the engine, the start fails with that error instead of coming up without the message.
    const again = await FileStore.open({ path: dir });
    cleanup(() => again.close());
    await assertRejectsAs(JmsEngine.open({ store: again }), 'corrupt', /message 'ID:250' cannot be read/);
    await again.close();
  });
});

test('file store - a database that is not a store, or from a newer version, is refused', async () => {
  await withDir(async (dir, cleanup) => {
    const foreign = join(dir, 'foreign.db');
    const db = new Database(foreign);
    db.exec('CREATE TABLE t (x)');
    db.close();
    await assertRejectsAs(FileStore.open({ path: foreign }), 'incompatible', /is not a jms-gateway store/);

    const newer = await FileStore.open({ path: join(dir, 'newer.db') });
    cleanup(() => newer.close());
    await newer.close();
    const raw = new Database(join(dir, 'newer.db'));
    raw.prepare("UPDATE meta SET value = '99' WHERE key = 'schema'").run();
    raw.close();
    await assertRejectsAs(
      FileStore.open({ path: join(dir, 'newer.db') }),
      'incompatible',
      /schema version 99/,
    );
  });
});

test('file store - a missing store file next to its write-ahead log is refused', async () => {
  await withDir(async (dir) => {
    await writeFile(join(dir, 'gateway.db-wal'), Buffer.alloc(100));
    await assertRejectsAs(FileStore.open({ path: dir }), 'corrupt', /missing but its write-ahead log/);
  });
});

test('file store - backup copies the store while it is in use, and the copy opens on its own', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: join(dir, 'live') });
    cleanup(() => store.close());
    await store.recover();
    await store.commit(addOps('ID:1', 1, ['queue://q']));
    const pending = store.commit(addOps('ID:2', 2, ['queue://q']));
    await store.backup(join(dir, 'copy.db'));
    await pending;
    await store.commit(addOps('ID:3', 3, ['queue://q']));
    await store.close();
    assert.deepEqual(
      (await reopenAndRecover(join(dir, 'copy.db'))).refs.map((r) => r.id),
      ['ID:1', 'ID:2'],
    );
  });
});
