import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { GatewayMetrics, renderMetrics } from '../../../src/admin/metrics.js';
import type { BridgeView } from '../../../src/admin/bridge-control.js';
import { Bridge, InternalSource, LatencyHistogram } from '../../../src/bridge/index.js';
import { Queue, TextMessage } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { testEngine } from '../../helpers/engine.js';
import { addOps } from '../../helpers/store-contract.js';
import { withTempDir } from '../../helpers/temp-dir.js';
import { pendingForEachCause } from '../../helpers/pending-by-cause.js';
import { FakeSink, idle } from '../bridge/fakes.js';
import { teardown } from '../../helpers/teardown.js';

test('metrics - each bridge exports its lag as a gauge', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const input = new Queue('lagging');
  const producer = t.connect().createSession().createProducer(input);
  for (const text of ['m1', 'm2', 'm3']) await producer.send(new TextMessage(text));
  const sink = new FakeSink(t.clock);
  sink.hangAll();
  const bridge = new Bridge(
    {
      name: 'slow',
      source: new InternalSource({ engine: t.engine, destination: input }),
      sink,
      maxInFlight: 1,
    },
    { clock: t.clock },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  await idle();
  const { lastError: _lastError, ...counters } = bridge.counters;
  const metrics = await renderMetrics(t.engine, [{ name: bridge.name, status: bridge.status, counters }]);
  assert.match(metrics, /# TYPE jms_gateway_bridge_lag gauge/);
  assert.match(metrics, /^jms_gateway_bridge_lag\{bridge="slow"\} 3$/m);
  assert.match(metrics, /^jms_gateway_bridge_in_flight\{bridge="slow"\} 1$/m);
  sink.confirmAll();
});

test('metrics - pending messages and bytes by cause for each destination, a sample per cause (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine({ redeliveryDelay: 5000 });
  cleanup(() => t.close());
  await pendingForEachCause(t);
  const metrics = await renderMetrics(t.engine, []);
  const sample = (name: string, cause: string) =>
    new RegExp(
      `^jms_gateway_${name}\\{destination="queue://orders",kind="queue",cause="${cause}"\\} (\\d+)$`,
      'm',
    ).exec(metrics)?.[1];
  assert.deepEqual(
    ['uncommitted', 'scheduled', 'redeliveryDelay', 'unacknowledged', 'errorDestinationFull'].map((cause) => [
      sample('destination_messages_pending_by_cause', cause),
      sample('destination_bytes_pending_by_cause', cause),
    ]),
    [
      ['1', '2'],
      ['1', '5'],
      ['0', '0'],
      ['1', '7'],
      ['0', '0'],
    ],
  );
  assert.match(
    metrics,
    /# HELP jms_gateway_destination_bytes_pending_by_cause Pending bytes by cause \(uncommitted, scheduled, redeliveryDelay, unacknowledged, errorDestinationFull\)/,
  );
  assert.match(metrics, /# TYPE jms_gateway_destination_bytes_pending_by_cause gauge/);
});

test('metrics - a bridge status with a reason is a bridge_status_reason sample beside bridge_status', async (context) => {
  const t = testEngine();
  context.after(() => t.close());
  const since = '2026-01-01T00:00:00.000Z';
  const metrics = await renderMetrics(t.engine, [
    {
      name: 'stalled',
      status: 'failed',
      statusReport: { state: 'failed', reason: 'unit-stalled', detail: 'retry limit 3 reached', since },
      counters: {},
    },
    { name: 'fine', status: 'connected', statusReport: { state: 'connected', since }, counters: {} },
  ]);
  assert.match(metrics, /^jms_gateway_bridge_status\{bridge="stalled",status="failed"\} 1$/m);
  assert.match(metrics, /# TYPE jms_gateway_bridge_status_reason gauge/);
  assert.match(
    metrics,
    /^jms_gateway_bridge_status_reason\{bridge="stalled",status="failed",reason="unit-stalled"\} 1$/m,
  );
  assert.doesNotMatch(metrics, /bridge_status_reason\{bridge="fine"/, 'no reason, no sample');
});

test('metrics - a bridge exports its send and end-to-end latency as histograms, from the target confirming', async () => {
  const t = testEngine();
  const input = new Queue('timed');
  // Sent at the clock's start; the bridge reads it 2 s later, the target confirms 40 ms after that.
  await t.connect().createSession().createProducer(input).send(new TextMessage('m1'));
  await t.clock.advance(2_000);
  const sink = new FakeSink(t.clock);
  sink.hangAll();
  const bridge = new Bridge(
    { name: 'timed', source: new InternalSource({ engine: t.engine, destination: input }), sink },
    { clock: t.clock },
  );
  await bridge.start();
  await idle();
  await t.clock.advance(40);
  sink.confirmAll();
  await idle();
  const { lastError: _lastError, ...counters } = bridge.counters;
  const metrics = await renderMetrics(t.engine, [
    { name: bridge.name, status: bridge.status, counters, latency: bridge.latency },
  ]);
  assert.match(metrics, /# TYPE jms_gateway_bridge_send_latency_seconds histogram/);
  assert.match(metrics, /^jms_gateway_bridge_send_latency_seconds_bucket\{bridge="timed",le="0\.025"\} 0$/m);
  assert.match(metrics, /^jms_gateway_bridge_send_latency_seconds_bucket\{bridge="timed",le="0\.05"\} 1$/m);
  assert.match(metrics, /^jms_gateway_bridge_send_latency_seconds_bucket\{bridge="timed",le="\+Inf"\} 1$/m);
  assert.match(metrics, /^jms_gateway_bridge_send_latency_seconds_sum\{bridge="timed"\} 0\.04$/m);
  assert.match(metrics, /^jms_gateway_bridge_end_to_end_latency_seconds_bucket\{bridge="timed",le="1"\} 0$/m);
  assert.match(
    metrics,
    /^jms_gateway_bridge_end_to_end_latency_seconds_bucket\{bridge="timed",le="2\.5"\} 1$/m,
  );
  assert.match(metrics, /^jms_gateway_bridge_end_to_end_latency_seconds_count\{bridge="timed"\} 1$/m);
  assert.match(metrics, /# HELP jms_gateway_bridge_out_total Messages the target confirmed\./);
  await bridge.stop();
  await t.close();
});

test('metrics - error destinations holding messages, what the gateway holds, build info and the Node runtime', async () => {
  const t = testEngine();
  await t.engine.createQueue('errors');
  await t.engine.createQueue('orders', { errorDestination: 'queue://errors' });
  await t.connect().createSession().createProducer(new Queue('errors')).send(new TextMessage('parked'));
  const metrics = await new GatewayMetrics(t.engine, () => [], { runtime: true }).render();
  assert.match(
    metrics,
    /^jms_gateway_error_destination_messages\{destination="queue:\/\/errors",kind="queue"\} 1$/m,
  );
  assert.doesNotMatch(metrics, /^jms_gateway_error_destination_messages\{destination="queue:\/\/orders"/m);
  assert.match(metrics, /^jms_gateway_held_messages 1$/m);
  assert.match(metrics, /^jms_gateway_build_info\{version="\d+\.\d+\.\d+[^"]*",node="v\d+\.\d+\.\d+"\} 1$/m);
  assert.match(metrics, /^# TYPE nodejs_eventloop_lag_seconds gauge$/m);
  assert.match(metrics, /^# TYPE process_cpu_seconds_total counter$/m);
  await t.close();
});

test('metrics - every metric the Grafana dashboard and the documented alerts use is exported', async () => {
  const t = testEngine();
  await t.engine.createQueue('errors');
  await t.engine.createQueue('orders', { errorDestination: 'queue://errors' });
  const latency = new LatencyHistogram();
  latency.observe(12);
  const view: BridgeView = {
    name: 'orders',
    status: 'failed',
    counters: { in: 1, out: 1, retried: 0, deadLettered: 0, dropped: 0, inFlight: 0, lag: 0 },
    latency: { send: latency.snapshot(), endToEnd: latency.snapshot() },
  };
  const metrics = await new GatewayMetrics(t.engine, () => [view], {
    runtime: true,
    storeUsage: () => ({ bytes: 1, maxBytes: 2 }),
  }).render();
  const exported = new Set([...metrics.matchAll(/^(\w+)(?:\{| )/gm)].map((m) => m[1]));
  const used = (text: string) =>
    new Set([...text.matchAll(/\b((?:jms_gateway|nodejs|process)_\w+)/g)].map((m) => m[1]!));
  const dashboard = await readFile(new URL('../../../docs/grafana-dashboard.json', import.meta.url), 'utf8');
  const operations = await readFile(new URL('../../../docs/operations.md', import.meta.url), 'utf8');
  const alerts = operations.slice(
    operations.indexOf('### Alerts to set'),
    operations.indexOf('## Replaying'),
  );
  assert.ok(used(dashboard).size > 15 && used(alerts).size > 10, 'the names are found at all');
  const missing = [...used(dashboard), ...used(alerts)].filter((name) => !exported.has(name));
  assert.deepEqual(missing, []);
  await t.close();
});

test('metrics - the room the file store takes, as its maxBytes counts it, and the bound; a closed store leaves them out', async () => {
  await withTempDir('metrics-store-', async (dir, cleanup) => {
    const t = testEngine();
    cleanup(() => t.close());
    const store = await FileStore.open({ path: dir, maxBytes: 4 * 1024 * 1024, largeBodyBytes: 1024 });
    cleanup(() => store.close());
    await store.recover();
    const metrics = new GatewayMetrics(t.engine, () => [], {
      runtime: false,
      storeUsage: () => store.usage(),
    });
    const sample = (text: string, name: string) =>
      Number(new RegExp(`^jms_gateway_${name}\\{store="file"\\} (\\d+)$`, 'm').exec(text)?.[1]);
    const before = await metrics.render();
    assert.equal(sample(before, 'store_max_bytes'), 4 * 1024 * 1024);
    assert.equal(sample(before, 'store_bytes'), store.usage().bytes);
    await store.commit(addOps('ID:1', 1, ['queue://q'], 'x'.repeat(100_000)));
    const after = await metrics.render();
    // The body file counts whole; the database grew by its row at most.
    assert.ok(sample(after, 'store_bytes') >= sample(before, 'store_bytes') + 100_000, after);
    await store.close();
    const closed = await metrics.render();
    assert.doesNotMatch(closed, /^jms_gateway_store_(max_)?bytes\{/m);

    const unbounded = await FileStore.open({ path: join(dir, 'other') });
    cleanup(() => unbounded.close());
    const text = await new GatewayMetrics(t.engine, () => [], {
      runtime: false,
      storeUsage: () => unbounded.usage(),
    }).render();
    assert.ok(sample(text, 'store_bytes') > 0);
    assert.doesNotMatch(text, /^jms_gateway_store_max_bytes\{/m);
  });
});
