/**
 * Sink sends one at a time (`send`, one broker round trip per message) against `sendBatch`
 * (pipelined AMQP publishes under confirms, a window of MQTT QoS 1 publishes), same sink, same
 * broker, same 1 KB messages, in the same run. Batches of 200, as many in flight as the sink
 * takes (`maxBatchesInFlight`). Every result must be ok: a failed message fails the benchmark.
 * Needs RabbitMQ (:5672) and Mosquitto (:1883), or the URLs in AMQP_URL / MQTT_URL.
 */
import { randomUUID } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import {
  resolveConfig,
  TextMessage,
  type ConnectorContext,
  type ConnectorDefinition,
  type Sink,
} from '../src/spi/index.js';
import { amqpConnector } from '../connectors/amqp/index.js';
import { mqttConnector } from '../connectors/mqtt/index.js';
import { best, printJson, printTable, target, type BenchRow } from './lib.js';

const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const MQTT_URL = process.env['MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const ONE_AT_A_TIME = 1_000;
const BATCHED = 5_000;
const BATCH = 200;
const BODY = 'x'.repeat(1024);

const context: ConnectorContext = {
  name: 'bench-sink-batch',
  logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
};

function config<C>(definition: ConnectorDefinition<C>, fields: Record<string, unknown>): C {
  const { config, errors } = resolveConfig(definition.config, fields, 'endpoint');
  if (config === undefined) throw new Error(errors.map((error) => error.message).join('; '));
  return config;
}

function messages(count: number): TextMessage[] {
  return Array.from({ length: count }, () => new TextMessage(BODY));
}

async function oneAtATime(sink: Sink, count: number): Promise<void> {
  const signal = AbortSignal.timeout(120_000);
  for (const message of messages(count)) await sink.send(message, signal);
}

/** Hands batches over keeping up to `maxBatchesInFlight` in flight, as the bridge runtime does. */
async function batched(sink: Sink, count: number): Promise<void> {
  const signal = AbortSignal.timeout(120_000);
  const all = messages(count);
  const inFlight = new Set<Promise<void>>();
  for (let start = 0; start < count; start += BATCH) {
    while (inFlight.size >= (sink.maxBatchesInFlight ?? 1)) await Promise.race(inFlight);
    const sending: Promise<void> = sink.sendBatch!(all.slice(start, start + BATCH), signal).then(
      (results) => {
        inFlight.delete(sending);
        const failed = results.find((result) => !result.ok);
        if (failed !== undefined && !failed.ok) throw failed.error;
      },
    );
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
}

async function compare(label: string, sink: Sink): Promise<BenchRow[]> {
  await sink.connect(AbortSignal.timeout(10_000));
  try {
    const single = await best(`${label} send`, ONE_AT_A_TIME, () => oneAtATime(sink, ONE_AT_A_TIME), 2);
    const batch = await best(`${label} sendBatch`, BATCHED, () => batched(sink, BATCHED), 2);
    return [single, { ...batch, speedup: Math.round((batch.rate / single.rate) * 10) / 10 }];
  } finally {
    await sink.close();
  }
}

const queue = `bench-sink-batch-${randomUUID()}`;
const amqpSink = amqpConnector.createSink!(
  config(amqpConnector, {
    url: AMQP_URL,
    queue,
    declare: { queues: [{ name: queue, durable: false, arguments: { 'x-max-length': 1000 } }] },
  }),
  context,
);
const rows: BenchRow[] = [];
try {
  rows.push(...(await compare('amqp confirms', amqpSink)));
} finally {
  const connection = await amqpConnect(AMQP_URL);
  await (await connection.createChannel()).deleteQueue(queue);
  await connection.close();
}
for (const protocolVersion of [5, 4] as const) {
  const mqttSink = mqttConnector.createSink!(
    config(mqttConnector, {
      url: MQTT_URL,
      topic: `bench/sink-batch/${randomUUID()}`,
      qos: 1,
      protocolVersion,
      mqtt311Format: 'body',
    }),
    context,
  );
  rows.push(...(await compare(`mqtt ${protocolVersion === 5 ? '5' : '3.1.1'} qos 1`, mqttSink)));
}

printTable('sink sends: one at a time vs sendBatch (1 KB messages, batches of 200)', rows);
printJson('sink-batch', { rows });
for (const row of rows.filter((one) => one['speedup'] !== undefined))
  target(`${row.name} at least 2x send`, Number(row['speedup']) >= 2);
