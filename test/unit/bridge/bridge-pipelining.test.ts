import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, type BridgeConfig } from '../../../src/bridge/index.js';
import type { Message } from '../../../src/index.js';
import { type Delivery, NotConnectedError, type Outcome, type Source } from '../../../src/spi/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { teardown } from '../../helpers/teardown.js';
import { FakeBatchSink, FakeSource, RecordingLogger, fakeBridge, idle, message } from './fakes.js';

/** One ordering unit (the default ordering) over a fake source and a pipelined fake sink. */
function pipelinedBridge(config: Partial<BridgeConfig> = {}) {
  return fakeBridge({ sendBatch: { maxMessages: 2 }, ...config }, {}, (clock, log) => {
    const sink = new FakeBatchSink(clock, log);
    sink.inOrder = false;
    sink.holdBatches = true;
    return sink;
  });
}

async function releaseAll(sink: FakeBatchSink): Promise<void> {
  while (sink.heldBatches > 0) {
    sink.releaseBatch();
    await idle();
  }
}

test('bridge pipelining - one ordering unit hands over its next batches while the first is in flight, up to the sink maxBatchesInFlight', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = pipelinedBridge();
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 3;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8');
  await idle();
  assert.equal(sink.heldBatches, 3, 'three batches of the one unit in flight at once');
  assert.deepEqual(sink.batches, [
    ['m1', 'm2'],
    ['m3', 'm4'],
    ['m5', 'm6'],
  ]);
  await releaseAll(sink);
  assert.equal(sink.mostInFlight, 3);
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8']);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8']);
  assert.equal(bridge.counters.out, 8);
});

test('bridge pipelining - a sink taking one batch at a time gets one batch of the unit at a time', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = pipelinedBridge();
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 1;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4');
  await idle();
  assert.equal(sink.heldBatches, 1);
  await releaseAll(sink);
  assert.equal(sink.mostInFlight, 1);
  assert.deepEqual(sink.texts, ['m1', 'm2', 'm3', 'm4']);
});

test('bridge pipelining - a failure in batch 1 while batch 2 is in flight: the failed message goes again first, then the behind-failures, in order, before anything new (ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = pipelinedBridge();
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 2;
  sink.failNext('m1', 1);
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4');
  await idle();
  assert.deepEqual(sink.batches, [
    ['m1', 'm2'],
    ['m3', 'm4'],
  ]);
  sink.releaseBatch(); // m1 fails, m2 behind it
  await idle();
  source.pushTexts('m5');
  await idle();
  assert.equal(sink.batches.length, 2, 'nothing new goes after the failure');
  sink.releaseBatch(); // m3 and m4 were begun before the failure was known: behind it too
  await idle();
  assert.equal(sink.batches.length, 2, 'nothing goes before the retry delay');
  await clock.advance(999);
  assert.equal(sink.batches.length, 2);
  await clock.advance(1);
  assert.deepEqual(sink.batches.slice(2), [
    ['m1', 'm2'],
    ['m3', 'm4'],
  ]);
  await releaseAll(sink);
  await idle();
  await releaseAll(sink);
  assert.deepEqual(sink.batches.slice(2), [['m1', 'm2'], ['m3', 'm4'], ['m5']]);
  const lastWrite = (text: string) => sink.texts.lastIndexOf(text);
  const order = ['m1', 'm2', 'm3', 'm4', 'm5'].map(lastWrite);
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    order,
    `the copies that count are in order: ${sink.texts.join()}`,
  );
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4', 'm5']);
  assert.equal(bridge.counters.retried, 1, 'only m1 counts: the others were behind it');
  assert.equal(bridge.counters.out, 5);
  assert.equal(sink.attempts.filter((a) => a.text === 'm3').at(-1)!.deliveryCount, 1);
});

test('bridge pipelining - later batches confirmed on another target stream are settled; the failed stream waits for its retry', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = pipelinedBridge();
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 2;
  sink.streamOf = (m) => (textOf(m).startsWith('a') ? 'A' : 'B');
  sink.failNext('a1', 1);
  await bridge.start();
  source.pushTexts('a1', 'b1', 'b2', 'a2');
  await idle();
  assert.deepEqual(sink.batches, [
    ['a1', 'b1'],
    ['b2', 'a2'],
  ]);
  await releaseAll(sink);
  assert.deepEqual(source.acked, ['b1', 'b2'], 'the other stream went through');
  await clock.advance(1_000);
  await releaseAll(sink);
  assert.deepEqual(sink.batches.slice(2), [['a1', 'a2']], 'the retry first, then what was behind it');
  assert.deepEqual(source.acked, ['b1', 'b2', 'a1', 'a2']);
  assert.equal(bridge.counters.retried, 1);
});

function textOf(m: Message): string {
  return (m as unknown as { getText(): string }).getText();
}

