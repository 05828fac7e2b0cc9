/**
 * The Kafka sink one message at a time (`send`) against `sendBatch`, at at-least-once
 * (idempotent producer, acks -1) and at exactly-once (transactional producer: a transaction per
 * `send`, one per `sendBatch`), next to a raw kafkajs producer sending the same batches with the
 * same acks, idempotence and one request in flight, in the same run. 1 KB messages, batches of
 * 200, as many batches in flight as the sink takes. Every result must be ok. Target: exactly-once
 * batches reach at least half the rate of at-least-once batches. Needs Kafka on 127.0.0.1:9092
 * (or KAFKA_BROKERS, comma-separated).
 */
import { randomUUID } from 'node:crypto';
import type { Producer } from 'kafkajs';
import { Kafka, logLevel } from '../connectors/kafka/kafkajs.js';
import type { ConnectorContext, Sink } from '../src/spi/index.js';
import { kafkaConnector } from '../connectors/kafka/index.js';
import { best, printJson, printTable, target, type BenchRow } from './lib.js';
import { BATCH, BODY, resolvedConfig, sendVsSendBatch } from './sink-sends.js';

const BROKERS = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
const ONE_AT_A_TIME = 300;
const ONE_AT_A_TIME_EXACTLY_ONCE = 100;
const BATCHED = 5_000;

const silent = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} };

function context(qos: 'at-least-once' | 'exactly-once'): ConnectorContext {
  return { name: `bench-kafka-sink-${qos}-${randomUUID()}`, logger: silent, qos };
}

/** The same batches straight through kafkajs: one `send` (or one transaction) per batch. */
async function raw(producer: Producer, topic: string, count: number, transactional: boolean): Promise<void> {
  for (let start = 0; start < count; start += BATCH) {
    const record = {
      topic,
      acks: -1,
      messages: Array.from({ length: Math.min(BATCH, count - start) }, () => ({ value: BODY })),
    };
    if (!transactional) {
      await producer.send(record);
      continue;
    }
    const transaction = await producer.transaction();
    await transaction.send(record);
    await transaction.commit();
  }
}

function sinkRows(label: string, sink: Sink, single: number): Promise<BenchRow[]> {
  return sendVsSendBatch(label, sink, {
    single,
    batched: BATCHED,
    connectTimeoutMs: 30_000,
    runTimeoutMs: 300_000,
  });
}

async function rawRow(label: string, kafka: Kafka, topic: string, transactional: boolean): Promise<BenchRow> {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    ...(transactional ? { transactionalId: `bench-raw-${randomUUID()}` } : {}),
  });
  await producer.connect();
  try {
    return await best(label, BATCHED, () => raw(producer, topic, BATCHED, transactional), 2);
  } finally {
    await producer.disconnect();
  }
}

const kafka = new Kafka({ clientId: 'bench-kafka-sink', brokers: BROKERS, logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
const topic = `bench-kafka-sink-${randomUUID()}`;
await admin.createTopics({
  topics: [
    {
      topic,
      numPartitions: 1,
      replicationFactor: 1,
      configEntries: [{ name: 'retention.bytes', value: '104857600' }],
    },
  ],
  waitForLeaders: true,
});
const rows: BenchRow[] = [];
try {
  const atLeastOnce = await sinkRows(
    'at-least-once',
    kafkaConnector.createSink!(
      resolvedConfig(kafkaConnector, { brokers: BROKERS, topic }),
      context('at-least-once'),
    ),
    ONE_AT_A_TIME,
  );
  rows.push(...atLeastOnce, await rawRow('at-least-once raw kafkajs', kafka, topic, false));
  const exactlyOnce = await sinkRows(
    'exactly-once',
    kafkaConnector.createSink!(
      resolvedConfig(kafkaConnector, { brokers: BROKERS, topic }),
      context('exactly-once'),
    ),
    ONE_AT_A_TIME_EXACTLY_ONCE,
  );
  rows.push(...exactlyOnce, await rawRow('exactly-once raw kafkajs', kafka, topic, true));
  const ratio = exactlyOnce[1]!.rate / atLeastOnce[1]!.rate;
  printTable('kafka sink: one at a time vs sendBatch vs raw kafkajs (1 KB messages, batches of 200)', rows);
  printJson('kafka-sink', { rows, exactlyOnceToAtLeastOnce: Math.round(ratio * 100) / 100 });
  target(
    `exactly-once sendBatch at least 50% of at-least-once sendBatch (${Math.round(ratio * 100)}%)`,
    ratio >= 0.5,
  );
} finally {
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
}
