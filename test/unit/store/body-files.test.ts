/**
 * The file store's large bodies: written to files of their own (`gateway.db-bodies/<seq>`) off the
 * event loop, before the transaction that refers to them, and gone with their message. The store
 * contract also runs with every body in a file (file-store-contract.test.ts); these tests cover
 * what is particular to the files.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { BytesMessage, ConnectionFactory, JmsEngine, type Message, TextMessage } from '../../../src/index.js';
import type { EngineLogger } from '../../../src/jms/logger.js';
import { BodyFiles, MAX_CONCURRENT_WRITES, TEXT_IN_FILE } from '../../../src/store/body-files.js';
import { FileStore, SCHEMA_VERSION } from '../../../src/store/file-store.js';
import { StoreError } from '../../../src/store/store-error.js';
import { addOps, recoverAll, text } from '../../helpers/store-contract.js';
import { assertRejectsAs } from '../../helpers/store-error.js';
import type { Cleanup } from '../../helpers/teardown.js';
import { withTempDir } from '../../helpers/temp-dir.js';

const LARGE = 64 * 1024;

function bodiesIn(dir: string): string[] {
  const folder = join(dir, 'gateway.db-bodies');
  return existsSync(folder) ? readdirSync(folder).sort((a, b) => Number(a) - Number(b)) : [];
}

function open(dir: string, logger?: EngineLogger): Promise<FileStore> {
  return FileStore.open({ path: dir, largeBodyBytes: LARGE, ...(logger ? { logger } : {}) });
}

/** A store opened on `dir` and recovered (as the engine leaves it before writing), closed by `cleanup`. */
async function openRecovered(dir: string, cleanup: Cleanup): Promise<FileStore> {
  const store = await open(dir);
  cleanup(() => store.close());
  await store.recover();
  return store;
}

function bytesOf(message: Message | undefined): number[] {
  const bytes = message as BytesMessage;
  bytes.reset();
  return [...bytes.readBytes()];
}

test('body files - a large body is written to a file of its own, not to the database, and reads back identical, also after reopening', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const store = await openRecovered(dir, cleanup);
    // Multi-byte text whose UTF-16 length is under the limit but whose UTF-8 length is over it.
    const accented = 'é€'.repeat(LARGE / 4);
    assert.ok(accented.length < LARGE && Buffer.byteLength(accented) >= LARGE);
    const bytes = Buffer.alloc(3 * LARGE, 0).map((_, i) => i % 251);
    const message = new BytesMessage();
    message.writeBytes(bytes);
    // Not well-formed UTF-16 (a lone surrogate): stored as UTF-16LE bytes, in a file too.
    const lone = `${'x'.repeat(LARGE)}\ud800`;
    const small = 'y'.repeat(LARGE / 3 - 1);
    await store.commit([
      ...addOps('ID:1', 1, ['queue://q'], accented),
      ...addOps('ID:2', 2, ['queue://q'], message),
      ...addOps('ID:3', 3, ['queue://q'], lone),
      ...addOps('ID:4', 4, ['queue://q'], small),
    ]);
    assert.deepEqual(bodiesIn(dir), ['1', '2', '3']);
    // The bodies (about 580 KB) never went through SQLite: its log holds the small rest.
    assert.ok(statSync(join(dir, 'gateway.db-wal')).size < 200 * 1024, 'the WAL stayed small');
    assert.equal(text(store.readMessage('ID:1')!), accented);
    assert.deepEqual(bytesOf(store.readMessage('ID:2')), [...bytes]);
    assert.equal(text(store.readMessage('ID:3')!), lone);
    assert.equal(text(store.readMessage('ID:4')!), small);
    await store.close();

    const again = await open(dir);
    cleanup(() => again.close());
    const recovered = await recoverAll(again);
    assert.deepEqual(
      recovered.refs.map((ref) => ref.id),
      ['ID:1', 'ID:2', 'ID:3', 'ID:4'],
    );
    // Recovery leaves the UTF-8 text and the bytes in their files (only their sizes are read);
    // the text kept as UTF-16 bytes is read, since its file's size is not its size.
    assert.equal(recovered.unreadBodies, 2);
    assert.equal(text(recovered.refs[0]!.message), accented);
    assert.deepEqual(bytesOf(recovered.refs[1]!.message), [...bytes]);
    assert.equal(text(recovered.refs[2]!.message), lone);
  });
});

