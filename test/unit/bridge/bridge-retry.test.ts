import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ERROR_BRIDGE,
  ERROR_DELIVERY_COUNT,
  ERROR_ORIGIN,
  ERROR_REASON,
  ERROR_TIME,
} from '../../../src/bridge/index.js';
import { FakeSink, fakeBridge, idle, message } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

test('bridge - a failing message is retried before any later message of its unit while other units pass (ORD-3, ORD-4)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'key', concurrency: 2 });
  cleanup(() => bridge.stop());
  sink.failNext('a1', 2);
  await bridge.start();
  source.push(message('a1', { group: 'A' }));
  source.push(message('b1', { group: 'B' }));
  source.push(message('a2', { group: 'A' }));
  source.push(message('b2', { group: 'B' }));
  await idle();
  assert.deepEqual(sink.texts, ['b1', 'b2'], 'unit B goes on while a1 waits for its retry');
  assert.equal(bridge.status, 'retrying');
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['b1', 'b2'], 'a1 failed again; a2 still waits behind it');
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['b1', 'b2', 'a1', 'a2']);
  assert.deepEqual(
    sink.attempts.filter((a) => a.text.startsWith('a')).map((a) => a.text),
    ['a1', 'a1', 'a1', 'a2'],
    'a2 was never tried before a1 went out',
  );
  assert.equal(bridge.counters.retried, 2);
  assert.equal(bridge.status, 'connected');
});

test('bridge - the source ordering key wins over the group property (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'key', concurrency: 2 });
  cleanup(() => bridge.stop());
  sink.failNext('p1', 1);
  await bridge.start();
  source.push(message('p1', { group: 'X' }), 'partition-0');
  source.push(message('p2', { group: 'Y' }), 'partition-0');
  source.push(message('q1', { group: 'X' }), 'partition-1');
  await idle();
  assert.deepEqual(sink.texts, ['q1'], 'p2 waits behind p1 (same partition) although its group differs');
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['q1', 'p1', 'p2']);
});

test('bridge - with ordering bridge a failing message holds every later one (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'bridge', concurrency: 4 });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 1);
  await bridge.start();
  source.push(message('m1', { group: 'A' }));
  source.push(message('m2', { group: 'B' }));
  await idle();
  assert.deepEqual(sink.texts, []);
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['m1', 'm2']);
});

test('bridge - with ordering none a failing message holds nothing (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'none', concurrency: 1 });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.deepEqual(
    sink.texts,
    ['m2', 'm3'],
    'a message waiting for its retry does not hold a concurrency slot',
  );
  await clock.advance(1_000);
  assert.deepEqual(sink.texts, ['m2', 'm3', 'm1']);
});

test('bridge - a fixed retry delay spaces the attempts evenly (BRG-4, DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 250 }, limit: -1 },
  });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 3);
  await bridge.start();
  const start = clock.now();
  source.pushTexts('m1');
  await clock.advance(2_000);
  assert.deepEqual(
    sink.attempts.map((a) => a.at - start),
    [0, 250, 500, 750],
  );
  assert.deepEqual(sink.texts, ['m1']);
});

test('bridge - an exponential retry delay grows to its cap, with jitter from the injected random (BRG-4)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge(
    {
      retry: {
        delay: { kind: 'exponential', initialMs: 100, multiplier: 3, maxMs: 1_000, jitter: 0.5 },
        limit: -1,
      },
    },
    { random: () => 0.2 },
  );
  cleanup(() => bridge.stop());
  sink.failNext('m1', 5);
  await bridge.start();
  const start = clock.now();
  source.pushTexts('m1');
  await clock.advance(10_000);
  const gaps = sink.attempts.slice(1).map((a, i) => a.at - sink.attempts[i]!.at);
  // 100, 300, 900, 1000 (capped), 1000, each shortened by jitter × random = 0.5 × 0.2 = 10%.
  assert.deepEqual(gaps, [90, 270, 810, 900, 900]);
  assert.equal(sink.attempts[0]!.at, start);
});

test('bridge - retries carry the delivery count and the redelivered flag the runtime keeps (BRG-4, MSG-2)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.failNext('m1', 2);
  await bridge.start();
  source.pushTexts('m1');
  await clock.advance(2_000);
  assert.deepEqual(
    sink.attempts.map((a) => [a.deliveryCount, a.redelivered]),
    [
      [1, false],
      [2, true],
      [3, true],
    ],
  );
});

test('bridge - after the retry limit the message goes to the error destination with origin, reason and delivery count (BRG-4, DLV-2, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const base = fakeBridge();
  const errors = new FakeSink(base.clock, base.log, 'dead-letter');
  const { bridge, source, sink, clock } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 2 },
    errorDestination: errors,
  });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 10);
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await clock.advance(100);
  await clock.advance(100);
  await idle();
  assert.equal(sink.attempts.filter((a) => a.text === 'm1').length, 3, 'the first delivery and 2 retries');
  assert.deepEqual(errors.texts, ['m1']);
  const moved = errors.sent[0]!;
  assert.equal(moved.getStringProperty(ERROR_ORIGIN), 'bridge://b1', 'an external source');
  assert.equal(moved.getStringProperty(ERROR_BRIDGE), 'b1');
  assert.match(
    moved.getStringProperty(ERROR_REASON)!,
    /retry limit 2 reached after 3 deliveries: Error: target refused/,
  );
  assert.equal(moved.getIntProperty(ERROR_DELIVERY_COUNT), 3);
  assert.equal(moved.getLongProperty(ERROR_TIME), BigInt(clock.now()));
  assert.equal(moved.getJMSMessageID(), 'ID:m1', 'headers are kept');
  assert.deepEqual(
    source.settlements.map((s) => [s.text, s.kind]),
    [
      ['m1', 'reject'],
      ['m2', 'ack'],
    ],
  );
  assert.deepEqual(sink.texts, ['m2'], 'the unit goes on once m1 is in the error destination (ORD-4)');
  const counters = bridge.counters;
  assert.equal(counters.deadLettered, 1);
  assert.equal(counters.retried, 2);
  assert.equal(counters.dropped, 0);
});

