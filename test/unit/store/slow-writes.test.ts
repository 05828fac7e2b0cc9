import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EngineLogger } from '../../../src/jms/logger.js';
import { FileStore } from '../../../src/store/file-store.js';
import { SlowWrites } from '../../../src/store/slow-writes.js';
import { addOps } from '../../helpers/store-contract.js';
import { withTempDir } from '../../helpers/temp-dir.js';

/** A logger keeping its warnings; the other levels are dropped. */
function warnings(): { logger: EngineLogger; seen: { fields: Record<string, unknown>; message: string }[] } {
  const seen: { fields: Record<string, unknown>; message: string }[] = [];
  const ignore = () => {};
  return {
    seen,
    logger: {
      error: ignore,
      info: ignore,
      debug: ignore,
      warn: (fields, message) => seen.push({ fields, message }),
    },
  };
}

/** A monotonic clock the test moves: each write below takes the ms given for it. */
class SteppedClock {
  now = 0;
  readonly read = () => this.now;
  /** A write that takes `ms` by this clock. */
  writeTaking(ms: number): () => void {
    return () => {
      this.now += ms;
    };
  }
}

test('slow writes - a write at the threshold is logged with its duration and size, one under it is not', () => {
  const { logger, seen } = warnings();
  const clock = new SteppedClock();
  const slow = new SlowWrites(logger, '/data/gateway.db', 100, clock.read);
  slow.time(clock.writeTaking(99), () => ({ commits: 3, operations: 40 }));
  assert.equal(seen.length, 0);
  slow.time(clock.writeTaking(100), () => ({ commits: 1, operations: 2 }));
  assert.equal(seen.length, 1);
  assert.deepEqual(seen[0]!.fields, { file: '/data/gateway.db', ms: 100, commits: 1, operations: 2 });
  assert.match(seen[0]!.message, /store write held the event loop/);
});

test('slow writes - at most one warning a minute, the next one counts the slow writes not logged since', () => {
  const { logger, seen } = warnings();
  const clock = new SteppedClock();
  const slow = new SlowWrites(logger, 'db', 100, clock.read);
  slow.time(clock.writeTaking(150), () => ({ commits: 1, operations: 1 }));
  for (let i = 0; i < 5; i++) slow.time(clock.writeTaking(200), () => ({ commits: 1, operations: 1 }));
  assert.equal(seen.length, 1, 'the five within the minute are counted, not logged');
  clock.now += 60_000;
  slow.time(clock.writeTaking(120), () => ({ commits: 2, operations: 7 }));
  assert.equal(seen.length, 2);
  assert.deepEqual(seen[1]!.fields, {
    file: 'db',
    ms: 120,
    commits: 2,
    operations: 7,
    slowWritesNotLogged: 5,
  });
});

test('slow writes - a write that throws is still timed, and its error goes on', () => {
  const { logger, seen } = warnings();
  const clock = new SteppedClock();
  const slow = new SlowWrites(logger, 'db', 100, clock.read);
  assert.throws(
    () =>
      slow.time(
        () => {
          clock.now += 300;
          throw new Error('disk full');
        },
        () => ({ commits: 1, operations: 1 }),
      ),
    /disk full/,
  );
  assert.equal(seen[0]?.fields['ms'], 300);
});

test('slow writes - the file store warns when a group commit held the event loop, and stores it all the same', () =>
  withTempDir('slow-writes-', async (dir) => {
    const { logger, seen } = warnings();
    // Each reading of the clock is 250 ms after the previous one: every write "takes" 250 ms.
    let now = 0;
    const store = await FileStore.open({
      path: dir,
      logger,
      slowWriteMs: 200,
      elapsedClock: () => (now += 250),
    });
    try {
      await store.recover();
      await Promise.all([store.commit(addOps('ID:1', 1)), store.commit(addOps('ID:2', 2))]);
      const slow = seen.filter((entry) => /held the event loop/.test(entry.message));
      assert.equal(slow.length, 1, 'one transaction, one warning');
      assert.deepEqual(slow[0]!.fields, {
        file: store.file,
        ms: 250,
        commits: 2,
        operations: addOps('ID:1', 1).length * 2,
      });
      assert.deepEqual(
        [...(await store.recover()).refs].map((ref) => ref.id),
        ['ID:1', 'ID:2'],
      );
    } finally {
      await store.close();
    }
  }));
