import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, type DuplicateWindow } from '../../../src/bridge/index.js';
import type { Delivery, Outcome, Source } from '../../../src/spi/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { FakeSink, FakeSource, fakeBridge, idle, message, textOf } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

/**
 * A source whose settles wait for `commit()`, as a Kafka source waits for its offset commit:
 * `rounds` lists the texts settled before each commit.
 */
class CommittingSource implements Source {
  readonly rounds: string[][] = [[]];
  #waiting: (() => void)[] = [];

  constructor(readonly inner: FakeSource) {}

  connect(signal: AbortSignal): Promise<void> {
    return this.inner.connect(signal);
  }

  async receive(signal: AbortSignal): Promise<Delivery> {
    const delivery = await this.inner.receive(signal);
    return {
      ...delivery,
      settle: (outcome: Outcome) => {
        this.rounds.at(-1)!.push(textOf(delivery.message));
        return new Promise<void>((resolve, reject) => {
          this.#waiting.push(() => {
            delivery.settle(outcome).then(resolve, reject);
          });
        });
      },
    };
  }

  /** The broker stored the commit: every waiting settle resolves. */
  commit(): void {
    this.rounds.push([]);
    for (const done of this.#waiting.splice(0)) done();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

test('bridge - at-least-once acknowledges the source only after the target confirmed (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, log } = fakeBridge({ qos: 'at-least-once' });
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  source.pushTexts('m1');
  await idle();
  assert.equal(sink.hanging, 1);
  assert.deepEqual(source.settlements, [], 'nothing acknowledged while the target has not confirmed');
  assert.equal(bridge.counters.inFlight, 1);
  sink.confirmAll();
  await idle();
  assert.deepEqual(log, ['receive m1', 'send m1', 'ack m1']);
  assert.equal(bridge.counters.inFlight, 0);
});

test('bridge - at-most-once acknowledges the source before the target send (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, log } = fakeBridge({ qos: 'at-most-once' });
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  source.pushTexts('m1');
  await idle();
  assert.deepEqual(log, ['receive m1', 'ack m1'], 'acknowledged although the send has not been confirmed');
  sink.confirmAll();
  await idle();
  assert.deepEqual(log, ['receive m1', 'ack m1', 'send m1']);
  assert.equal(bridge.counters.dropped, 0);
});

test('bridge - at-most-once loses an unsent message only at a stop deadline, and counts it in dropped (BRG-2, BRG-7)', async () => {
  const { bridge, source, sink, clock, logger } = fakeBridge({ qos: 'at-most-once', stopTimeoutMs: 500 });
  sink.hangAll();
  await bridge.start();
  source.pushTexts('m1');
  await idle();
  const stopped = bridge.stop();
  await clock.advance(500);
  await stopped;
  assert.equal(bridge.counters.dropped, 1);
  assert.deepEqual(source.acked, ['m1']);
  assert.ok(logger.at('error').some((m) => m.includes('at-most-once message lost')));
});

test('bridge - exactly-once drops a message whose JMSMessageID was already forwarded, and counts it (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = fakeBridge({ qos: 'exactly-once' });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.push(message('m1', { id: 'ID:1' }));
  source.push(message('m2', { id: 'ID:2' }));
  // The same message again, as a source that lost its acknowledgement would deliver it.
  source.push(message('m1', { id: 'ID:1' }));
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2']);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm1'], 'the duplicate is acknowledged, not sent');
  assert.equal(bridge.counters.duplicates, 1);
  assert.equal(bridge.counters.out, 2);
  assert.equal(bridge.counters.in, 3);
});

test('bridge - exactly-once records the id after the target confirmed and before the source ack (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const seen = new Set<string>();
  const shared: { log: string[] } = { log: [] };
  const window: DuplicateWindow = {
    has: (id) => Promise.resolve(seen.has(id)),
    add: (id) => {
      shared.log.push(`record ${id}`);
      seen.add(id);
      return Promise.resolve();
    },
  };
  const { bridge, source, log } = fakeBridge({ qos: 'exactly-once' }, { duplicateWindow: window });
  cleanup(() => bridge.stop());
  shared.log = log;
  await bridge.start();
  source.push(message('m1', { id: 'ID:1' }));
  await idle();
  assert.deepEqual(log, ['receive m1', 'send m1', 'record ID:1', 'ack m1']);
});

test('bridge - exactly-once queues a redelivered copy behind its original instead of sending both (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = fakeBridge({ qos: 'exactly-once', ordering: 'none', concurrency: 4 });
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  source.push(message('m1', { id: 'ID:1' }));
  source.push(message('m1', { id: 'ID:1' }));
  await idle();
  assert.equal(sink.hanging, 1, 'the copy waits behind the original');
  sink.confirmAll();
  await idle();
  assert.deepEqual(sink.texts, ['m1']);
  assert.equal(bridge.counters.duplicates, 1);
});

test('bridge - a selector on an external source acknowledges non-matching messages and counts them as filtered (BRG-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink } = fakeBridge({ selector: "colour = 'red'" });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.push(message('r1', { properties: { colour: 'red' } }));
  source.push(message('b1', { properties: { colour: 'blue' } }));
  source.push(message('n1'));
  source.push(message('r2', { properties: { colour: 'red' } }));
  await idle();
  assert.deepEqual(sink.texts, ['r1', 'r2']);
  assert.deepEqual(source.acked.sort(), ['b1', 'n1', 'r1', 'r2']);
  assert.equal(bridge.counters.filtered, 2);
  assert.equal(bridge.counters.out, 2);
});

test('bridge - an invalid selector is refused when the bridge is created (BRG-3, SEL-5)', () => {
  assert.throws(() => fakeBridge({ selector: 'colour = ' }), { name: 'InvalidSelectorError' });
});

test('bridge - acknowledgements go in batches of batchSize, a partial batch after batchIntervalMs (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ batchSize: 3, batchIntervalMs: 200 });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await idle();
  assert.deepEqual(sink.texts, ['m1', 'm2']);
  assert.deepEqual(source.acked, [], 'a partial batch waits');
  source.pushTexts('m3', 'm4');
  await idle();
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3'], 'a full batch goes at once');
  await clock.advance(199);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3']);
  await clock.advance(1);
  assert.deepEqual(source.acked, ['m1', 'm2', 'm3', 'm4'], 'the rest after the interval');
});

test('bridge - acknowledgements queued while a flush is settling go together in the next flush, not one round trip each', async (context) => {
  const cleanup = teardown(context);
  const clock = new FakeClock();
  const source = new CommittingSource(new FakeSource(clock));
  const sink = new FakeSink(clock);
  const bridge = new Bridge(
    { name: 'b1', source, sink, batchSize: 100, batchIntervalMs: 1_000, maxInFlight: 10 },
    { clock },
  );
  cleanup(() => bridge.stop());
  sink.hangAll();
  await bridge.start();
  source.inner.pushTexts(...Array.from({ length: 10 }, (_, i) => `m${i + 1}`));
  await idle();
  for (let i = 0; i < 10; i++) {
    sink.confirmAll();
    await idle();
  }
  assert.equal(sink.texts.length, 10);
  // The reader, out of capacity, flushed m1 at once; m2..m10 were confirmed while m1's commit was under way.
  assert.deepEqual(source.rounds, [['m1']]);
  source.commit();
  await idle();
  assert.deepEqual(source.rounds, [['m1'], ['m2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10']]);
  source.commit();
  await idle();
  assert.deepEqual(source.inner.acked, ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10']);
  assert.equal(bridge.counters.inFlight, 0);
});