test('bridge - a poison message goes to the error destination at once, without retries (DLV-9, BRG-4)', async (context) => {
  const cleanup = teardown(context);
  const base = fakeBridge();
  const errors = new FakeSink(base.clock, base.log, 'dead-letter');
  const { bridge, source, sink } = fakeBridge({
    errorDestination: errors,
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 5 },
  });
  cleanup(() => bridge.stop());
  sink.poisoned.add('bad');
  await bridge.start();
  source.pushTexts('bad', 'good');
  await idle();
  assert.equal(sink.attempts.filter((a) => a.text === 'bad').length, 1);
  assert.deepEqual(errors.texts, ['bad']);
  assert.match(errors.sent[0]!.getStringProperty(ERROR_REASON)!, /^poison: PoisonMessageError/);
  assert.equal(errors.sent[0]!.getIntProperty(ERROR_DELIVERY_COUNT), 1);
  assert.deepEqual(sink.texts, ['good']);
  assert.equal(bridge.counters.retried, 0);
  assert.equal(bridge.counters.deadLettered, 1);
});

test('bridge - an error destination that is down is retried until it takes the message; nothing is lost (DLV-3, BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const base = fakeBridge();
  const errors = new FakeSink(base.clock, base.log, 'dead-letter');
  const { bridge, source, sink, clock } = fakeBridge({ errorDestination: errors });
  cleanup(() => bridge.stop());
  sink.poisoned.add('bad');
  await bridge.start();
  errors.drop();
  errors.connects.failures = 2;
  source.pushTexts('bad');
  await idle();
  assert.equal(bridge.status, 'reconnecting');
  assert.equal(source.settlements.length, 0, 'not settled before it is in the error destination');
  await clock.advance(100 + 200 + 400);
  assert.deepEqual(errors.texts, ['bad']);
  assert.deepEqual(
    source.settlements.map((s) => s.kind),
    ['reject'],
  );
  assert.equal(bridge.status, 'connected');
});

test('bridge - with no error destination a message at its limit stalls its unit, status failed, until resume (BRG-4, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock, logger } = fakeBridge({
    ordering: 'key',
    concurrency: 2,
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 1 },
  });
  cleanup(() => bridge.stop());
  sink.failNext('a1', 3);
  await bridge.start();
  source.push(message('a1', { group: 'A' }));
  source.push(message('a2', { group: 'A' }));
  source.push(message('b1', { group: 'B' }));
  await clock.advance(100);
  await idle();
  assert.equal(bridge.status, 'failed');
  assert.ok(logger.at('error').some((m) => m.includes('stalled')));
  assert.deepEqual(sink.texts, ['b1'], 'other units go on');
  assert.ok(
    !source.settlements.some((s) => s.text.startsWith('a')),
    'the stalled message is kept, not settled',
  );
  source.push(message('b2', { group: 'B' }));
  await clock.advance(10_000);
  assert.deepEqual(sink.texts, ['b1', 'b2']);
  assert.equal(sink.attempts.filter((a) => a.text === 'a1').length, 2, 'no retries while stalled');
  await bridge.resume();
  await clock.advance(100);
  assert.deepEqual(
    sink.texts,
    ['b1', 'b2', 'a1', 'a2'],
    'resume gives it a new round of retries, order kept',
  );
  assert.equal(bridge.status, 'connected');
  assert.equal(bridge.counters.discarded, 0);
  assert.equal(bridge.counters.dropped, 0);
});

test('bridge - with onLimit drop and no error destination the message is rejected and counted as discarded (BRG-4, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, logger } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 0, onLimit: 'drop' },
  });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  assert.deepEqual(
    source.settlements.map((s) => [s.text, s.kind]),
    [
      ['m1', 'reject'],
      ['m2', 'ack'],
    ],
  );
  assert.equal(bridge.counters.discarded, 1);
  assert.equal(bridge.counters.dropped, 0);
  assert.ok(logger.at('warn').some((m) => m.includes('discarded')));
});

test('bridge - a target that asks to back off is retried after its delay without using up the limit (BRG-4, DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 0 },
  });
  cleanup(() => bridge.stop());
  sink.backOff('m1', 3, 500);
  await bridge.start();
  const start = clock.now();
  source.pushTexts('m1');
  await clock.advance(2_000);
  assert.deepEqual(
    sink.attempts.map((a) => a.at - start),
    [0, 500, 1_000, 1_500],
  );
  assert.deepEqual(sink.texts, ['m1']);
  assert.equal(bridge.counters.retried, 0);
  assert.equal(bridge.counters.deadLettered + bridge.counters.discarded, 0);
});

test('bridge - a bridge that cannot send warns once per reason, not on every retry (BRG-4)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock, logger } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: -1 },
  });
  cleanup(() => bridge.stop());
  sink.failNext('m1', 5, new Error('disk full'));
  await bridge.start();
  source.pushTexts('m1');
  await clock.advance(300);
  sink.error = new Error('quota exceeded');
  await clock.advance(500);
  const warnings = logger.entries.filter((e) => e.level === 'warn');
  assert.deepEqual(
    warnings.map((w) => w.fields.err),
    ['Error: disk full', 'Error: quota exceeded'],
  );
  assert.deepEqual(sink.texts, ['m1']);
  assert.ok(logger.at('info').includes('bridge sends again'));
  assert.equal(bridge.counters.lastError?.message, 'Error: quota exceeded');
});
