import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MemoryDuplicateWindow,
  reconnectDelayMs,
  resolveBridgeConfig,
  retryDelayMs,
} from '../../../src/bridge/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeSink, FakeSource } from './fakes.js';

test('bridge - a fixed retry delay is the same for every retry (BRG-4)', () => {
  const delay = { kind: 'fixed', ms: 250 } as const;
  assert.deepEqual(
    [1, 2, 10].map((retry) => retryDelayMs(delay, retry, Math.random)),
    [250, 250, 250],
  );
});

test('bridge - an exponential retry delay multiplies up to its cap; jitter only shortens it (BRG-4)', () => {
  const delay = { kind: 'exponential', initialMs: 100, multiplier: 2, maxMs: 1_000, jitter: 0 } as const;
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((retry) => retryDelayMs(delay, retry, () => 0.9)),
    [100, 200, 400, 800, 1_000, 1_000],
  );
  const jittered = { ...delay, jitter: 0.5 };
  assert.equal(
    retryDelayMs(jittered, 5, () => 0),
    1_000,
    'random 0: the full delay',
  );
  assert.equal(
    retryDelayMs(jittered, 5, () => 0.999_999),
    500,
    'never below (1 - jitter)',
  );
  assert.equal(
    retryDelayMs(jittered, 1, () => 0.5),
    75,
  );
});

test('bridge - reconnect delays go from the minimum by the increase factor to the maximum (BRG-5)', () => {
  const policy = { minMs: 15_000, increaseFactor: 2, maxMs: 60_000 };
  assert.deepEqual(
    [1, 2, 3, 4, 5].map((attempt) => reconnectDelayMs(policy, attempt)),
    [15_000, 30_000, 60_000, 60_000, 60_000],
  );
});

test('bridge - settings out of range are refused with the setting named (BRG-5)', () => {
  const clock = new FakeClock();
  const base = { name: 'b', source: new FakeSource(clock), sink: new FakeSink(clock) };
  assert.throws(() => resolveBridgeConfig({ ...base, concurrency: 0 }), /'bridges\.b\.concurrency' is 0/);
  assert.throws(
    () => resolveBridgeConfig({ ...base, reconnect: { minMs: 10, increaseFactor: 0.5, maxMs: 100 } }),
    /'bridges\.b\.reconnect\.increaseFactor'/,
  );
  assert.throws(
    () => resolveBridgeConfig({ ...base, retry: { delay: { kind: 'fixed', ms: 1 }, limit: -2 } }),
    /'bridges\.b\.retry\.limit' is -2/,
  );
  assert.throws(
    () => resolveBridgeConfig({ ...base, qos: 'twice' as 'at-most-once' }),
    /expected one of 'at-most-once', 'at-least-once', 'exactly-once'/,
  );
  assert.throws(() => resolveBridgeConfig({ ...base, name: ' ' }), /non-empty name/);
  const resolved = resolveBridgeConfig(base);
  assert.equal(resolved.qos, 'at-least-once');
  assert.equal(resolved.ordering, 'bridge');
  assert.equal(resolved.retry.onLimit, 'stall');
  assert.equal(resolved.maxInFlightPerUnit, resolved.maxInFlight);
});

test('bridge - the in-memory duplicate window forgets the oldest ids beyond its size and age (BRG-2)', async () => {
  const bySize = new MemoryDuplicateWindow({ maxEntries: 2 });
  await bySize.add('a', 0);
  await bySize.add('b', 0);
  await bySize.add('c', 0);
  assert.deepEqual(await Promise.all(['a', 'b', 'c'].map((id) => bySize.has(id))), [false, true, true]);
  const clock = new FakeClock();
  const byAge = new MemoryDuplicateWindow({ maxAgeMs: 1_000, clock });
  await byAge.add('old', clock.now());
  await clock.advance(600);
  await byAge.add('new', clock.now());
  await clock.advance(500);
  assert.equal(await byAge.has('old'), false);
  assert.equal(await byAge.has('new'), true);
  assert.equal(byAge.size, 1);
});
