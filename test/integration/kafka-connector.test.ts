/**
 * The Kafka connector against a real broker: lossless round trips, what foreign clients see,
 * ordering, retry by rewinding, commits only past settled records, partitions in parallel, and
 * the sink's error mapping.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin, IHeaders, KafkaMessage } from 'kafkajs';
import {
  BytesMessage,
  MessageTooLargeError,
  PoisonMessageError,
  EndpointConfigurationError,
  NotConnectedError,
  TextMessage,
  messageSnapshot,
} from '../../src/spi/index.js';
import type { Delivery, EngineLogger, Message } from '../../src/spi/index.js';
import { KafkaSource, messageToRecord } from '../../connectors/kafka/index.js';
import { classifySendError } from '../../connectors/kafka/errors.js';
import { recordBatchBytes } from '../../connectors/kafka/size-limits.js';
import { kafkaBroker } from '../helpers/brokers.js';
import { kafkaTestBed } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';
import { decorate, everyBodyType } from '../unit/connectors/kafka/messages.js';

const broker = await kafkaBroker();
const TEST_TIMEOUT = 45_000;
const WAIT_MS = 20_000;

const silent: EngineLogger = { error() {}, warn() {}, info() {}, debug() {} };
const context = { name: 'kafka-it', logger: silent };

const { groups, groupId, endpoint, client, withTopic, signal, openSink, openSource } = kafkaTestBed({
  broker,
  prefix: 'kafka-it',
  context,
  waitMs: WAIT_MS,
});

function receive(source: KafkaSource, what = 'a kafka record'): Promise<Delivery> {
  return withTimeout(source.receive(signal()), WAIT_MS, what);
}

/** Produces text records `prefix-<i>` with a `seq` header to one partition, with a raw producer. */
async function produce(topic: string, count: number, partition = 0, prefix = 'm'): Promise<void> {
  const producer = client().producer();
  await producer.connect();
  try {
    for (let start = 0; start < count; start += 500) {
      const messages = [];
      for (let i = start; i < Math.min(count, start + 500); i++)
        messages.push({ value: `${prefix}-${i}`, partition, headers: { seq: String(i) } });
      await producer.send({ topic, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

function bodyOf(delivery: Delivery): string {
  const message = delivery.message;
  assert.ok(message instanceof BytesMessage, `a foreign record is a bytes message, not ${message.bodyType}`);
  return Buffer.from(message.getBodyBytes()).toString('utf8');
}

async function committed(admin: Admin, groupId: string, topic: string): Promise<Map<number, string>> {
  const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
  return new Map((offsets?.partitions ?? []).map((p) => [p.partition, p.offset]));
}

/** Reads records of `topic` with a plain kafkajs consumer, as a foreign application would. */
async function readForeign(topic: string, count: number): Promise<KafkaMessage[]> {
  const consumer = client().consumer({
    groupId: groupId('foreign'),
    sessionTimeout: 6000,
    heartbeatInterval: 500,
  });
  const records: KafkaMessage[] = [];
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await withTimeout(
      new Promise<void>((resolve) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            records.push(message);
            if (records.length === count) resolve();
            return Promise.resolve();
          },
        });
      }),
      WAIT_MS,
      `${count} records read by a foreign consumer`,
    );
  } finally {
    await consumer.disconnect();
  }
  return records;
}

function header(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  return value === undefined ? undefined : String(value);
}

test(
  'kafka connector - every body type, header and typed property comes back identical (BRG-6)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const sent = everyBodyType(topic);
      const sink = await openSink(endpoint(topic));
      try {
        for (const [, message] of sent) await sink.send(message, signal());
      } finally {
        await sink.close();
      }
      const source = await openSource(endpoint(topic));
      try {
        for (const [name, original] of sent) {
          const delivery = await receive(source, name);
          const back = delivery.message;
          assert.equal(back.constructor, original.constructor, name);
          assert.deepEqual(messageSnapshot(back), messageSnapshot(original), name);
          assert.equal(back.getJMSRedelivered(), false, name);
          assert.equal(back.getLongProperty('maxLong'), 9223372036854775807n, name);
          assert.equal(delivery.orderingKey, `${topic}/0`);
          await delivery.settle({ kind: 'ack' });
        }
      } finally {
        await source.close();
      }
    });
  },
);

