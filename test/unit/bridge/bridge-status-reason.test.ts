import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointConfigurationError } from '../../../src/spi/index.js';
import { fakeBridge, idle, message } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

test('bridge status - a misconfigured endpoint is failed with reason misconfigured, its error and since when (BRG-5)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  sink.connects.error = new EndpointConfigurationError("no such exchange 'orders'");
  await bridge.start();
  assert.deepEqual(bridge.statusReport, {
    state: 'failed',
    reason: 'misconfigured',
    detail: "EndpointConfigurationError: no such exchange 'orders'",
    since: clock.now(),
  });
  await bridge.stop();
  assert.deepEqual(bridge.statusReport, { state: 'stopped', since: clock.now() });
});

test('bridge status - a unit stalled at its retry limit is failed with reason unit-stalled, not misconfigured, until resume (BRG-4)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: 1 },
  });
  cleanup(() => bridge.stop());
  sink.failNext('a1', 2);
  await bridge.start();
  source.push(message('a1'));
  await idle();
  await clock.advance(100);
  await idle();
  const report = bridge.statusReport;
  assert.equal(report.state, 'failed');
  assert.equal('reason' in report ? report.reason : undefined, 'unit-stalled');
  assert.match('detail' in report ? report.detail : '', /retry limit 1 reached after 2 deliveries/);
  assert.equal(report.since, clock.now());
  await bridge.resume();
  await idle();
  assert.deepEqual(bridge.statusReport, { state: 'connected', since: clock.now() });
});

test('bridge status - retrying says whether a message waits for its retry delay or the target asked to back off (BRG-4)', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge({ ordering: 'key', concurrency: 2 });
  cleanup(() => bridge.stop());
  await bridge.start();
  sink.failNext('a1', 1);
  source.push(message('a1', { group: 'A' }));
  await idle();
  const delayed = bridge.statusReport;
  assert.equal(delayed.state, 'retrying');
  assert.equal('reason' in delayed ? delayed.reason : undefined, 'retry-delay');
  const since = delayed.since;
  sink.backOff('b1', 1, 5_000);
  source.push(message('b1', { group: 'B' }));
  await idle();
  const backingOff = bridge.statusReport;
  assert.equal(backingOff.state, 'retrying');
  assert.equal('reason' in backingOff ? backingOff.reason : undefined, 'back-off', 'a back-off wins');
  assert.equal(backingOff.since, since, 'still retrying since the first wait');
  await clock.advance(5_000);
  await idle();
  assert.equal(bridge.status, 'connected');
});

test('bridge status - a lost connection is reconnecting with reason connection-lost, naming the side', async (context) => {
  const cleanup = teardown(context);
  const { bridge, source, sink, clock } = fakeBridge();
  cleanup(() => bridge.stop());
  await bridge.start();
  sink.drop();
  sink.connects.failures = 5;
  source.pushTexts('m1');
  await idle();
  const report = bridge.statusReport;
  assert.equal(report.state, 'reconnecting');
  assert.equal('reason' in report ? report.reason : undefined, 'connection-lost');
  assert.match('detail' in report ? report.detail : '', /^target: /);
  await clock.advance(10_000);
  assert.equal(bridge.status, 'connected');
});

test('bridge status - a status change carries the report with its reason', async (context) => {
  const cleanup = teardown(context);
  const { bridge, sink } = fakeBridge();
  cleanup(() => bridge.stop());
  const reasons: (string | undefined)[] = [];
  bridge.onStatusChange(({ report }) => reasons.push('reason' in report ? report.reason : undefined));
  sink.connects.error = new EndpointConfigurationError('bad credentials');
  await bridge.start();
  await bridge.stop();
  assert.deepEqual(reasons, [undefined, 'misconfigured', undefined]);
});
