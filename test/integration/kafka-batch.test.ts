/**
 * The Kafka connector's batches against a real broker: a batch cut into many produce requests
 * arrives complete and in order per key, an oversize message fails alone, a transactional batch
 * is one transaction (committed, or aborted and invisible to read_committed readers), a fenced
 * producer fails cleanly, and the source hands over what it has read ahead in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import {
  BytesMessage,
  MessageTooLargeError,
  NotConnectedError,
  PoisonMessageError,
  TextMessage,
} from '../../src/spi/index.js';
import type { ConnectorContext, Delivery, EngineLogger, Message, SendResult } from '../../src/spi/index.js';
import { KafkaSource } from '../../connectors/kafka/index.js';
import { kafkaBroker } from '../helpers/brokers.js';
import { kafkaTestBed } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';

const broker = await kafkaBroker();
const TEST_TIMEOUT = 60_000;
const WAIT_MS = 20_000;

const silent: EngineLogger = { error() {}, warn() {}, info() {}, debug() {} };
const context: ConnectorContext = { name: 'kafka-batch-it', logger: silent };

const { groupId, endpoint, client, withTopic, signal, openSink } = kafkaTestBed({
  broker,
  prefix: 'kafka-batch',
  context,
  waitMs: WAIT_MS,
});

function text(body: string, id: string, properties: Record<string, string | number> = {}): Message {
  const message = new TextMessage(body);
  message.setJMSMessageID(id);
  for (const [name, value] of Object.entries(properties)) {
    if (typeof value === 'number') message.setIntProperty(name, value);
    else message.setStringProperty(name, value);
  }
  return message;
}

function assertAllOk(results: readonly SendResult[], count: number): void {
  assert.equal(results.length, count);
  const failed = results.flatMap((result, i) => (result.ok ? [] : [`${i}: ${result.error.message}`]));
  assert.deepEqual(failed, []);
}

/**
 * Reads `topic` with a plain kafkajs consumer until a record whose value is `last` arrived, and
 * returns every record before it (so nothing is missed: the sink's `last` was written after them,
 * to the same partition); with `count`, until that many records arrived.
 */
async function readUntil(
  topic: string,
  last: string,
  options: { readUncommitted?: boolean; count?: number } = {},
): Promise<KafkaMessage[]> {
  const consumer = client().consumer({
    groupId: groupId('reader'),
    sessionTimeout: 6000,
    heartbeatInterval: 500,
    readUncommitted: options.readUncommitted ?? false,
  });
  const records: KafkaMessage[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await withTimeout(
      new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            if (message.value?.toString('utf8') === last) resolve();
            else records.push(message);
            if (records.length === options.count) resolve();
            return Promise.resolve();
          },
        });
      }),
      WAIT_MS,
      `records of ${topic} up to '${last}'`,
    );
  } finally {
    await consumer.disconnect();
  }
  return records;
}

function headerOf(record: KafkaMessage, name: string): string | undefined {
  const value = record.headers?.[name];
  return value === undefined ? undefined : String(value);
}

async function endOffsets(topic: string): Promise<number[]> {
  const admin = client().admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.sort((a, b) => a.partition - b.partition).map((p) => Number(p.high));
  } finally {
    await admin.disconnect();
  }
}

test(
  'kafka batch - 1,000 keyed messages in one batch, cut into requests of 20 KB, arrive complete and in order per key (ORD-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(3, async (topic) => {
      const count = 1000;
      const config = endpoint(topic, { maxRequestBytes: 20_000, key: { from: 'property', name: 'k' } });
      const batch = Array.from({ length: count }, (_, i) =>
        text(`m-${i}-${'x'.repeat(100)}`, `ID:batch-${i}`, { k: `key-${i % 7}`, seq: i }),
      );
      const sink = await openSink(config);
      try {
        assertAllOk(await sink.sendBatch(batch, signal()), count);
      } finally {
        await sink.close();
      }
      // Three partitions are read in parallel: read until all are there, then check no more is.
      const records = await readUntil(topic, 'end', { count });
      assert.equal(records.length, count);
      const seqsByKey = new Map<string, number[]>();
      for (const record of records) {
        const key = record.key!.toString('utf8');
        seqsByKey.set(key, [...(seqsByKey.get(key) ?? []), Number(headerOf(record, 'seq'))]);
      }
      assert.equal(seqsByKey.size, 7);
      for (const [key, seqs] of seqsByKey) {
        const k = Number(key.slice('key-'.length));
        const expected = Array.from({ length: count }, (_, i) => i).filter((i) => i % 7 === k);
        assert.deepEqual(seqs, expected, `${key} in order, none missing`);
      }
      const ends = await endOffsets(topic);
      assert.equal(
        ends.reduce((a, b) => a + b, 0),
        count,
        'each record once',
      );
    });
  },
);