test(
  'kafka connector - a foreign kafkajs consumer sees natural header values, the key and the timestamp (BRG-6)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const message = decorate(new TextMessage('hello kafka'), 'ID:foreign-1');
      const sink = await openSink(endpoint(topic));
      try {
        await sink.send(message, signal());
      } finally {
        await sink.close();
      }
      const [record] = await readForeign(topic, 1);
      assert.ok(record);
      assert.equal(record.value?.toString('utf8'), 'hello kafka');
      assert.equal(record.key?.toString('utf8'), 'group-1', 'keyed by JMSXGroupID by default');
      assert.equal(record.timestamp, '1700000000123');
      assert.equal(header(record.headers, 'JMSMessageID'), 'ID:foreign-1');
      assert.equal(header(record.headers, 'JMSPriority'), '7');
      assert.equal(header(record.headers, 'JMSDeliveryMode'), 'NON_PERSISTENT');
      assert.equal(header(record.headers, 'JMSReplyTo'), 'queue://replies');
      assert.equal(header(record.headers, 'maxLong'), '9223372036854775807');
      assert.equal(header(record.headers, 'd'), String(Math.PI));
      assert.equal(header(record.headers, 'flag'), 'true');
      assert.equal(header(record.headers, 'str'), 'a:b,c=d ünï 😀');
      assert.equal(header(record.headers, 'jms.bodyType'), 'text');
      assert.match(header(record.headers, 'jms.types') ?? '', /maxLong:long/);
    });
  },
);

test(
  'kafka connector - a record from a foreign producer reads as bytes with string properties and a stable id (BRG-6)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      await produce(topic, 1, 0, 'foreign');
      const source = await openSource(endpoint(topic, { keyProperty: 'kafkaKey' }));
      try {
        const delivery = await receive(source);
        assert.equal(bodyOf(delivery), 'foreign-0');
        assert.equal(delivery.message.getStringProperty('seq'), '0');
        assert.equal(delivery.message.getJMSMessageID(), `ID:kafka:${topic}:0:0`);
        assert.ok(delivery.message.getJMSTimestamp() > 0);
        assert.equal(delivery.message.propertyExists('kafkaKey'), false, 'the record had no key');
        await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
    });
  },
);

test(
  'kafka connector - 1,000 messages keep their order within a partition and are all committed (BRG-2, ORD-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic, admin) => {
      const count = 1000;
      const sink = await openSink(endpoint(topic));
      try {
        for (let i = 0; i < count; i++) {
          const message = new TextMessage(`m-${i}`);
          message.setIntProperty('seq', i);
          await sink.send(message, signal());
        }
      } finally {
        await sink.close();
      }
      const config = endpoint(topic);
      const source = await openSource(config);
      const pending: Array<Promise<void>> = [];
      try {
        for (let i = 0; i < count; i++) {
          const delivery = await receive(source, `message ${i}`);
          assert.equal(delivery.message.getIntProperty('seq'), i);
          pending.push(delivery.settle({ kind: 'ack' }));
        }
        await Promise.all(pending);
      } finally {
        await source.close();
      }
      assert.equal((await committed(admin, config.groupId!, topic)).get(0), String(count));
    });
  },
);

test(
  'kafka connector - a retry redelivers that record and every later one, in order (ORD-3, BRG-4)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic, admin) => {
      await produce(topic, 10);
      const config = endpoint(topic);
      const source = await openSource(config);
      try {
        const first = [];
        for (let i = 0; i < 4; i++) first.push(await receive(source));
        assert.deepEqual(first.map(bodyOf), ['m-0', 'm-1', 'm-2', 'm-3']);
        await first[0]!.settle({ kind: 'ack' });
        await first[1]!.settle({ kind: 'ack' });
        await first[2]!.settle({ kind: 'retry' });
        const again = await receive(source, 'the retried record');
        assert.equal(bodyOf(again), 'm-2');
        assert.equal(again.message.getJMSRedelivered(), true);
        // The copy of m-3 handed out before the retry is stale: settling it changes nothing.
        await first[3]!.settle({ kind: 'retry' });
        const rest = [again];
        for (let i = 3; i < 10; i++) rest.push(await receive(source, `m-${i} after the retry`));
        assert.deepEqual(rest.map(bodyOf), ['m-2', 'm-3', 'm-4', 'm-5', 'm-6', 'm-7', 'm-8', 'm-9']);
        assert.equal(rest[1]!.message.getJMSRedelivered(), true, 'm-3 was handed out before');
        assert.equal(rest[2]!.message.getJMSRedelivered(), false, 'm-4 was not');
        for (const delivery of rest) await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
      assert.equal((await committed(admin, config.groupId!, topic)).get(0), '10');
    });
  },
);

