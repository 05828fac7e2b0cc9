import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type BridgeConfig, MemoryDuplicateWindow } from '../../../src/bridge/index.js';
import { teardown } from '../../helpers/teardown.js';
import { FakeBatchSink, FakeSink, fakeBridge, idle, message } from './fakes.js';

/** A bridge over a fake source and a fake sink that takes batches, fake clock, fixed jitter. */
function batchBridge(config: Partial<BridgeConfig> = {}, window?: MemoryDuplicateWindow) {
  const made = fakeBridge(
    config,
    window ? { duplicateWindow: window } : {},
    (clock, log) => new FakeBatchSink(clock, log),
  );
  return { ...made, errors: new FakeSink(made.clock, made.log, 'park') };
}

test('bridge batching - a batch goes when it holds maxMessages; the next fills while it is sent', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = batchBridge({ sendBatch: { maxMessages: 3 } });
  cleanup(() => bridge.stop());
  sink.holdBatches = true;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7');
  await idle();
  assert.deepEqual(sink.batches, [['m1', 'm2', 'm3']], 'one batch in flight (the default), the rest waits');
  assert.equal(bridge.counters.out, 0);
  sink.releaseBatch();
  await idle();
  assert.equal(bridge.counters.out, 3, 'counted as soon as the batch answered');
  sink.releaseBatch();
  await idle();
  sink.releaseBatch();
  await idle();
  assert.deepEqual(sink.batches, [['m1', 'm2', 'm3'], ['m4', 'm5', 'm6'], ['m7']]);
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7']);
  assert.equal(bridge.counters.out, 7);
});

test('bridge batching - a batch holds at most maxBytes; a message larger than that goes alone', async (context) => {
  const cleanup = teardown(context);
  const size = message('aa').getSize();
  const { bridge, source, sink } = batchBridge({ sendBatch: { maxBytes: 2 * size } });
  cleanup(() => bridge.stop());
  sink.holdBatches = true;
  await bridge.start();
  source.pushTexts('aa', 'bb', 'cc', 'a much larger message than the limit', 'dd');
  await idle();
  for (let i = 0; i < 4; i++) {
    sink.releaseBatch();
    await idle();
  }
  assert.deepEqual(sink.batches, [['aa', 'bb'], ['cc'], ['a much larger message than the limit'], ['dd']]);
});

test('bridge batching - a batch lingers lingerMs for more messages, then goes with what it has', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge({ sendBatch: { maxMessages: 10, lingerMs: 100 } });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.pushTexts('m1');
  await clock.advance(60);
  source.pushTexts('m2');
  await clock.advance(39);
  assert.deepEqual(sink.batches, [], 'still lingering');
  await clock.advance(1);
  assert.deepEqual(sink.batches, [['m1', 'm2']], 'linger is counted from the first message');
  assert.equal(bridge.counters.out, 2);
});

test('bridge batching - ordering units share a batch, each giving its messages in order', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge({
    ordering: 'key',
    concurrency: 2,
    sendBatch: { lingerMs: 10 },
  });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.push(message('a1', { group: 'A' }));
  source.push(message('b1', { group: 'B' }));
  source.push(message('a2', { group: 'A' }));
  source.push(message('b2', { group: 'B' }));
  await clock.advance(10);
  assert.deepEqual(sink.batches, [['a1', 'a2', 'b1', 'b2']]);
});

test('bridge batching - up to the sink maxBatchesInFlight batches are sent at once, never more', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = batchBridge({
    ordering: 'key',
    concurrency: 4,
    sendBatch: { maxMessages: 2 },
  });
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 2;
  sink.holdBatches = true;
  await bridge.start();
  for (const group of ['A', 'B', 'C', 'D'])
    for (let n = 1; n <= 2; n++) source.push(message(`${group.toLowerCase()}${n}`, { group }));
  await idle();
  assert.equal(sink.heldBatches, 2, 'two batches in flight');
  assert.equal(sink.batches.length, 2);
  while (sink.heldBatches > 0) {
    sink.releaseBatch();
    await idle();
  }
  assert.equal(sink.mostInFlight, 2);
  assert.equal(bridge.counters.out, 8);
  for (const group of ['a', 'b', 'c', 'd'])
    assert.deepEqual(
      sink.texts.filter((t) => t.startsWith(group)),
      [`${group}1`, `${group}2`],
      `unit ${group} in order`,
    );
});