test(
  'kafka batch - batches handed over while one is on the wire all arrive, in order (ORD-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const sink = await openSink(endpoint(topic, { maxRequestBytes: 5_000 }));
      const batches = Array.from({ length: 5 }, (_, b) =>
        Array.from({ length: 100 }, (_, i) => text(`m-${b * 100 + i}`, `ID:c-${b * 100 + i}`)),
      );
      try {
        const results = await Promise.all(batches.map((batch) => sink.sendBatch(batch, signal())));
        for (const result of results) assertAllOk(result, 100);
        await sink.send(text('end', 'ID:end'), signal());
      } finally {
        await sink.close();
      }
      const records = await readUntil(topic, 'end');
      assert.deepEqual(
        records.map((record) => record.value?.toString('utf8')),
        Array.from({ length: 500 }, (_, i) => `m-${i}`),
      );
    });
  },
);

test(
  'kafka batch - at exactly-once, batches handed over at once all commit, in order, none split over transactions (BRG-2, ORD-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const bridge = uniqueName('batch-eo-many');
      const sink = await openSink(endpoint(topic), { name: bridge, logger: silent, qos: 'exactly-once' });
      const batches = Array.from({ length: 5 }, (_, b) =>
        Array.from({ length: 100 }, (_, i) => text(`m-${b * 100 + i}`, `ID:eo-many-${b * 100 + i}`)),
      );
      try {
        const results = await Promise.all(batches.map((batch) => sink.sendBatch(batch, signal())));
        for (const result of results) assertAllOk(result, 100);
        await sink.send(text('end', 'ID:end'), signal());
        const records = await readUntil(topic, 'end');
        assert.deepEqual(
          records.map((record) => record.value?.toString('utf8')),
          Array.from({ length: 500 }, (_, i) => `m-${i}`),
        );
        // Batches may share a transaction, a batch never takes two: at most one marker per batch.
        const [end] = await endOffsets(topic);
        assert.ok(end! >= 500 + 1 + 2 && end! <= 500 + 5 + 2, `end offset ${end}`);
      } finally {
        await sink.close();
      }
    });
  },
);

test(
  'kafka batch - a failed request fails every message of it and of the batches behind it, and the sink needs a reconnect (ORD-3)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const sink = await openSink(endpoint(topic, { retries: 1, maxRequestBytes: 2_000 }));
      try {
        const admin = client().admin();
        await admin.connect();
        await admin.deleteTopics({ topics: [topic] });
        await admin.disconnect();
        const batches = [0, 1].map((b) =>
          Array.from({ length: 30 }, (_, i) => text(`m-${b}-${i}`, `ID:f-${b}-${i}`)),
        );
        const results = await Promise.all(batches.map((batch) => sink.sendBatch(batch, signal())));
        const failed = results.flat().filter((result) => !result.ok).length;
        assert.equal(failed, 60, 'nothing of either batch is reported sent');
        await assert.rejects(sink.sendBatch([text('later', 'ID:later')], signal()), NotConnectedError);
      } finally {
        await sink.close();
      }
    });
  },
);

test(
  'kafka batch - one message over the topic limit fails alone as poison, the rest of its batch arrives (DLV-9)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(
      1,
      async (topic) => {
        const sink = await openSink(endpoint(topic));
        const batch = Array.from({ length: 21 }, (_, i) =>
          i === 10 ? text('x'.repeat(20_000), 'ID:big') : text(`m-${i}`, `ID:small-${i}`),
        );
        let results: readonly SendResult[];
        try {
          results = await sink.sendBatch(batch, signal());
          await sink.send(text('end', 'ID:end'), signal());
        } finally {
          await sink.close();
        }
        const big = results[10]!;
        assert.ok(!big.ok && big.error instanceof MessageTooLargeError, 'the big one is too large');
        assertAllOk(
          results.filter((_, i) => i !== 10),
          20,
        );
        const records = await readUntil(topic, 'end');
        assert.deepEqual(
          records.map((record) => record.value?.toString('utf8')),
          Array.from({ length: 21 }, (_, i) => `m-${i}`).filter((_, i) => i !== 10),
        );
      },
      [{ name: 'max.message.bytes', value: '10000' }],
    );
  },
);