test(
  'kafka connector - offsets are committed only up to the first unsettled record; a restart delivers it again (BRG-2, PER-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic, admin) => {
      await produce(topic, 10);
      const config = endpoint(topic);
      let source = await openSource(config);
      try {
        const deliveries = [];
        for (let i = 0; i < 10; i++) deliveries.push(await receive(source));
        for (const [i, delivery] of deliveries.entries()) if (i !== 4) await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
      assert.equal((await committed(admin, config.groupId!, topic)).get(0), '4');
      source = await openSource(config);
      try {
        const again = [];
        for (let i = 4; i < 10; i++) again.push(await receive(source, `m-${i} after the restart`));
        assert.deepEqual(again.map(bodyOf), ['m-4', 'm-5', 'm-6', 'm-7', 'm-8', 'm-9']);
        for (const delivery of again) await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
      assert.equal((await committed(admin, config.groupId!, topic)).get(0), '10');
    });
  },
);

test(
  'kafka connector - the sink keys records by a property, so equal keys share a partition (BRG-1)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(3, async (topic) => {
      const sink = await openSink(endpoint(topic, { key: { from: 'property', name: 'customer' } }));
      try {
        for (let i = 0; i < 12; i++) {
          const message = new TextMessage(`order-${i}`);
          message.setStringProperty('customer', `c-${i % 3}`);
          await sink.send(message, signal());
        }
      } finally {
        await sink.close();
      }
      const source = await openSource(endpoint(topic));
      const partitionOf = new Map<string, Set<string>>();
      try {
        for (let i = 0; i < 12; i++) {
          const delivery = await receive(source);
          const customer = delivery.message.getStringProperty('customer')!;
          const partitions = partitionOf.get(customer) ?? new Set<string>();
          partitions.add(delivery.orderingKey!);
          partitionOf.set(customer, partitions);
          await delivery.settle({ kind: 'ack' });
        }
      } finally {
        await source.close();
      }
      assert.equal(partitionOf.size, 3);
      for (const [customer, partitions] of partitionOf) assert.equal(partitions.size, 1, customer);
      const [record] = (await readForeign(topic, 12)).filter((r) => r.value?.toString() === 'order-4');
      assert.equal(record?.key?.toString(), 'c-1');
    });
  },
);

test(
  'kafka connector - a retry rewinds only its own partition: the others go on (ORD-4, BRG-4)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(3, async (topic) => {
      for (const partition of [0, 1, 2]) await produce(topic, 3, partition, `p${partition}`);
      const source = await openSource(endpoint(topic));
      try {
        const byPartition = new Map<string, Delivery[]>();
        for (let i = 0; i < 9; i++) {
          const delivery = await receive(source);
          const list = byPartition.get(delivery.orderingKey!) ?? [];
          list.push(delivery);
          byPartition.set(delivery.orderingKey!, list);
        }
        for (const partition of [0, 1, 2])
          assert.deepEqual(byPartition.get(`${topic}/${partition}`)?.map(bodyOf), [
            `p${partition}-0`,
            `p${partition}-1`,
            `p${partition}-2`,
          ]);
        const p0 = byPartition.get(`${topic}/0`)!;
        await p0[0]!.settle({ kind: 'retry' });
        for (const key of [`${topic}/1`, `${topic}/2`])
          for (const delivery of byPartition.get(key)!) await delivery.settle({ kind: 'ack' });
        // New records on the other partitions come once, whatever the retried partition does.
        await produce(topic, 1, 1, 'late1');
        await produce(topic, 1, 2, 'late2');
        const next: Delivery[] = [];
        for (let i = 0; i < 5; i++) next.push(await receive(source));
        const late = next.filter((d) => d.orderingKey !== `${topic}/0`);
        assert.deepEqual(late.map(bodyOf).sort(), ['late1-0', 'late2-0']);
        const again = next.filter((d) => d.orderingKey === `${topic}/0`);
        assert.deepEqual(again.map(bodyOf), ['p0-0', 'p0-1', 'p0-2']);
        for (const delivery of next) await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
    });
  },
);

