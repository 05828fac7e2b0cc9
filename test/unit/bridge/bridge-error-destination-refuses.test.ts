/** An error destination that refuses a parked message as poison (too large for it as well). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeSink, fakeBridge, idle, message } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

test('bridge - a message the error destination refuses as poison too stalls its unit with both reasons, kept for resume (DLV-3, DLV-9)', async (context) => {
  const cleanup = teardown(context);
  const base = fakeBridge();
  const errors = new FakeSink(base.clock, base.log, 'dead-letter');
  const { bridge, source, sink, clock, logger } = fakeBridge({
    ordering: 'key',
    concurrency: 2,
    errorDestination: errors,
  });
  cleanup(() => bridge.stop());
  sink.poisoned.add('big');
  errors.poisoned.add('big');
  await bridge.start();
  source.push(message('big', { group: 'g1' }));
  source.push(message('m2', { group: 'g1' }));
  source.push(message('m3', { group: 'g2' }));
  await clock.advance(60_000);
  assert.equal(bridge.status, 'failed');
  assert.equal(errors.attempts.length, 1, 'not retried against the error destination');
  assert.deepEqual(sink.texts, ['m3'], 'other units go on');
  assert.deepEqual(source.acked, ['m3']);
  assert.equal(
    source.settlements.some((s) => s.text === 'big'),
    false,
    'kept unsettled: nothing lost',
  );
  assert.match(
    bridge.counters.lastError!.message,
    /^Error: poison: PoisonMessageError: 'big' can never be delivered; the error destination refuses it too: PoisonMessageError: 'big' can never be delivered$/,
  );
  assert.ok(logger.at('error').some((m) => /the error destination refuses it as poison too/.test(m)));
  errors.poisoned.delete('big');
  await bridge.resume();
  await idle();
  assert.deepEqual(errors.texts, ['big']);
  assert.deepEqual(sink.texts, ['m3', 'm2']);
  assert.equal(bridge.status, 'connected');
});
