import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BridgeStatus } from '../../../src/bridge/index.js';
import { EndpointConfigurationError } from '../../../src/spi/index.js';
import { fakeBridge, idle, message } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

const range = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);

test('bridge - a lost target connection is re-made with backoff from minimum by the increase factor to maximum, nothing lost (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({
    reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
  });
  cleanup(() => bridge.stop());
  const statuses: BridgeStatus[] = [];
  bridge.onStatusChange((change) => statuses.push(change.status));
  await bridge.start();
  source.pushTexts('m1');
  await idle();
  sink.drop();
  sink.connects.failures = 5;
  source.pushTexts('m2', 'm3');
  await idle();
  assert.equal(bridge.status, 'reconnecting');
  const lostAt = clock.now();
  const before = sink.connects.times.length;
  await clock.advance(10_000);
  const attempts = sink.connects.times.slice(before).map((t) => t - lostAt);
  assert.deepEqual(attempts, [100, 300, 700, 1_500, 2_500, 3_500], 'delays 100, 200, 400, 800, 1000, 1000');
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3']);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
  assert.equal(bridge.counters.reconnects, 1);
  assert.equal(bridge.counters.retried, 0, 'a lost connection is not a failed delivery');
  assert.deepEqual(statuses, ['connecting', 'connected', 'reconnecting', 'connected']);
});

test('bridge - a lost source connection is re-made; what it had not settled comes again and nothing is lost (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'bridge' });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.equal(bridge.status, 'retrying');
  source.drop();
  source.connects.failures = 1;
  await idle();
  assert.equal(bridge.status, 'reconnecting');
  assert.equal(bridge.counters.inFlight, 0, 'the runtime let go of what the old connection delivered');
  await clock.advance(100 + 200);
  assert.equal(source.connected, true);
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3'], 'order kept, no duplicates');
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
  assert.equal(bridge.counters.reconnects, 1);
});

test('bridge - start retries unreachable endpoints with backoff, status connecting (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.connects.failures = 2;
  const started = bridge.start();
  await idle();
  assert.equal(bridge.status, 'connecting');
  await clock.advance(100 + 200);
  await started;
  assert.equal(bridge.status, 'connected');
  assert.deepEqual(
    sink.connects.times.map((t) => t - sink.connects.times[0]!),
    [0, 100, 300],
  );
  source.pushTexts('m1');
  await idle();
  assert.deepEqual(sink.texts, ['m1']);
});

test('bridge - stop ends a start that is still waiting for an unreachable endpoint (BRG-5, BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.connects.failures = 1_000;
  const started = bridge.start();
  await clock.advance(1_000);
  await bridge.stop();
  await started;
  assert.equal(bridge.status, 'stopped');
  const attempts = sink.connects.times.length;
  await clock.advance(10_000);
  assert.equal(sink.connects.times.length, attempts, 'no attempts after stop');
  assert.equal(source.connects.times.length, 0);
});

test('bridge - a misconfigured endpoint fails the bridge instead of retrying forever (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, sink, logger } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.connects.error = new EndpointConfigurationError("no such exchange 'orders'");
  await bridge.start();
  assert.equal(bridge.status, 'failed');
  assert.equal(sink.connects.times.length, 1);
  assert.match(bridge.counters.lastError!.message, /no such exchange/);
  assert.ok(logger.at('error').some((m) => m.includes('misconfigured')));
  await bridge.stop();
  assert.equal(bridge.status, 'stopped');
});

test('bridge - pause stops reading, in-flight messages finish; resume goes on; nothing lost or duplicated (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.failNext('m2', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  await bridge.pause();
  assert.equal(bridge.status, 'paused');
  source.pushTexts('m3', 'm4');
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['m1', 'm2'], 'the retry in flight finished while paused');
  assert.equal(source.available, 2, 'nothing read while paused');
  await bridge.resume();
  await idle();
  assert.equal(bridge.status, 'connected');
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4']);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4']);
});

test('bridge - stop drains in-flight messages within its deadline, then closes (BRG-7)', async () => {
  const { bridge, source, sink, clock } = fakeBridge({ stopTimeoutMs: 5_000 });
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  const stopped = bridge.stop();
  source.pushTexts('m3');
  await clock.advance(1_000);
  await stopped;
  assert.equal(bridge.status, 'stopped');
  assert.deepEqual(sink.texts, ['m1', 'm2']);
  assert.deepEqual(source.acked, ['m1', 'm2']);
  assert.equal(source.connected, false);
  assert.equal(sink.connected, false);
  assert.equal(source.available, 1, 'm3 was never read');
});