test(
  'kafka connector - a rebalance keeps the partition that stays: no duplicates there, no failed receive (BRG-5, BRG-7)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(2, async (topic) => {
      for (const partition of [0, 1]) await produce(topic, 3, partition, `p${partition}`);
      const config = endpoint(topic);
      const first = await openSource(config);
      let second: KafkaSource | undefined;
      try {
        const before: Delivery[] = [];
        for (let i = 0; i < 6; i++) before.push(await receive(first));
        // Only the head of each partition is settled: the group has committed offset 1 for both.
        for (const delivery of before)
          if (bodyOf(delivery).endsWith('-0')) await delivery.settle({ kind: 'ack' });
        second = await openSource(config); // joins the group: it rebalances, one partition each
        for (const partition of [0, 1]) await produce(topic, 1, partition, `late${partition}`);
        const kept = await receive(first, 'the next record of the partition the first member kept');
        assert.match(bodyOf(kept), /^late[01]-0$/, 'no earlier record of the kept partition comes again');
        const keptKey = kept.orderingKey!;
        const lostKey = keptKey === `${topic}/0` ? `${topic}/1` : `${topic}/0`;
        const lost = lostKey.endsWith('/0') ? 'p0' : 'p1';
        const taken = [await receive(second), await receive(second), await receive(second)];
        assert.deepEqual(
          taken.map(bodyOf),
          [`${lost}-1`, `${lost}-2`, `late${lost.slice(1)}-0`],
          'the new owner starts at the committed offset',
        );
        // The first member's copies of the lost partition are stale: settling them does nothing.
        for (const delivery of before.filter((d) => d.orderingKey === lostKey && !bodyOf(d).endsWith('-0')))
          await delivery.settle({ kind: 'ack' });
        const keptBefore = before.filter((d) => d.orderingKey === keptKey && !bodyOf(d).endsWith('-0'));
        for (const delivery of [...keptBefore, kept, ...taken]) await delivery.settle({ kind: 'ack' });
      } finally {
        await second?.close();
        await first.close();
      }
      await assert.rejects(first.receive(signal()), NotConnectedError);
    });
  },
);

test(
  "kafka connector - the sink counts a record's size as the broker does: one at the topic's max.message.bytes goes, one byte more is refused before sending, as the broker would (DLV-9)",
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    const limit = 10_000;
    await withTopic(
      1,
      async (topic) => {
        const config = endpoint(topic);
        const record = (message: Message) => messageToRecord(message, { key: config.key });
        let size = 9_000;
        while (recordBatchBytes(record(new BytesMessage(new Uint8Array(size)))) < limit) size++;
        const atLimit = new BytesMessage(new Uint8Array(size).fill(1));
        const over = new BytesMessage(new Uint8Array(size + 1).fill(2));
        assert.equal(recordBatchBytes(record(atLimit)), limit);
        const sink = await openSink(config);
        try {
          await sink.send(atLimit, signal());
          await assert.rejects(
            sink.send(over, signal()),
            (error: unknown) =>
              error instanceof MessageTooLargeError &&
              error.size === limit + 1 &&
              error.limit === limit &&
              error.message ===
                `message (no id) is too large: ${limit + 1} bytes, over the limit of ${limit} bytes of kafka topic '${topic}' (max.message.bytes)`,
          );
          await sink.send(new TextMessage('small'), signal()); // the sink still works
        } finally {
          await sink.close();
        }
        // The broker itself refuses the same record, so the sink's count is the broker's.
        const producer = client().producer();
        await producer.connect();
        try {
          await assert.rejects(
            producer.send({ topic, messages: [record(over)] }),
            (error: unknown) => classifySendError(error, topic) instanceof PoisonMessageError,
          );
        } finally {
          await producer.disconnect();
        }
      },
      [{ name: 'max.message.bytes', value: String(limit) }],
    );
  },
);

