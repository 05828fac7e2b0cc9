import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, InternalSink, InternalSource } from '../../../src/bridge/index.js';
import { DeliveryMode, Queue, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { settle } from '../../helpers/fake-clock.js';
import { teardown } from '../../helpers/teardown.js';
import { idle } from './fakes.js';

const signal = () => new AbortController().signal;

test('internal sink - a batch is written in one store commit, each message settled on its own', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const sink = new InternalSink({ engine: t.engine, destination: 'queue://out' });
  cleanup(() => sink.close());
  await sink.connect(signal());
  const batch = ['m1', 'm2', 'm3', 'm4', 'm5'].map((text) => new TextMessage(text));
  for (const m of batch) m.setJMSDeliveryMode(DeliveryMode.PERSISTENT);
  const before = t.store.commits;
  const results = await sink.sendBatch(batch, signal());
  assert.deepEqual(
    results,
    batch.map(() => ({ ok: true })),
  );
  assert.equal(t.store.commits - before, 1, 'one group commit for the whole batch');
  const consumer = t.connect().createSession().createConsumer(new Queue('out'));
  const texts: string[] = [];
  for (let m = await consumer.receiveNoWait(); m; m = await consumer.receiveNoWait())
    texts.push((m as TextMessage).getText() ?? '');
  assert.deepEqual(texts, ['m1', 'm2', 'm3', 'm4', 'm5']);
});

test('internal sink - a batch on a closed sink fails every message as not connected', async () => {
  const t = testEngine();
  try {
    const sink = new InternalSink({ engine: t.engine, destination: 'queue://out' });
    const results = await sink.sendBatch([new TextMessage('m1'), new TextMessage('m2')], signal());
    assert.equal(results.length, 2);
    for (const result of results) {
      assert.equal(result.ok, false);
      if (!result.ok) assert.equal(result.error.name, 'NotConnectedError');
    }
  } finally {
    await t.close();
  }
});

test('internal sink - a batch ended by its signal while a full queue holds it back: what went in is ok, the rest fail with the reason (DLV-7)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('out', { messagesMaximum: 2 });
  const sink = new InternalSink({ engine: t.engine, destination: 'queue://out' });
  cleanup(() => sink.close());
  await sink.connect(signal());
  const stop = new AbortController();
  const sending = sink.sendBatch(
    ['m1', 'm2', 'm3', 'm4'].map((text) => new TextMessage(text)),
    stop.signal,
  );
  await settle();
  assert.equal(t.engine.blockedSends, 2, 'm3 and m4 wait for room');
  const reason = new Error('bridge stopping');
  stop.abort(reason);
  const results = await sending;
  assert.deepEqual(results.slice(0, 2), [{ ok: true }, { ok: true }]);
  assert.deepEqual(results.slice(2), [
    { ok: false, error: reason },
    { ok: false, error: reason },
  ]);
});

test('bridge - internal queue to internal queue in batches: every message, in order, counted', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const producer = t.connect().createSession().createProducer(new Queue('in'));
  for (let n = 1; n <= 20; n++) await producer.send(new TextMessage(`m${n}`));
  const bridge = new Bridge(
    {
      name: 'internal-batches',
      source: new InternalSource({ engine: t.engine, destination: 'queue://in' }),
      sink: new InternalSink({ engine: t.engine, destination: 'queue://out' }),
      sendBatch: { maxMessages: 8 },
    },
    { clock: t.clock },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  for (let i = 0; i < 10 && bridge.counters.out < 20; i++) await idle();
  assert.equal(bridge.counters.out, 20);
  const consumer = t.connect().createSession().createConsumer(new Queue('out'));
  const texts: string[] = [];
  for (let m = await consumer.receiveNoWait(); m; m = await consumer.receiveNoWait())
    texts.push((m as TextMessage).getText() ?? '');
  assert.deepEqual(
    texts,
    Array.from({ length: 20 }, (_, i) => `m${i + 1}`),
  );
});

test('internal source - receiveBatch waits for one, then takes what is ready, up to max', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const producer = t.connect().createSession().createProducer(new Queue('in'));
  for (let n = 1; n <= 5; n++) await producer.send(new TextMessage(`m${n}`));
  const source = new InternalSource({ engine: t.engine, destination: 'queue://in' });
  cleanup(() => source.close());
  await source.connect(signal());
  const first = await source.receiveBatch(3, signal());
  assert.deepEqual(
    first.map((d) => (d.message as TextMessage).getText()),
    ['m1', 'm2', 'm3'],
  );
  for (const delivery of first) await delivery.settle({ kind: 'ack' });
  const rest = await source.receiveBatch(10, signal());
  assert.deepEqual(
    rest.map((d) => (d.message as TextMessage).getText()),
    ['m4', 'm5'],
  );
  for (const delivery of rest) await delivery.settle({ kind: 'ack' });
  await idle();
  assert.equal(t.engine.destinationStatistics(new Queue('in')).messagesCurrent, 0);
});
