/**
 * Sends that end in a lost connection: a message that makes the target drop the connection on
 * every send is parked after its retry limit, while a broker outage parks nobody.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_DELIVERY_COUNT, ERROR_REASON } from '../../../src/bridge/index.js';
import type { BridgeConfig } from '../../../src/bridge/index.js';
import { FakeSink, fakeBridge, idle } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

const range = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i + 1}`);

test('bridge - a message whose every send ends in a lost connection is parked after the retry limit, and the next message of its unit flows (BRG-4, BRG-5, ORD-3)', async (context) => {
  const cleanup = teardown(context);
  const base = fakeBridge();
  const errors = new FakeSink(base.clock, base.log, 'dead-letter');
  const { bridge, source, sink, clock } = fakeBridge({
    ordering: 'bridge',
    retry: { delay: { kind: 'fixed', ms: 1_000 }, limit: 2 },
    errorDestination: errors,
  });
  cleanup(() => bridge.stop());
  sink.connectionKillers.add('m1');
  await bridge.start();
  source.pushTexts('m1', 'm2', 'm3');
  await clock.advance(20_000);
  await idle();
  assert.deepEqual(errors.texts, ['m1']);
  const moved = errors.sent[0]!;
  assert.equal(
    moved.getStringProperty(ERROR_REASON),
    'retry limit 2 reached after 3 deliveries: the connection to the target was lost during each of its 4 sends (NotConnectedError: fake sink connection lost)',
  );
  assert.equal(moved.getIntProperty(ERROR_DELIVERY_COUNT), 3);
  const m1 = sink.attempts.filter((a) => a.text === 'm1');
  assert.deepEqual(
    m1.map((a) => a.deliveryCount),
    [1, 1, 2, 3],
    'the first loss is not counted; each later one is, like a failed send',
  );
  assert.ok(
    m1[3]!.at - m1[2]!.at >= 1_000,
    'counted losses wait for the retry delay, not only for the reconnect',
  );
  assert.deepEqual(sink.texts, ['m2', 'm3'], 'the unit goes on once m1 is parked');
  assert.deepEqual(
    source.settlements.map((s) => [s.text, s.kind]),
    [
      ['m1', 'reject'],
      ['m2', 'ack'],
      ['m3', 'ack'],
    ],
  );
  assert.equal(bridge.counters.retried, 2);
  assert.equal(bridge.counters.deadLettered, 1);
  assert.equal(bridge.status, 'connected');
});

test('bridge - with no error destination a message that keeps losing the connection stalls its unit instead of being resent for ever (BRG-4, DLV-3)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({
    ordering: 'bridge',
    retry: { delay: { kind: 'fixed', ms: 1_000 }, limit: 1 },
  });
  cleanup(() => bridge.stop());
  sink.connectionKillers.add('m1');
  await bridge.start();
  source.pushTexts('m1', 'm2');
  await clock.advance(20_000);
  const sends = sink.attempts.length;
  assert.equal(sends, 3, 'the first send, the lone resend, and one retry');
  assert.equal(bridge.status, 'failed');
  await clock.advance(60_000);
  assert.equal(sink.attempts.length, sends, 'no more sends until resume()');
  sink.connectionKillers.delete('m1');
  await bridge.resume();
  await clock.advance(5_000);
  assert.deepEqual(sink.texts, ['m1', 'm2']);
});

for (const setting of [
  { ordering: 'none', concurrency: 4 },
  { ordering: 'bridge', concurrency: 1 },
] satisfies Partial<BridgeConfig>[]) {
  test(`bridge - a broker outage with many messages parks none of them, even at retry limit 0 (ordering ${setting.ordering}, concurrency ${setting.concurrency}) (BRG-5, BRG-4)`, async (context) => {
    const cleanup = teardown(context);
    const base = fakeBridge();
    const errors = new FakeSink(base.clock, base.log, 'dead-letter');
    const { bridge, source, sink, clock } = fakeBridge({
      ...setting,
      retry: { delay: { kind: 'fixed', ms: 1_000 }, limit: 0 },
      errorDestination: errors,
    });
    cleanup(() => bridge.stop());
    const texts = range('m', 20);
    await bridge.start();
    sink.hangAll();
    source.pushTexts(...texts);
    await idle();
    assert.equal(sink.hanging, setting.concurrency);
    // The broker goes away with sends in flight and stays away for a while.
    sink.connects.failures = 4;
    sink.drop();
    await idle();
    assert.equal(bridge.status, 'reconnecting');
    sink.behaviour = () => 'ok';
    await clock.advance(10_000);
    assert.deepEqual(errors.texts, [], 'nothing parked');
    assert.deepEqual([...sink.texts].sort(), [...texts].sort());
    if (setting.ordering === 'bridge') assert.deepEqual(sink.texts, texts, 'order kept (ORD-3)');
    assert.equal(source.acked.length, 20);
    assert.equal(bridge.counters.deadLettered, 0);
    assert.equal(bridge.counters.retried, 0, 'a lost connection is not a failed delivery by itself');
    assert.equal(bridge.status, 'connected');
  });
}

test('bridge - messages in flight when the connection was lost are sent again one at a time, then the bridge sends in parallel again (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'none', concurrency: 3 });
  cleanup(() => bridge.stop());
  await bridge.start();
  sink.hangAll();
  source.pushTexts('a', 'b', 'c', 'd', 'e', 'f');
  await idle();
  assert.equal(sink.hanging, 3);
  sink.drop();
  await clock.advance(100);
  assert.equal(sink.connected, true);
  for (const text of ['a', 'b', 'c']) {
    assert.equal(sink.hanging, 1, `only the resend of '${text}' is on the wire`);
    assert.equal(sink.attempts.at(-1)!.text, text);
    sink.confirmAll();
    await idle();
  }
  assert.equal(sink.hanging, 3, 'd, e and f go together');
  sink.confirmAll();
  await idle();
  assert.deepEqual(sink.texts, ['a', 'b', 'c', 'd', 'e', 'f']);
});
