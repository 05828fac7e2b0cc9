import assert from 'node:assert/strict';
import { test } from 'node:test';
import { renderMetrics } from '../../../src/admin/metrics.js';
import { Bridge, InternalSource } from '../../../src/bridge/index.js';
import { Queue, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { FakeSink, idle } from '../bridge/fakes.js';

test('metrics - each bridge exports its lag as a gauge', async () => {
  const t = testEngine();
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
  await bridge.start();
  await idle();
  const { lastError: _lastError, ...counters } = bridge.counters;
  const metrics = renderMetrics(t.engine, [{ name: bridge.name, status: bridge.status, counters }]);
  assert.match(metrics, /# TYPE jms_gateway_bridge_lag gauge/);
  assert.match(metrics, /^jms_gateway_bridge_lag\{bridge="slow"\} 3$/m);
  assert.match(metrics, /^jms_gateway_bridge_in_flight\{bridge="slow"\} 1$/m);
  sink.confirmAll();
  await bridge.stop();
  await t.close();
});