test('body files - a body file goes with its message: after its last reference, and with a deleted destination', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const store = await openRecovered(dir, cleanup);
    const big = 'z'.repeat(LARGE);
    await store.commit(addOps('ID:1', 1, ['queue://q', 'queue://r'], big));
    await store.commit(addOps('ID:2', 2, ['queue://gone'], big));
    await store.commit(addOps('ID:3', 3, ['queue://q'], big));
    await store.commit([{ op: 'removeRef', backlog: 'queue://q', id: 'ID:1' }]);
    await store.commit([
      { op: 'removeRef', backlog: 'queue://q', id: 'ID:3' },
      { op: 'removeDestination', kind: 'queue', name: 'gone' },
    ]);
    // Removals run once their transaction is durable; close waits for them.
    await store.close();
    assert.deepEqual(bodiesIn(dir), ['1']);
    const again = await openRecovered(dir, cleanup);
    await again.commit([{ op: 'removeRef', backlog: 'queue://r', id: 'ID:1' }]);
    await again.close();
    assert.deepEqual(bodiesIn(dir), []);
  });
});

test('body files - a commit whose body cannot be written is rejected with nothing stored; the commits after it wait for it, then go on', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const store = await openRecovered(dir, cleanup);
    // A file where the folder belongs: no body file can be made.
    await writeFile(join(dir, 'gateway.db-bodies'), 'in the way');
    const settled: string[] = [];
    const large = store.commit(addOps('ID:1', 1, ['queue://q'], 'a'.repeat(LARGE))).then(
      () => settled.push('ID:1 stored'),
      (error: unknown) => {
        settled.push('ID:1 rejected');
        throw error;
      },
    );
    const after = store
      .commit(addOps('ID:2', 2, ['queue://q'], 'small'))
      .then(() => settled.push('ID:2 stored'));
    await assertRejectsAs(
      large,
      'write',
      /could not write a message body to '.*gateway\.db-bodies' \(.+\); nothing of this commit was stored/,
    );
    await after;
    assert.deepEqual(settled, ['ID:1 rejected', 'ID:2 stored']);
    assert.equal(store.readMessage('ID:1'), undefined);
    assert.equal(text(store.readMessage('ID:2')!), 'small');

    // Once the folder can be made, large bodies are stored again, and in the order committed.
    await rm(join(dir, 'gateway.db-bodies'));
    settled.length = 0;
    await Promise.all([
      store.commit(addOps('ID:3', 3, ['queue://q'], 'b'.repeat(4 * LARGE))).then(() => settled.push('ID:3')),
      store.commit(addOps('ID:4', 4, ['queue://q'], 'small')).then(() => settled.push('ID:4')),
    ]);
    assert.deepEqual(settled, ['ID:3', 'ID:4']);
    assert.deepEqual(bodiesIn(dir), ['3']);
  });
});

test('body files - a commit SQLite refuses takes its body files with it; the others in its group keep theirs', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const store = await openRecovered(dir, cleanup);
    const big = 'c'.repeat(LARGE);
    const good = store.commit(addOps('ID:1', 1, ['queue://q'], big));
    const bad = store.commit([
      ...addOps('ID:2', 2, ['queue://q'], big),
      // JSON cannot hold a bigint: this fails half-way through the commit.
      { op: 'putDestination', destination: { kind: 'queue', name: 'x', options: { n: 1n } } },
    ]);
    await good;
    await assertRejectsAs(bad, 'write', /nothing of this commit was stored/);
    await store.close();
    assert.deepEqual(bodiesIn(dir), ['1']);
  });
});

test('body files - opening sweeps files no message refers to, and refuses a store whose message lost its body file or whose folder is gone', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const warned: { fields: Record<string, unknown>; message: string }[] = [];
    const ignore = () => {};
    const logger: EngineLogger = {
      error: ignore,
      info: ignore,
      debug: ignore,
      warn: (fields, message) => warned.push({ fields, message }),
    };
    const store = await openRecovered(dir, cleanup);
    await store.commit(addOps('ID:1', 1, ['queue://q'], 'd'.repeat(LARGE)));
    await store.close();
    // As a crash between a body file and its commit leaves them.
    await writeFile(join(dir, 'gateway.db-bodies', '7'), 'orphan');
    await writeFile(join(dir, 'gateway.db-bodies', '8.partial'), 'orphan');

    const again = await open(dir, logger);
    cleanup(() => again.close());
    assert.deepEqual(bodiesIn(dir), ['1']);
    assert.equal(warned.length, 1);
    assert.match(warned[0]!.message, /removed body files that no message refers to/);
    assert.equal(warned[0]!.fields['removed'], 2);
    await again.close();

    await rm(join(dir, 'gateway.db-bodies', '1'));
    await assertRejectsAs(
      open(dir),
      'corrupt',
      /is corrupt \(1 message body is missing from '.*gateway\.db-bodies' \(seq 1\)\): restore it from a backup/,
    );

    // The whole folder gone: the open does not scan for body files, recovery names the one missing.
    await rm(join(dir, 'gateway.db-bodies'), { recursive: true });
    const lost = await open(dir);
    cleanup(() => lost.close());
    await assert.rejects(
      async () => recoverAll(lost),
      /is corrupt \(the body of message 'ID:1' cannot be read from '.*gateway\.db-bodies\/1': ENOENT/,
    );
  });
});

