/**
 * Exactly-once to a real Kafka (BRG-2): a transactional sink marks its records, lists what it
 * committed (read_committed, within the window's bounds), and a bridge rebuilds its duplicate
 * window from that, so a message whose transaction committed before a crash is not sent again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Bridge, MemoryDuplicateWindow } from '../../src/bridge/index.js';
import { TextMessage } from '../../src/spi/index.js';
import type { ConnectorContext, EngineLogger } from '../../src/spi/index.js';
import { KafkaSink } from '../../connectors/kafka/index.js';
import type { KafkaConfig } from '../../connectors/kafka/index.js';
import { connected, kafkaBroker } from '../helpers/brokers.js';
import { kafkaClient, kafkaEndpoint, withKafkaTopic } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { FakeSource } from '../unit/bridge/fakes.js';
import { FakeClock } from '../helpers/fake-clock.js';

const broker = await kafkaBroker();
const TEST_TIMEOUT = 60_000;
const WAIT_MS = 20_000;

const silent: EngineLogger = { error() {}, warn() {}, info() {}, debug() {} };

function endpoint(topic: string, overrides: Record<string, unknown> = {}): KafkaConfig {
  return kafkaEndpoint(connected(broker).brokers, topic, overrides);
}

/** An exactly-once bridge's sink context: the transactional id defaults from the bridge name. */
function exactlyOnce(bridge: string): ConnectorContext {
  return { name: bridge, logger: silent, qos: 'exactly-once' };
}

function withTopic(partitions: number, fn: (topic: string) => Promise<void>): Promise<void> {
  return withKafkaTopic({ brokers: connected(broker).brokers, prefix: 'kafka-eo', partitions }, fn);
}

function text(body: string, id: string): TextMessage {
  const message = new TextMessage(body);
  message.setJMSMessageID(id);
  return message;
}

async function sendAll(sink: KafkaSink, ids: readonly string[]): Promise<void> {
  await sink.connect(AbortSignal.timeout(WAIT_MS));
  try {
    for (const id of ids) await sink.send(text(`body of ${id}`, id), AbortSignal.timeout(WAIT_MS));
  } finally {
    await sink.close();
  }
}

test(
  'kafka sink - a transactional sink lists what it committed, newest within the window size, not what others wrote (BRG-2)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(2, async (topic) => {
      const bridge = uniqueName('eo-bridge');
      // Spread over both partitions by key.
      const config = endpoint(topic, { key: { from: 'property', name: 'k' } });
      const ids = Array.from({ length: 8 }, (_, i) => `ID:m${i}`);
      const sink = new KafkaSink(config, exactlyOnce(bridge));
      await sink.connect(AbortSignal.timeout(WAIT_MS));
      for (const [i, id] of ids.entries()) {
        const message = text(`body ${i}`, id);
        message.setStringProperty('k', `key-${i % 2}`);
        await sink.send(message, AbortSignal.timeout(WAIT_MS));
      }
      await sink.close();
      // Another bridge's records in the same topic are not this bridge's.
      await sendAll(new KafkaSink(endpoint(topic), exactlyOnce(uniqueName('other'))), ['ID:other']);
      // And a plain (non-transactional) sink cannot tell what it sent.
      const plain = new KafkaSink(endpoint(topic), { name: bridge, logger: silent });
      await plain.connect(AbortSignal.timeout(WAIT_MS));
      assert.equal(await plain.forwardedIds({ maxEntries: 10 }, AbortSignal.timeout(WAIT_MS)), undefined);
      await plain.close();

      // A transaction that was aborted never reached read_committed readers: it does not count.
      const raw = kafkaClient(connected(broker).brokers, 'kafka-eo').producer({
        transactionalId: `jms-gateway-${bridge}`,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await raw.connect();
      const aborted = await raw.transaction();
      await aborted.send({
        topic,
        messages: [
          { value: 'x', headers: { JMSMessageID: 'ID:aborted', 'jms.forwardedBy': `jms-gateway-${bridge}` } },
        ],
      });
      await aborted.abort();
      await raw.disconnect();

      // The "restarted" sink: a new producer with the same transactional id.
      const again = new KafkaSink(config, exactlyOnce(bridge));
      await again.connect(AbortSignal.timeout(WAIT_MS));
      try {
        const all = await again.forwardedIds({ maxEntries: 100 }, AbortSignal.timeout(WAIT_MS));
        assert.deepEqual(all?.map((seen) => seen.id).sort(), [...ids].sort());
        assert.ok(all.every((seen) => seen.at > Date.now() - 60_000 && seen.at <= Date.now()));
        // Window size 3: the last three messages' offsets of each partition, which hold 4..6 of
        // ours (fewer where the other bridge's or the aborted record took offsets).
        const tail = await again.forwardedIds({ maxEntries: 3 }, AbortSignal.timeout(WAIT_MS));
        assert.ok(tail!.length >= 4 && tail!.length <= 6, `got ${tail!.length} ids`);
        assert.ok(
          tail!.every((seen) => ids.slice(2).includes(seen.id)),
          'only the newest',
        );
        const later = await again.forwardedIds(
          { maxEntries: 100, notBefore: Date.now() + 60_000 },
          AbortSignal.timeout(WAIT_MS),
        );
        assert.deepEqual(later, [], 'nothing is younger than the age bound');
      } finally {
        await again.close();
      }
    });
  },
);

test(
  'bridge - exactly-once to kafka: a message committed before a crash is not sent again when the source redelivers it (BRG-2)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const name = uniqueName('eo-bridge');
      const config = endpoint(topic);
      // The earlier run: m1 reached Kafka, then the process died before anything else was recorded.
      await sendAll(new KafkaSink(config, exactlyOnce(name)), ['ID:m1']);

      // The new run: its window (in memory here, as with a store that lost the record) is empty;
      // the source delivers m1 again and then m2.
      const source = new FakeSource(new FakeClock());
      const sink = new KafkaSink(config, exactlyOnce(name));
      const bridge = new Bridge(
        { name, source, sink, qos: 'exactly-once' },
        { duplicateWindow: new MemoryDuplicateWindow() },
      );
      await bridge.start();
      try {
        source.push(text('again', 'ID:m1'));
        source.push(text('new', 'ID:m2'));
        const deadline = Date.now() + WAIT_MS;
        while (source.acked.length < 2 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 20));
        assert.deepEqual(source.acked, ['again', 'new']);
        assert.equal(bridge.counters.duplicates, 1, 'm1 was recognised from the topic');
        assert.equal(bridge.counters.out, 1, 'only m2 was sent');
      } finally {
        await bridge.stop();
      }
      const check = new KafkaSink(config, exactlyOnce(name));
      await check.connect(AbortSignal.timeout(WAIT_MS));
      const held = await check.forwardedIds({ maxEntries: 100 }, AbortSignal.timeout(WAIT_MS));
      await check.close();
      assert.deepEqual(
        held?.map((seen) => seen.id),
        ['ID:m1', 'ID:m2'],
        'each once in the topic',
      );
    });
  },
);
