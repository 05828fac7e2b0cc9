import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StatusChange } from '../../../src/bridge/index.js';
import { StatusTracker } from '../../../src/bridge/status-tracker.js';
import { silentLogger } from '../../../src/jms/logger.js';
import { FakeClock } from '../../helpers/fake-clock.js';

function tracker() {
  const clock = new FakeClock();
  const status = new StatusTracker({ bridge: 'b', clock, logger: silentLogger });
  const changes: StatusChange[] = [];
  status.onChange((change) => changes.push(change));
  return { clock, status, changes };
}

test('status tracker - the life of a bridge: stopped, connecting, connected, paused, stopped', () => {
  const { status, changes } = tracker();
  assert.equal(status.status, 'stopped');
  status.starting();
  assert.equal(status.status, 'connecting');
  status.running();
  status.pausedReading();
  assert.equal(status.paused, true);
  status.resumedReading();
  status.stopping();
  assert.equal(status.status, 'connected', 'a stop shows only when it ends');
  status.stopped();
  assert.deepEqual(
    changes.map(({ previous, status: next }) => `${previous}>${next}`),
    [
      'stopped>connecting',
      'connecting>connected',
      'connected>paused',
      'paused>connected',
      'connected>stopped',
    ],
  );
});

test('status tracker - misconfigured and a stalled unit are both failed, each with its own reason and detail', () => {
  const { status, clock } = tracker();
  status.starting();
  status.running();
  const unit = {};
  status.unitStalled(unit, 'retry limit 3 reached');
  assert.deepEqual(status.report, {
    state: 'failed',
    reason: 'unit-stalled',
    detail: 'retry limit 3 reached',
    since: clock.now(),
  });
  status.unitUnstalled(unit);
  assert.equal(status.status, 'connected');
  status.failed('misconfigured', 'no such queue');
  assert.equal(status.fatal, true);
  assert.deepEqual(status.report, {
    state: 'failed',
    reason: 'misconfigured',
    detail: 'no such queue',
    since: clock.now(),
  });
  status.starting();
  assert.equal(status.fatal, false, 'a start forgets the failure');
});

test('status tracker - which fact wins: failed over connecting, reconnecting over a stalled unit, paused over retrying', () => {
  const { status } = tracker();
  status.starting();
  status.failed('misconfigured', 'bad credentials');
  assert.equal(status.status, 'failed');
  status.starting();
  status.running();
  const unit = {};
  status.unitWaiting(unit, 'retry-delay');
  status.pausedReading();
  assert.equal(status.status, 'paused');
  status.unitStalled({}, 'kept');
  status.connectionLost('sink', 'Error: gone');
  assert.deepEqual(
    { state: status.report.state, detail: 'detail' in status.report ? status.report.detail : undefined },
    { state: 'reconnecting', detail: 'target: Error: gone' },
  );
  status.connectionEnded('sink');
  assert.equal(status.status, 'failed');
});

test('status tracker - retrying: the error destination first, then a back-off, then a retry delay; since kept while the reason changes', async () => {
  const { status, clock, changes } = tracker();
  status.starting();
  status.running();
  const [a, b] = [{}, {}];
  status.unitWaiting(a, 'retry-delay');
  const since = clock.now();
  await clock.advance(50);
  status.unitWaiting(b, 'back-off');
  assert.deepEqual(status.report, {
    state: 'retrying',
    reason: 'back-off',
    detail: '2 ordering units wait: the target asked to back off',
    since,
  });
  status.errorDestinationRetrying();
  assert.equal('reason' in status.report ? status.report.reason : undefined, 'error-destination-unavailable');
  status.errorDestinationRetried();
  status.unitWaitOver(b);
  assert.equal('reason' in status.report ? status.report.reason : undefined, 'retry-delay');
  assert.equal(
    changes.filter((c) => c.status === 'retrying').length,
    1,
    'listeners hear of a change of state',
  );
  status.unitWaitCancelled(a);
  assert.equal(status.status, 'retrying', 'a cancelled wait shows when the stop ends');
  status.stopped();
  assert.equal(status.status, 'stopped');
});

test('status tracker - a listener that throws does not stop the others', () => {
  const { status, changes } = tracker();
  status.onChange(() => {
    throw new Error('bad listener');
  });
  const seen: string[] = [];
  status.onChange((change) => seen.push(change.status));
  status.starting();
  assert.deepEqual(seen, ['connecting']);
  assert.equal(changes.length, 1);
});