test('body files - a backup copies the body files its database refers to, and the copy opens on its own', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const live = join(dir, 'live');
    const store = await openRecovered(live, cleanup);
    const big = 'e'.repeat(2 * LARGE);
    await store.commit(addOps('ID:1', 1, ['queue://q'], big));
    await store.commit(addOps('ID:2', 2, ['queue://q'], big));
    await store.commit([{ op: 'removeRef', backlog: 'queue://q', id: 'ID:2' }]);
    const copy = join(dir, 'copy.db');
    await store.backup(copy);
    await store.close();
    assert.deepEqual(readdirSync(`${copy}-bodies`), ['1']);
    await rm(live, { recursive: true });

    const restored = await FileStore.open({ path: copy });
    cleanup(() => restored.close());
    const recovered = await recoverAll(restored);
    assert.deepEqual(
      recovered.refs.map((ref) => [ref.id, text(ref.message) === big]),
      [['ID:1', true]],
    );
  });
});

test('body files - a version-1 store opens and is marked with the current version, so older code refuses it', async () => {
  await withTempDir('body-files-', async (dir) => {
    const first = await open(dir);
    await first.close();
    const raw = new Database(join(dir, 'gateway.db'));
    raw.prepare("UPDATE meta SET value = '1' WHERE key = 'schema'").run();
    raw.close();
    const again = await open(dir);
    await again.close();
    const check = new Database(join(dir, 'gateway.db'), { readonly: true });
    try {
      assert.equal(
        check.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get(),
        String(SCHEMA_VERSION),
      );
    } finally {
      check.close();
    }
  });
});

test('body files - largeBodyBytes must be a positive number of bytes', async () => {
  await withTempDir('body-files-', async (dir) => {
    for (const largeBodyBytes of [0, -1, Number.NaN])
      await assertRejectsAs(
        FileStore.open({ path: dir, largeBodyBytes }),
        'open',
        /largeBodyBytes .* is not valid \(expected a number of bytes, at least 1, or Infinity\)/,
      );
    const everything = await FileStore.open({ path: dir, largeBodyBytes: Number.POSITIVE_INFINITY });
    await everything.recover();
    await everything.commit(addOps('ID:1', 1, ['queue://q'], 'f'.repeat(4 * LARGE)));
    await everything.close();
    assert.deepEqual(bodiesIn(dir), []);
  });
});

test('body files - a commit of many large bodies writes at most a few files at once, and stores them all', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const bodies = new BodyFiles(join(dir, 'gateway.db'));
    let most = 0;
    const body = (n: number) => `body ${n} `.repeat(1000);
    const writes = Array.from({ length: 60 }, (_, i) => bodies.write(i + 1, body(i + 1), body(i + 1).length));
    let done = false;
    const all = Promise.all(writes).finally(() => (done = true));
    while (!done) {
      most = Math.max(most, bodies.writing);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await all;
    assert.ok(most >= 2 && most <= MAX_CONCURRENT_WRITES, `${most} writes ran at once`);
    assert.equal(bodies.writing, 0);
    assert.equal(readdirSync(bodies.folder).length, 60);
    assert.equal(bodies.read(60, TEXT_IN_FILE), 'body 60 '.repeat(1000));

    const store = await FileStore.open({ path: dir, largeBodyBytes: 1000 });
    cleanup(() => store.close());
    await store.recover();
    const ops = Array.from({ length: 200 }, (_, i) =>
      addOps(`ID:${i + 1}`, i + 1, ['queue://q'], 'g'.repeat(1000 + i)),
    ).flat();
    await store.commit(ops);
    assert.equal(text(store.readMessage('ID:200')!), 'g'.repeat(1199));
  });
});

