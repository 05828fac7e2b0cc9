import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { parseConfig } from '../../../src/config/load-config.js';
import { Gateway, silentGatewayLogger } from '../../../src/gateway/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { statusChanges, until } from '../../helpers/until.js';

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.json() };
}

/**
 * A gateway with a healthy bridge and one, `broken`, whose source queue is deleted and which is
 * then restarted: it cannot open the queue (autoCreateDestinations is off), an operator must act.
 */
async function gatewayWithFailedBridge(t: TestContext, readiness: 'required' | 'ignored') {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0));
  const { config } = parseConfig(
    [
      'store: { memory: true }',
      'engine: { autoCreateDestinations: false }',
      'destinations:',
      '  queues: [{ name: in }, { name: out }, { name: gone }]',
      'bridges:',
      '  - name: healthy',
      '    source: { type: jms, destination: queue://in }',
      '    target: { type: jms, destination: queue://out }',
      '  - name: broken',
      `    readiness: ${readiness}`,
      '    autoStart: false',
      '    source: { type: jms, destination: queue://gone }',
      '    target: { type: jms, destination: queue://out }',
    ].join('\n'),
    'gw.yaml',
    { registry: builtinRegistry, env: {} },
  );
  const gateway = await Gateway.start(config, silentGatewayLogger, { clock, adminPort: 0 });
  t.after(() => gateway.stop(5_000));
  const admin = gateway.adminUrl!;
  await until(() => gateway.bridge('healthy')?.status === 'connected', 'healthy connected', [
    statusChanges(gateway.bridge('healthy')),
  ]);
  const before = await get(`${admin}/ready`);
  await fetch(`${admin}/destinations/queue/gone`, { method: 'DELETE' });
  await fetch(`${admin}/bridges/broken/restart`, { method: 'POST' });
  await until(() => gateway.bridge('broken')?.status === 'failed', 'broken failed', [
    statusChanges(gateway.bridge('broken')),
  ]);
  return { gateway, admin, before, clock };
}

test('health - /ready answers 503 naming each failed bridge, its reason and since when', async (t) => {
  const { admin, before, clock } = await gatewayWithFailedBridge(t, 'required');
  assert.deepEqual(before, { status: 200, body: { ready: true, failed: [] } });
  const ready = await get(`${admin}/ready`);
  assert.equal(ready.status, 503);
  const body = ready.body as { ready: boolean; failed: { reason: string }[] };
  assert.equal(body.ready, false);
  assert.equal(body.failed.length, 1);
  assert.match(body.failed[0]!.reason, /queue:\/\/gone/);
  assert.deepEqual(body.failed, [
    {
      bridge: 'broken',
      status: 'failed',
      statusReason: 'misconfigured',
      reason: body.failed[0]!.reason,
      since: new Date(clock.now()).toISOString(),
      readiness: 'required',
    },
  ]);
  // The process itself is fine: /health is about it, not about the bridges.
  assert.equal((await get(`${admin}/health`)).status, 200);
});

test("health - a bridge with readiness 'ignored' is listed by /ready but does not make it 503", async (t) => {
  const { admin } = await gatewayWithFailedBridge(t, 'ignored');
  const ready = await get(`${admin}/ready`);
  assert.equal(ready.status, 200);
  const body = ready.body as { ready: boolean; failed: { bridge: string; readiness: string }[] };
  assert.equal(body.ready, true);
  assert.deepEqual(
    body.failed.map(({ bridge, readiness }) => ({ bridge, readiness })),
    [{ bridge: 'broken', readiness: 'ignored' }],
  );
});

test('health - /ready is 200 again once the failed bridge runs', async (t) => {
  const { gateway, admin } = await gatewayWithFailedBridge(t, 'required');
  await gateway.engine.createQueue('gone');
  await fetch(`${admin}/bridges/broken/restart`, { method: 'POST' });
  await until(async () => (await get(`${admin}/ready`)).status === 200, '/ready 200', [
    statusChanges(gateway.bridge('broken')),
  ]);
  assert.deepEqual((await get(`${admin}/ready`)).body, { ready: true, failed: [] });
});

test('health - /bridges gives each bridge its status report: the failed one misconfigured, with detail and since when', async (t) => {
  const { admin, clock } = await gatewayWithFailedBridge(t, 'required');
  const bridges = (await get(`${admin}/bridges`)).body as {
    name: string;
    status: string;
    statusReport: { state: string; reason?: string; detail?: string; since: string };
  }[];
  const broken = bridges.find((b) => b.name === 'broken')!;
  assert.equal(broken.status, 'failed');
  assert.equal(broken.statusReport.state, 'failed');
  assert.equal(broken.statusReport.reason, 'misconfigured');
  assert.match(broken.statusReport.detail!, /queue:\/\/gone/);
  assert.equal(broken.statusReport.since, new Date(clock.now()).toISOString());
  const healthy = bridges.find((b) => b.name === 'healthy')!;
  assert.equal(healthy.statusReport.state, 'connected');
  assert.equal(healthy.statusReport.reason, undefined);
});