test(
  "kafka connector - for a topic not created yet the sink holds records to the brokers' message.max.bytes (DLV-9)",
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    const missing = uniqueName('t-kafka-it-later');
    const sink = await openSink(endpoint(missing, { allowAutoTopicCreation: true }));
    try {
      await assert.rejects(
        sink.send(new BytesMessage(new Uint8Array(2_000_000)), signal()),
        (error: unknown) =>
          error instanceof MessageTooLargeError &&
          error.limitSource === 'the kafka brokers (message.max.bytes)',
      );
    } finally {
      await sink.close();
      const admin = client().admin();
      await admin.connect();
      await admin.deleteTopics({ topics: [missing] }).catch(() => undefined);
      await admin.disconnect();
    }
  },
);

test(
  'kafka connector - a missing topic is a configuration error, not created behind the operator (BRG-5)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    const missing = uniqueName('t-kafka-it-missing');
    const sink = await openSink(endpoint(missing, { retries: 1 }));
    try {
      await assert.rejects(sink.send(new TextMessage('x'), signal()), EndpointConfigurationError);
    } finally {
      await sink.close();
    }
    const source = new KafkaSource(endpoint(missing, { retries: 1 }), context);
    try {
      await assert.rejects(source.connect(signal()), EndpointConfigurationError);
    } finally {
      await source.close();
    }
  },
);

test(
  'kafka connector - createTopic creates a missing topic at connect with its partitions and configs, and leaves an existing one alone',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    const topic = uniqueName('t-kafka-it-created');
    const admin = client().admin();
    await admin.connect();
    try {
      const created = { partitions: 3, replicationFactor: 1, configs: { 'retention.ms': 3600000 } };
      const sink = await openSink(endpoint(topic, { createTopic: created }));
      try {
        await sink.send(new TextMessage('to a created topic'), signal());
      } finally {
        await sink.close();
      }
      // Another endpoint asking for other settings: the topic exists, so nothing changes.
      const source = await openSource(endpoint(topic, { createTopic: { partitions: 1 } }));
      try {
        assert.equal(((await receive(source)).message as TextMessage).getText(), 'to a created topic');
      } finally {
        await source.close();
      }
      const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
      assert.equal(metadata?.partitions.length, 3);
      const { resources } = await admin.describeConfigs({
        resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }],
        includeSynonyms: false,
      });
      assert.equal(resources[0]?.configEntries[0]?.configValue, '3600000');
    } finally {
      await admin.deleteGroups([...groups]).catch(() => undefined);
      groups.clear();
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  },
);

test(
  'kafka connector - a transactional sink commits each message before send resolves (BRG-2)',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      const sink = await openSink(endpoint(topic, { transactionalId: uniqueName('tx-kafka-it') }));
      const sent: Message[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          const message = decorate(new TextMessage(`tx-${i}`), `ID:tx-${i}`);
          sent.push(message);
          await sink.send(message, signal());
        }
      } finally {
        await sink.close();
      }
      const source = await openSource(endpoint(topic));
      try {
        for (const original of sent) {
          const delivery = await receive(source);
          assert.deepEqual(messageSnapshot(delivery.message), messageSnapshot(original));
          await delivery.settle({ kind: 'ack' });
        }
      } finally {
        await source.close();
      }
    });
  },
);

test(
  'kafka connector - the backlog counts records not yet handed out, read-ahead and behind the high watermark',
  { skip: broker.skip, timeout: TEST_TIMEOUT },
  async () => {
    await withTopic(1, async (topic) => {
      await produce(topic, 10);
      const source = await openSource(endpoint(topic, { prefetch: 3 }));
      try {
        const first = await receive(source);
        assert.equal(source.backlog(), 9, 'ten records, one handed out; at most three read ahead');
        await first.settle({ kind: 'ack' });
        for (let i = 1; i < 10; i++) await (await receive(source)).settle({ kind: 'ack' });
        assert.equal(source.backlog(), 0);
        await produce(topic, 5);
        const next = await receive(source);
        assert.equal(bodyOf(next), 'm-0', 'the second batch of records');
        assert.equal(source.backlog(), 4);
        await next.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
      assert.equal(source.backlog(), undefined, 'a closed source does not know');
    });
  },
);