test('bridge batching - a poison message in a batch is parked alone, the others go on', async (context) => {
  const cleanup = teardown(context);
  const clockless = batchBridge();
  const { bridge, source, sink, errors } = batchBridge({ errorDestination: clockless.errors });
  cleanup(() => bridge.stop());
  sink.poisoned.add('m2');
  await clockless.errors.connect(new AbortController().signal);
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.deepEqual(sink.batches, [['m1', 'm2', 'm3']]);
  assert.deepEqual(sink.texts, ['m1', 'm3']);
  assert.deepEqual(clockless.errors.texts, ['m2']);
  assert.equal(errors.texts.length, 0);
  assert.equal(bridge.counters.deadLettered, 1);
  assert.equal(bridge.counters.out, 2);
  assert.equal(bridge.counters.retried, 0);
  assert.deepEqual(
    source.settlements.map((s) => `${s.kind} ${s.text}`),
    ['ack m1', 'reject m2', 'ack m3'],
  );
});

test('bridge batching - a failed message is retried first; those behind it go again after it, uncounted (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge();
  cleanup(() => bridge.stop());
  sink.failNext('m2', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4');
  await idle();
  assert.deepEqual(sink.batches, [['m1', 'm2', 'm3', 'm4']]);
  assert.deepEqual(sink.texts, ['m1']);
  source.pushTexts('m5');
  await clock.advance(999);
  assert.deepEqual(sink.batches.length, 1, 'nothing of the unit goes while m2 waits for its retry');
  await clock.advance(1);
  assert.deepEqual(sink.batches[1], ['m2', 'm3', 'm4', 'm5'], 'the retried one first, the rest behind it');
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4', 'm5']);
  assert.equal(bridge.counters.retried, 1, 'only m2 counts');
  const countOf = (text: string) => sink.attempts.filter((a) => a.text === text).map((a) => a.deliveryCount);
  assert.deepEqual(countOf('m2'), [1, 2]);
  assert.deepEqual(countOf('m3').at(-1), 1, 'm3 was behind a failure: its delivery count is unchanged');
});

test('bridge batching - a pipelined sink: a key never gets a batch ahead of its retried message, other keys behind a failure go again at once (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge({
    ordering: 'key',
    concurrency: 2,
    sendBatch: { lingerMs: 5 },
  });
  cleanup(() => bridge.stop());
  sink.inOrder = false;
  sink.maxBatchesInFlight = 4;
  sink.failNext('a1', 1);
  await bridge.start();
  source.push(message('a1', { group: 'A' }));
  source.push(message('b1', { group: 'B' }));
  source.push(message('a2', { group: 'A' }));
  source.push(message('b2', { group: 'B' }));
  await clock.advance(5);
  assert.deepEqual(sink.batches[0], ['a1', 'a2', 'b1', 'b2']);
  // B's messages came back behind A's failure (same target stream): B goes again at once.
  await clock.advance(5);
  assert.deepEqual(sink.batches[1], ['b1', 'b2']);
  source.push(message('a3', { group: 'A' }));
  await clock.advance(900);
  assert.ok(
    sink.batches.slice(1).every((batch) => !batch.some((t) => t.startsWith('a'))),
    `no batch of A before its retry: ${JSON.stringify(sink.batches)}`,
  );
  await clock.advance(100);
  await clock.advance(5);
  assert.deepEqual(sink.batches.at(-1), ['a1', 'a2', 'a3']);
  assert.equal(bridge.counters.retried, 1, 'only a1 counts');
  assert.equal(bridge.counters.out, 5);
  assert.equal(sink.attempts.filter((a) => a.text === 'b1').at(-1)!.deliveryCount, 1);
});

test('bridge batching - a connection lost during a batch: re-sent after the reconnect, not counted; the suspect goes alone', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge();
  cleanup(() => bridge.stop());
  sink.connectionKillers.add('m2');
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.deepEqual(sink.batches, [['m1', 'm2', 'm3']]);
  sink.connectionKillers.delete('m2'); // the broker went away once, m2 is not at fault
  await clock.advance(100);
  assert.deepEqual(sink.batches.slice(1), [['m2'], ['m3']], 'm2, a suspect, goes alone; then the rest');
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3']);
  assert.equal(bridge.counters.retried, 0, 'a lost connection does not count');
  assert.equal(bridge.counters.reconnects, 1);
  assert.ok(bridge.counters.possibleDuplicates >= 1, 'm2 may have reached the target before');
});

