import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AckBatcher } from '../../../src/bridge/ack-batcher.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';

function batcher(batchSize: number, batchIntervalMs: number, immediate = false) {
  const clock = new FakeClock();
  const acked: string[] = [];
  const flushes: string[][] = [];
  let current: string[] | undefined;
  let release: (() => void) | undefined;
  let hold = false;
  const acks = new AckBatcher<string>({
    clock,
    batchSize,
    batchIntervalMs,
    immediate: () => immediate,
    acknowledge: async (item) => {
      if (!current) {
        current = [];
        flushes.push(current);
        queueMicrotask(() => (current = undefined));
      }
      current.push(item);
      if (hold) await new Promise<void>((resolve) => (release = resolve));
      acked.push(item);
    },
  });
  return {
    clock,
    acks,
    acked,
    flushes,
    holdNext: () => (hold = true),
    releaseAll: () => {
      hold = false;
      release?.();
    },
  };
}

test('ack batcher - acknowledges once batchSize are queued, not before', async () => {
  const { acks, acked } = batcher(3, 1_000);
  acks.queue('m1');
  acks.queue('m2');
  await settle();
  assert.deepEqual(acked, []);
  assert.equal(acks.pending, true);
  acks.queue('m3');
  await settle();
  assert.deepEqual(acked, ['m1', 'm2', 'm3']);
  assert.equal(acks.pending, false);
});

test('ack batcher - acknowledges a short batch after batchIntervalMs', async () => {
  const { acks, acked, clock } = batcher(10, 1_000);
  acks.queue('m1');
  await clock.advance(999);
  assert.deepEqual(acked, []);
  await clock.advance(1);
  assert.deepEqual(acked, ['m1']);
});

test('ack batcher - acknowledges at once when the bridge says so (paused, stopping) or the interval is 0', async () => {
  const paused = batcher(10, 1_000, true);
  paused.acks.queue('m1');
  await settle();
  assert.deepEqual(paused.acked, ['m1']);
  const unbatched = batcher(10, 0);
  unbatched.acks.queue('m1');
  await settle();
  assert.deepEqual(unbatched.acked, ['m1']);
});

test('ack batcher - one flush at a time: what is queued meanwhile goes together after it', async () => {
  const { acks, acked, flushes, holdNext, releaseAll } = batcher(1, 1_000);
  holdNext();
  acks.queue('m1');
  await settle();
  acks.queue('m2');
  acks.queue('m3');
  const all = acks.flush();
  await settle();
  assert.deepEqual(flushes, [['m1']], 'm2 and m3 wait for the flush under way');
  releaseAll();
  await all;
  assert.deepEqual(acked, ['m1', 'm2', 'm3']);
  assert.deepEqual(flushes, [['m1'], ['m2', 'm3']]);
});
