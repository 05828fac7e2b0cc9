import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statusWithReason } from '../../../src/admin/bridge-control.js';
import { bridgeTable } from '../../../src/cli/bridge-commands.js';

const since = '2026-01-01T00:00:00.000Z';

test('cli bridge table - a status with a reason is followed by the reason and what happened, then the last error', () => {
  const [, stalled, misconfigured, fine] = bridgeTable([
    {
      name: 'orders',
      status: 'failed',
      statusReport: { state: 'failed', reason: 'unit-stalled', detail: 'retry limit 3 reached', since },
      counters: { in: 5, out: 4 },
      lastError: 'Error: target refused',
    },
    {
      name: 'audit',
      status: 'failed',
      statusReport: { state: 'failed', reason: 'misconfigured', detail: "no such queue 'audit'", since },
      counters: {},
    },
    { name: 'fine', status: 'connected', statusReport: { state: 'connected', since }, counters: {} },
  ]);
  assert.match(
    stalled!,
    /^orders\s+failed\s+5\s+4\s+0\s+0 {2}failed: unit-stalled \(retry limit 3 reached\) {2}last error: Error: target refused$/,
  );
  assert.match(
    misconfigured!,
    /^audit\s+failed\s+0\s+0\s+0\s+0 {2}failed: misconfigured \(no such queue 'audit'\)$/,
  );
  assert.match(fine!, /^fine\s+connected\s+0\s+0\s+0\s+0$/);
});

test('cli bridge table - the status after an action names its reason', () => {
  assert.equal(
    statusWithReason({
      status: 'retrying',
      statusReport: { state: 'retrying', reason: 'back-off', detail: 'the target asked to back off', since },
    }),
    'retrying (back-off)',
  );
  assert.equal(statusWithReason({ status: 'paused' }), 'paused');
});