test('bridge batching - a message that keeps killing the connection is found alone and counted until parked', async (context) => {
  const cleanup = teardown(context);
  const parking = batchBridge();
  const { bridge, source, sink, clock } = batchBridge({
    retry: { delay: { kind: 'fixed', ms: 1_000 }, limit: 1 },
    errorDestination: parking.errors,
  });
  cleanup(() => bridge.stop());
  await parking.errors.connect(new AbortController().signal);
  sink.connectionKillers.add('m2');
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  await clock.advance(100); // reconnect; m2 alone, dies again: counted (1 of 1)
  await clock.advance(1_000); // retry delay
  await clock.advance(200); // reconnect; m2 alone again: limit reached, parked
  await clock.advance(400);
  assert.deepEqual(parking.errors.texts, ['m2']);
  assert.deepEqual(sink.texts, ['m1', 'm3']);
  assert.ok(
    sink.batches
      .slice(1)
      .filter((batch) => batch.includes('m2'))
      .every((batch) => batch.length === 1),
    `m2 went alone after the first loss: ${JSON.stringify(sink.batches)}`,
  );
  assert.equal(bridge.counters.deadLettered, 1);
});

test('bridge batching - exactly-once: each message of a batch is checked against the window and recorded once confirmed (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const window = new MemoryDuplicateWindow();
  await window.add('ID:m2', 0);
  const { bridge, source, sink } = batchBridge({ qos: 'exactly-once' }, window);
  cleanup(() => bridge.stop());
  sink.holdBatches = true;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.equal(await window.has('ID:m1'), false, 'not recorded before the target confirmed');
  while (sink.heldBatches > 0) {
    sink.releaseBatch();
    await idle();
  }
  assert.deepEqual(sink.texts, ['m1', 'm3'], 'the duplicate is not sent');
  assert.ok(sink.batches.every((batch) => !batch.includes('m2')));
  assert.equal(bridge.counters.duplicates, 1);
  assert.equal(await window.has('ID:m1'), true);
  assert.equal(await window.has('ID:m3'), true);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
});

test('bridge batching - backpressure: reading stops at maxInFlight while batches are unanswered (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = batchBridge({ maxInFlight: 5, sendBatch: { maxMessages: 3 } });
  cleanup(() => bridge.stop());
  sink.holdBatches = true;
  await bridge.start();
  for (let n = 1; n <= 20; n++) source.pushTexts(`m${n}`);
  await idle();
  assert.equal(source.received, 5);
  assert.equal(bridge.counters.inFlight, 5);
  while (sink.heldBatches > 0) {
    sink.releaseBatch();
    await idle();
  }
  assert.equal(bridge.counters.out, 20);
  assert.ok(sink.batches.every((batch) => batch.length <= 3));
});

test('bridge batching - sendBatch maxMessages 1 sends one message at a time through send', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = batchBridge({ sendBatch: { maxMessages: 1 } });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  assert.deepEqual(sink.batches, []);
  assert.deepEqual(sink.texts, ['m1', 'm2']);
});

test('bridge batching - a bad sendBatch setting is refused with its name', () => {
  assert.throws(
    () => batchBridge({ sendBatch: { maxMessages: 0 } }),
    /bridges\.b1\.sendBatch\.maxMessages' is 0/,
  );
  assert.throws(() => batchBridge({ sendBatch: { lingerMs: -1 } }), /sendBatch\.lingerMs/);
});

test('bridge batching - stop while a batch lingers or is unanswered gives the messages back, nothing lost', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = batchBridge({
    ordering: 'key',
    concurrency: 2,
    sendBatch: { lingerMs: 10_000 },
    stopTimeoutMs: 100,
  });
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 1;
  await bridge.start();
  source.push(message('a1', { group: 'A' }));
  await clock.advance(10_000);
  assert.deepEqual(sink.batches, [['a1']]);
  sink.holdBatches = true;
  source.push(message('a2', { group: 'A' }));
  source.push(message('b1', { group: 'B' }));
  await clock.advance(10_000);
  assert.equal(sink.heldBatches, 1, 'a2 and b1 are being sent');
  source.push(message('c1', { group: 'C' }));
  await idle();
  const stopping = bridge.stop();
  await clock.advance(100);
  await stopping;
  assert.equal(bridge.status, 'stopped');
  assert.deepEqual(sink.texts, ['a1']);
  const settled = source.settlements.map((s) => `${s.kind} ${s.text}`).sort();
  assert.deepEqual(
    settled,
    ['ack a1', 'retry a2', 'retry b1', 'retry c1'],
    'the rest goes back to the source',
  );
});

test('bridge batching - at-most-once: acknowledged before the batch, counted when it answered', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = batchBridge({ qos: 'at-most-once' });
  cleanup(() => bridge.stop());
  sink.holdBatches = true;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
  assert.equal(bridge.counters.inFlight, 3);
  sink.releaseBatch();
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3']);
  assert.equal(bridge.counters.out, 3);
  assert.equal(bridge.counters.inFlight, 0);
});
