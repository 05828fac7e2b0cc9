import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, StoreDuplicateWindow } from '../../../src/bridge/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { type TempDirBody, withTempDir } from '../../helpers/temp-dir.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeSink, FakeSource, idle, message } from './fakes.js';

function withStoreDir(fn: TempDirBody): Promise<void> {
  return withTempDir('duplicate-window-', fn);
}

/** An exactly-once bridge over fakes whose duplicate window lives in `store`. */
function exactlyOnce(store: FileStore, clock: FakeClock) {
  const source = new FakeSource(clock);
  const sink = new FakeSink(clock);
  const bridge = new Bridge(
    { name: 'orders-out', source, sink, qos: 'exactly-once' },
    { clock, duplicateWindow: new StoreDuplicateWindow({ store, name: 'orders-out' }) },
  );
  return { source, sink, bridge };
}

test('bridge - exactly-once with the window in the file store drops a copy redelivered after a restart (BRG-2)', async () => {
  await withStoreDir(async (dir, cleanup) => {
    const clock = new FakeClock();
    const first = await FileStore.open({ path: dir });
    cleanup(() => first.close());
    const before = exactlyOnce(first, clock);
    cleanup(() => before.bridge.stop());
    await before.bridge.start();
    before.source.push(message('m1'));
    before.source.push(message('m2'));
    await idle();
    assert.deepEqual(before.sink.texts, ['m1', 'm2']);
    await before.bridge.stop();
    await first.close();

    // A new process: a new store object on the same file, a new bridge; the source delivers m2 again
    // (its acknowledgement was lost) and then m3.
    const second = await FileStore.open({ path: dir });
    cleanup(() => second.close());
    const after = exactlyOnce(second, clock);
    cleanup(() => after.bridge.stop());
    await after.bridge.start();
    after.source.push(message('m2'));
    after.source.push(message('m3'));
    await idle();
    assert.deepEqual(after.sink.texts, ['m3'], 'the copy of m2 is not sent again');
    assert.deepEqual(after.source.acked, ['m2', 'm3'], 'the duplicate is acknowledged at the source');
    assert.equal(after.bridge.counters.duplicates, 1);
    await after.bridge.stop();
    await second.close();
  });
});

test('duplicate window - an id is in the store once add resolves, and the store keeps at most maxEntries', async () => {
  await withStoreDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    const window = new StoreDuplicateWindow({ store, name: 'w', maxEntries: 3 });
    const other = new StoreDuplicateWindow({ store, name: 'other' });
    await other.add('ID:a', 1);
    for (const [i, id] of ['ID:a', 'ID:b', 'ID:c', 'ID:d', 'ID:e'].entries()) {
      await window.add(id, 10 + i);
      assert.ok(
        store.readForwardedIds('w').some((stored) => stored.id === id),
        `${id} is durable when add resolves`,
      );
    }
    assert.deepEqual(
      store.readForwardedIds('w').map((stored) => stored.id),
      ['ID:c', 'ID:d', 'ID:e'],
    );
    assert.equal(await window.has('ID:a'), false, 'forgotten: beyond maxEntries');
    await window.add('ID:c', 20);
    assert.deepEqual(
      store.readForwardedIds('w').map((stored) => stored.id),
      ['ID:d', 'ID:e', 'ID:c'],
      'recorded again: newest',
    );
    await store.close();

    const reopened = await FileStore.open({ path: dir });
    cleanup(() => reopened.close());
    const again = new StoreDuplicateWindow({ store: reopened, name: 'w', maxEntries: 2 });
    assert.deepEqual(
      await Promise.all(['ID:c', 'ID:d', 'ID:e'].map((id) => again.has(id))),
      [true, false, true],
      'a smaller window keeps the newest',
    );
    assert.equal(await new StoreDuplicateWindow({ store: reopened, name: 'other' }).has('ID:a'), true);
    await again.add('ID:f', 30);
    assert.deepEqual(
      reopened.readForwardedIds('w').map((stored) => stored.id),
      ['ID:c', 'ID:f'],
    );
    await reopened.close();
  });
});

test('duplicate window - ids older than maxAgeMs are forgotten, in memory and in the store', async () => {
  await withStoreDir(async (dir, cleanup) => {
    const clock = new FakeClock();
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    const window = new StoreDuplicateWindow({ store, name: 'w', maxAgeMs: 1_000, clock });
    await window.add('ID:old', clock.now());
    await clock.advance(600);
    await window.add('ID:new', clock.now());
    await clock.advance(500);
    assert.equal(await window.has('ID:old'), false);
    assert.equal(await window.has('ID:new'), true);
    await window.add('ID:newer', clock.now());
    assert.deepEqual(
      store.readForwardedIds('w').map((stored) => stored.id),
      ['ID:new', 'ID:newer'],
    );
    await store.close();
  });
});

test('duplicate window - ids seeded from the target are known, within the bounds, and not written to the store (BRG-2)', async () => {
  await withStoreDir(async (dir, cleanup) => {
    const store = await FileStore.open({ path: dir });
    cleanup(() => store.close());
    const window = new StoreDuplicateWindow({ store, name: 'w', maxEntries: 3 });
    await window.add('ID:recorded', 1);
    window.seed([
      { id: 'ID:t1', at: 2 },
      { id: 'ID:t2', at: 3 },
      { id: 'ID:t3', at: 4 },
    ]);
    assert.deepEqual(
      await Promise.all(['ID:recorded', 'ID:t1', 'ID:t2', 'ID:t3'].map((id) => window.has(id))),
      [false, true, true, true],
      'the oldest goes first when the seeds fill the window',
    );
    await window.add('ID:after', 5);
    assert.deepEqual(
      store.readForwardedIds('w').map((stored) => stored.id),
      ['ID:after'],
      'seeds stay in memory (the target keeps them); the trimmed record is forgotten in the store',
    );
    assert.equal(await window.has('ID:t1'), false);
    await store.close();
  });
});