test(
  'kafka batch - at exactly-once a batch of 300 is one transaction: 300 records and one commit marker (BRG-2)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const bridge = uniqueName('batch-eo');
      const sink = await openSink(endpoint(topic), { name: bridge, logger: silent, qos: 'exactly-once' });
      const batch = Array.from({ length: 300 }, (_, i) => text(`m-${i}`, `ID:eo-${i}`));
      try {
        assertAllOk(await sink.sendBatch(batch, signal()), 300);
        await sink.send(text('end', 'ID:end'), signal());
        // A read_committed reader sees 'end' only once its transaction's marker is written, and
        // the batch's before it: every offset of the topic is then in place.
        const records = await readUntil(topic, 'end');
        assert.equal(records.length, 300);
        // The batch's 300 records and one commit marker, then 'end' and its marker; one
        // transaction per message would have taken 600 offsets for the batch.
        assert.deepEqual(await endOffsets(topic), [300 + 1 + 2]);
        const seen = await sink.forwardedIds({ maxEntries: 1000 }, signal());
        assert.equal(seen?.length, 301, 'every record is marked as this sink sent it');
      } finally {
        await sink.close();
      }
    });
  },
);

test(
  'kafka batch - a transaction the broker refuses part of is aborted, invisible to read_committed, and its good records go one by one (BRG-2, DLV-9)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(
      1,
      async (topic) => {
        const bridge = uniqueName('batch-abort');
        // With compression the sink leaves the size check to the broker; small requests put the
        // small records in a request of their own, written before the big one is refused.
        const config = endpoint(topic, { compression: 'gzip', maxRequestBytes: 2_000 });
        const sink = await openSink(config, { name: bridge, logger: silent, qos: 'exactly-once' });
        const big = new BytesMessage();
        big.writeBytes(randomBytes(40_000));
        big.setJMSMessageID('ID:big');
        const batch = [text('m-0', 'ID:m-0'), text('m-1', 'ID:m-1'), big];
        let results: readonly SendResult[];
        try {
          results = await sink.sendBatch(batch, signal());
          await sink.send(text('end', 'ID:end'), signal());
        } finally {
          await sink.close();
        }
        assertAllOk(results.slice(0, 2), 2);
        const last = results[2]!;
        assert.ok(!last.ok && last.error instanceof PoisonMessageError, 'the big record is poison');
        const committed = await readUntil(topic, 'end');
        assert.deepEqual(
          committed.map((record) => record.value?.toString('utf8')),
          ['m-0', 'm-1'],
          'read_committed sees each good record once: the aborted copies are not there',
        );
        const everything = await readUntil(topic, 'end', { readUncommitted: true });
        assert.deepEqual(
          everything.map((record) => record.value?.toString('utf8')),
          ['m-0', 'm-1', 'm-0', 'm-1'],
          'the first attempt was written and aborted',
        );
      },
      [{ name: 'max.message.bytes', value: '20000' }],
    );
  },
);

test(
  'kafka batch - a fenced transactional sink fails its batch as not connected and sends nothing more (BRG-2)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const bridge = uniqueName('batch-fenced');
      const eo: ConnectorContext = { name: bridge, logger: silent, qos: 'exactly-once' };
      const first = await openSink(endpoint(topic), eo);
      const second = await openSink(endpoint(topic), eo);
      try {
        const results = await first.sendBatch(
          [text('old-0', 'ID:old-0'), text('old-1', 'ID:old-1')],
          signal(),
        );
        for (const result of results)
          assert.ok(!result.ok && result.error instanceof NotConnectedError, 'fenced: not connected');
        await assert.rejects(first.sendBatch([text('old-2', 'ID:old-2')], signal()), NotConnectedError);
        assertAllOk(await second.sendBatch([text('new-0', 'ID:new-0')], signal()), 1);
        await second.send(text('end', 'ID:end'), signal());
      } finally {
        await first.close();
        await second.close();
      }
      const records = await readUntil(topic, 'end');
      assert.deepEqual(
        records.map((record) => record.value?.toString('utf8')),
        ['new-0'],
      );
    });
  },
);

test(
  'kafka batch - receiveBatch hands over what is read ahead, in receive order, at most max at a time (ORD-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const producer = client().producer();
      await producer.connect();
      try {
        await producer.send({
          topic,
          messages: Array.from({ length: 50 }, (_, i) => ({ value: `r-${i}` })),
        });
      } finally {
        await producer.disconnect();
      }
      const source = new KafkaSource(endpoint(topic, { prefetch: 100 }), context);
      await source.connect(signal());
      const received: Delivery[] = [];
      try {
        while (received.length < 50) {
          const batch = await withTimeout(source.receiveBatch(20, signal()), WAIT_MS, 'a batch');
          assert.ok(batch.length >= 1 && batch.length <= 20, `batch of ${batch.length}`);
          received.push(...batch);
        }
        assert.deepEqual(
          received.map((d) => Buffer.from((d.message as BytesMessage).getBodyBytes()).toString('utf8')),
          Array.from({ length: 50 }, (_, i) => `r-${i}`),
        );
        for (const delivery of received) await delivery.settle({ kind: 'ack' });
        await assert.rejects(source.receiveBatch(0, signal()), RangeError);
      } finally {
        await source.close();
      }
    });
  },
);