/**
 * A source that hands over its next message only once the last is settled, as mqtt.js does for
 * QoS 1 (the PUBACK is the settle), and says so: nothing waits while it holds one back.
 */
class OneAtATimeSource implements Source {
  readonly acked: string[] = [];
  #queue: Message[] = [];
  #held = false;
  #waiter: ((delivery: Delivery) => void) | undefined;

  push(...texts: string[]): void {
    this.#queue.push(...texts.map((text) => message(text)));
    this.#serve();
  }

  connect(): Promise<void> {
    return Promise.resolve();
  }

  receive(signal: AbortSignal): Promise<Delivery> {
    return new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => reject(new NotConnectedError('stopped')), { once: true });
      this.#waiter = resolve;
      this.#serve();
    });
  }

  backlog(): number {
    return 0;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  #serve(): void {
    const waiter = this.#waiter;
    if (!waiter || this.#held || this.#queue.length === 0) return;
    this.#waiter = undefined;
    this.#held = true;
    const next = this.#queue.shift()!;
    waiter({
      message: next,
      settle: (outcome: Outcome) => {
        if (outcome.kind !== 'ack') return Promise.reject(new NotConnectedError('not expected'));
        this.acked.push(textOf(next));
        this.#held = false;
        this.#serve();
        return Promise.resolve();
      },
    });
  }
}

test('bridge acknowledgements - a source with nothing more to hand over gets its acknowledgement at once, not after batchIntervalMs', async (context) => {
  const cleanup = teardown(context);
  const clock = new FakeClock();
  const source = new OneAtATimeSource();
  const sink = new FakeBatchSink(clock, []);
  const bridge = new Bridge(
    { name: 'b1', source, sink, batchSize: 100, batchIntervalMs: 20 },
    { clock, logger: new RecordingLogger() },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  const started = clock.now();
  source.push('m1', 'm2', 'm3', 'm4', 'm5');
  for (let i = 0; i < 5; i++) await idle();
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4', 'm5'], 'no time passed: every ack went at once');
  assert.equal(clock.now(), started);
});

test('bridge acknowledgements - a source that has more waiting keeps its acknowledgements batched', async (context) => {
  const cleanup = teardown(context);
  const clock = new FakeClock();
  const source = new FakeSource(clock, []);
  Object.assign(source, { backlog: () => source.available + 1 });
  const sink = new FakeBatchSink(clock, []);
  const bridge = new Bridge(
    { name: 'b1', source, sink, batchSize: 100, batchIntervalMs: 20 },
    { clock, logger: new RecordingLogger() },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await idle();
  assert.equal(sink.texts.length, 3);
  assert.deepEqual(source.acked, [], 'waiting for the batch interval');
  await clock.advance(20);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
});

test('bridge pipelining - stop while batches are in flight gives back what was not confirmed and ends', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = pipelinedBridge({ stopTimeoutMs: 100 });
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 2;
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3', 'm4', 'm5');
  await idle();
  assert.equal(sink.heldBatches, 2);
  sink.releaseBatch();
  await idle();
  const stopped = bridge.stop();
  await clock.advance(100);
  await stopped;
  assert.equal(bridge.status, 'stopped');
  assert.deepEqual(source.acked, ['m1', 'm2']);
  assert.equal(bridge.counters.inFlight, 0);
});

test('bridge pipelining - a poison message is sent once and parked once, while its move to the error destination is still under way (DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const parking = pipelinedBridge();
  // m1 is over maxBytes, so it goes in a batch of its own.
  const big = 'm1'.padEnd(2_000, '.');
  const { bridge, source, sink } = pipelinedBridge({
    errorDestination: parking.sink,
    sendBatch: { maxMessages: 2, maxBytes: 1_000 },
  });
  cleanup(() => bridge.stop());
  sink.maxBatchesInFlight = 3;
  sink.poisoned.add(big);
  await parking.sink.connect(new AbortController().signal);
  parking.sink.hangAll();
  await bridge.start();
  source.pushTexts(big, 'm2');
  await idle();
  sink.releaseBatch();
  await idle();
  assert.equal(parking.sink.hanging, 1, 'the poison is on its way to the error destination');
  // More arrives meanwhile: the unit hands over what is ready, which is not the poison.
  source.pushTexts('m3', 'm4');
  await idle();
  await releaseAll(sink);
  assert.equal(sink.attempts.filter((a) => a.text === big).length, 1, 'the poison is not sent again');
  parking.sink.confirmAll();
  await idle();
  await releaseAll(sink);
  assert.deepEqual(parking.sink.texts, [big], 'parked once');
  assert.deepEqual(sink.texts, ['m2', 'm3', 'm4']);
  assert.deepEqual(source.settlements.map((s) => `${s.kind} ${s.text}`).sort(), [
    'ack m2',
    'ack m3',
    'ack m4',
    `reject ${big}`,
  ]);
  assert.equal(bridge.counters.deadLettered, 1);
});