test('bridge - stop past its deadline gives unsent messages back; a restart sends them once (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ stopTimeoutMs: 500 });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  const stopped = bridge.stop();
  await clock.advance(500);
  await stopped;
  assert.deepEqual(sink.texts, []);
  assert.deepEqual(
    source.settlements.map((s) => [s.text, s.kind]),
    [
      ['m1', 'retry'],
      ['m2', 'retry'],
    ],
  );
  await bridge.start();
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2']);
  assert.equal(bridge.counters.dropped, 0);
});

test('bridge - one bridge stops and starts while another keeps moving messages (BRG-7)', async (context) => {
  const cleanup = teardown(context);
  const one = fakeBridge({ name: 'one' });
  cleanup(() => one.bridge.stop());
  const two = fakeBridge({ name: 'two' });
  cleanup(() => two.bridge.stop());
  await one.bridge.start();
  await two.bridge.start();
  one.source.pushTexts('a1');
  two.source.pushTexts('b1');
  await idle();
  await one.bridge.stop();
  one.source.pushTexts('a2');
  two.source.pushTexts('b2');
  await idle();
  assert.deepEqual(one.sink.texts, ['a1']);
  assert.deepEqual(two.sink.texts, ['b1', 'b2']);
  await one.bridge.start();
  await idle();
  assert.deepEqual(one.sink.texts, ['a1', 'a2']);
});

test('bridge - a sink that never confirms stops the source from being read beyond maxInFlight (BRG-5, DLV-7)', async () => {
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'none', concurrency: 2, maxInFlight: 5 });
  sink.hangAll();
  await bridge.start();
  source.pushTexts(...range('m', 20));
  await idle();
  assert.equal(source.received, 5);
  assert.equal(bridge.counters.inFlight, 5);
  assert.equal(sink.hanging, 2, 'two units send at a time; the rest wait');
  sink.confirmAll();
  await idle();
  assert.equal(source.received, 7, 'each confirm lets one more in');
  const stopped = bridge.stop();
  await clock.advance(30_000);
  await stopped;
  assert.equal(source.available, 18, 'all but the two confirmed are given back');
});

test('bridge - a full ordering unit stops reading at maxInFlightPerUnit (BRG-5)', async () => {
  const { bridge, source, sink, clock } = fakeBridge({
    ordering: 'key',
    concurrency: 2,
    maxInFlight: 10,
    maxInFlightPerUnit: 3,
  });
  sink.hangAll();
  await bridge.start();
  for (const text of range('a', 6)) source.push(message(text, { group: 'A' }));
  await idle();
  assert.equal(source.received, 3);
  const stopped = bridge.stop();
  await clock.advance(30_000);
  await stopped;
});

test('bridge - counters and status report what happened (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ selector: 'n > 1' });
  cleanup(() => bridge.stop());
  sink.failNext('m3', 1);
  assert.equal(bridge.status, 'stopped');
  await bridge.start();
  for (const n of [1, 2, 3]) {
    const m = message(`m${n}`);
    m.setIntProperty('n', n);
    source.push(m);
  }
  await idle();
  assert.equal(bridge.status, 'retrying');
  await clock.advance(1_000);
  const { lastError, ...counters } = bridge.counters;
  assert.deepEqual(counters, {
    in: 3,
    out: 2,
    filtered: 1,
    retried: 1,
    deadLettered: 0,
    discarded: 0,
    dropped: 0,
    duplicates: 0,
    possibleDuplicates: 0,
    reconnects: 0,
    inFlight: 0,
    lag: 0,
  });
  assert.match(lastError!.message, /target refused/);
  assert.equal(bridge.status, 'connected');
  await bridge.stop();
  assert.equal(bridge.status, 'stopped');
});

test('bridge - pause and resume are refused on a stopped bridge', async () => {
  const { bridge } = fakeBridge();
  await assert.rejects(bridge.pause(), { name: 'IllegalStateError' });
  await assert.rejects(bridge.resume(), { name: 'IllegalStateError' });
});