test('body files - after a restart the engine keeps large messages paged out, holds them at their full size, and delivers them whole and in order (PER-4)', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const body = (i: number) => `<order n="${i}">${'é'.repeat(LARGE)}</order>`;
    const engine = await JmsEngine.open({ store: await open(dir) });
    cleanup(() => engine.close());
    const connection = new ConnectionFactory(engine).createConnection();
    cleanup(() => connection.close());
    const session = connection.createSession();
    const producer = session.createProducer(session.createQueue('large'));
    for (let i = 0; i < 3; i++) {
      const message = new TextMessage(body(i));
      message.setStringProperty('JMSXGroupID', 'orders');
      await producer.send(message);
    }
    await producer.send(new TextMessage('small'));
    const held = engine.held();
    assert.equal(engine.messagesPagedOut, 0, 'under the paging threshold, nothing is paged out');
    await connection.close();
    await engine.close();

    const reopened = await JmsEngine.open({ store: await open(dir) });
    cleanup(() => reopened.close());
    assert.equal(reopened.messagesPagedOut, 3, 'the three large bodies stay in their files');
    assert.deepEqual(reopened.held(), held, 'held at their full sizes, as before the restart');
    const again = new ConnectionFactory(reopened).createConnection();
    cleanup(() => again.close());
    again.start();
    const receiver = again.createSession();
    const consumer = receiver.createConsumer(receiver.createQueue('large'));
    for (let i = 0; i < 3; i++) {
      const message = await consumer.receiveNoWait();
      assert.equal(text(message), body(i));
      assert.equal(message!.getStringProperty('JMSXGroupID'), 'orders');
    }
    assert.equal(text(await consumer.receiveNoWait()), 'small');
    await again.close();
    await reopened.close();
  });
});

test('body files - maxBytes bounds the database and the body files together: bodies that do not fit are refused before a file is written, the database grows only into what they leave, and room comes back as they go', async () => {
  await withTempDir('body-files-', async (dir, cleanup) => {
    const maxBytes = 1024 * 1024;
    const openBounded = async () => {
      const store = await FileStore.open({ path: dir, largeBodyBytes: LARGE, maxBytes });
      cleanup(() => store.close());
      await store.recover();
      return store;
    };
    const bodyFileBytes = () =>
      bodiesIn(dir).reduce((sum, name) => sum + statSync(join(dir, 'gateway.db-bodies', name)).size, 0);
    const store = await openBounded();
    const big = 'b'.repeat(200 * 1024);
    let seq = 0;
    const stored: string[] = [];
    let refusal: unknown;
    while (refusal === undefined && seq < 20) {
      const id = `ID:${++seq}`;
      await store.commit(addOps(id, seq, ['queue://q'], big)).then(
        () => stored.push(id),
        (error: unknown) => (refusal = error),
      );
    }
    assert.ok(refusal instanceof StoreError, String(refusal));
    assert.equal(refusal.kind, 'write');
    assert.match(
      refusal.message,
      /is full \(message bodies of 204800 bytes do not fit: the database and its body files take \d+ of maxBytes 1048576\): consume or delete messages, or raise maxBytes; nothing of this commit was stored/,
    );
    assert.equal(stored.length, 4, 'four bodies of 200 KB and the database fit in 1 MB, a fifth does not');
    assert.equal(bodiesIn(dir).length, 4, 'the refused body was never written');

    // Small messages fill the database up to what the body files leave, and no further.
    let full: unknown;
    while (full === undefined && seq < 1000) {
      const id = `ID:${++seq}`;
      await store.commit(addOps(id, seq, ['queue://q'], 's'.repeat(2048))).then(
        () => stored.push(id),
        (error: unknown) => (full = error),
      );
    }
    assert.ok(full instanceof StoreError && full.sqliteCode === 'SQLITE_FULL', String(full));
    await store.close();
    const databaseBytes = statSync(join(dir, 'gateway.db')).size;
    assert.ok(databaseBytes + bodyFileBytes() <= maxBytes, `${databaseBytes} + ${bodyFileBytes()} bytes`);
    assert.ok(databaseBytes + bodyFileBytes() > maxBytes - 64 * 1024, 'the room left was used');

    // Reopened, the body files count again; as two of them go, a large body fits in their room.
    const again = await openBounded();
    await assertRejectsAs(again.commit(addOps('ID:big', ++seq, ['queue://q'], big)), 'write', /is full/);
    await again.commit(stored.slice(0, 2).map((id) => ({ op: 'removeRef', backlog: 'queue://q', id })));
    await again.commit(addOps('ID:big', ++seq, ['queue://q'], big));
    await again.close();
    assert.equal(bodiesIn(dir).length, 3);
    assert.ok(statSync(join(dir, 'gateway.db')).size + bodyFileBytes() <= maxBytes);
  });
});
