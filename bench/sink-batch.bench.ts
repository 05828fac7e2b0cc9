/**
 * Sink sends one at a time (`send`, one broker round trip per message) against `sendBatch`
 * (pipelined AMQP publishes under confirms, a window of MQTT QoS 1 publishes), same sink, same
 * broker, same 1 KB messages, in the same run. Batches of 200, as many in flight as the sink
 * takes (`maxBatchesInFlight`). Every result must be ok: a failed message fails the benchmark.
 * Needs RabbitMQ (:5672) and Mosquitto (:1883), or the URLs in AMQP_URL / MQTT_URL.
 */
import { randomUUID } from 'node:crypto';
import { connect as amqpConnect } from 'amqplib';
import type { ConnectorContext, Sink } from '../src/spi/index.js';
import { amqpConnector } from '../connectors/amqp/index.js';
import { mqttConnector } from '../connectors/mqtt/index.js';
import { printJson, printTable, target, type BenchRow } from './lib.js';
import { resolvedConfig, sendVsSendBatch } from './sink-sends.js';

const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const MQTT_URL = process.env['MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const ONE_AT_A_TIME = 1_000;
const BATCHED = 5_000;

const context: ConnectorContext = {
  name: 'bench-sink-batch',
  logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
};

function compare(label: string, sink: Sink): Promise<BenchRow[]> {
  return sendVsSendBatch(label, sink, {
    single: ONE_AT_A_TIME,
    batched: BATCHED,
    connectTimeoutMs: 10_000,
    runTimeoutMs: 120_000,
  });
}

const queue = `bench-sink-batch-${randomUUID()}`;
const amqpSink = amqpConnector.createSink!(
  resolvedConfig(amqpConnector, {
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
    resolvedConfig(mqttConnector, {
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
