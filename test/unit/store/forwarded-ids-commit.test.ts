/**
 * The store port's window record inside a commit (BRG-2): a `recordForwarded` operation lands in
 * the same atomic write as the rest of its batch, on the real file store on disk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryStore, type StoreOperation, TextMessage } from '../../../src/index.js';
import { type TempDirBody, withTempDir } from '../../helpers/temp-dir.js';
import { FileStore } from '../../../src/store/file-store.js';

function withDir(fn: TempDirBody): Promise<void> {
  return withTempDir('forwarded-ids-commit-', fn);
}

function messageWithWindowRecord(id: string, seq: number): StoreOperation[] {
  const message = new TextMessage(id);
  message.setJMSMessageID(id);
  return [
    { op: 'addMessage', id, seq, message },
    { op: 'addRef', backlog: 'queue://out', id, seq, deliveryCount: 0, notBefore: 0 },
    { op: 'recordForwarded', window: 'bridge-a', ids: [{ id: `source-${id}`, seq, at: 1_000 + seq }] },
  ];
}

test('file store - a window record in a commit is stored with the message, and survives reopening (BRG-2)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.commit(messageWithWindowRecord('ID:1', 1));
    await store.commit([
      ...messageWithWindowRecord('ID:2', 2),
      { op: 'recordForwarded', window: 'bridge-a', ids: [], forgetThroughSeq: 1 },
    ]);
    assert.deepEqual(store.readForwardedIds('bridge-a'), [{ id: 'source-ID:2', seq: 2, at: 1_002 }]);
    await store.close();

    const reopened = await FileStore.open({ path: dir });
    cleanup(() => reopened.close());
    const recovered = await reopened.recover();
    assert.deepEqual(
      [...recovered.refs].map((ref) => ref.id),
      ['ID:1', 'ID:2'],
    );
    assert.deepEqual(
      reopened.readForwardedIds('bridge-a').map((stored) => stored.id),
      ['source-ID:2'],
    );
    await reopened.close();
  });
});

test('file store - a commit SQLite refuses records no window id either (BRG-2)', async () => {
  await withDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    await store.commit(messageWithWindowRecord('ID:1', 1));
    // A reference without an id breaks a NOT NULL constraint: SQLite refuses the whole commit.
    await assert.rejects(
      store.commit([
        {
          op: 'addRef',
          backlog: 'queue://out',
          id: null as unknown as string,
          seq: 2,
          deliveryCount: 0,
          notBefore: 0,
        },
        { op: 'recordForwarded', window: 'bridge-a', ids: [{ id: 'source-refused', seq: 2, at: 2 }] },
      ]),
    );
    assert.deepEqual(
      store.readForwardedIds('bridge-a').map((stored) => stored.id),
      ['source-ID:1'],
      'the record of the refused commit is not there',
    );
    await store.close();
  });
});

test('memory store - a commit with a window record is refused: it keeps no windows', async () => {
  const store = new MemoryStore();
  await assert.rejects(
    store.commit([{ op: 'recordForwarded', window: 'bridge-a', ids: [{ id: 'x', seq: 1, at: 1 }] }]),
    /the memory store keeps no duplicate windows .*'bridge-a'/,
  );
  assert.equal(store.commits, 0);
});
