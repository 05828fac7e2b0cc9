/**
 * Bridges between real brokers: AMQP→Kafka, MQTT→AMQP and Kafka→AMQP with 1 KB messages, at
 * at-least-once with ordering (one ordering unit), next to a raw pipe written with the same client
 * libraries (amqplib, mqtt, kafkajs) and the same settings: consume with manual acknowledgement
 * (MQTT: PUBACK held in `handleMessage`), forward one message at a time, wait for the target's
 * confirm (publisher confirm, acks=all idempotent producer), then acknowledge the source (Kafka:
 * offsets committed every 100 records or 20 ms, as the bridge's `batchSize`/`batchIntervalMs`).
 * The raw pipe is the practical limit, measured in the same run.
 *
 * Two measurements per pipe:
 * - throughput: a closed-loop feeder keeps at most 500 messages between source and target (Mosquitto
 *   drops QoS 1 messages beyond `max_queued_messages`, default 1000) while `THROUGHPUT_MESSAGES`
 *   go through;
 * - latency: the feeder publishes at half the raw pipe's rate, every payload carries its send time,
 *   a consumer on the target measures send→receive; added latency = bridge pXX − raw pXX.
 *
 * Targets: bridge ≥ 70% of the raw pipe's throughput; p99 added latency ≤ 5 ms at half the
 * maximum rate. Needs RabbitMQ (:5672), Mosquitto (:1883) and Kafka (:9092), or the URLs in
 * AMQP_URL / MQTT_URL / KAFKA_BROKERS.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as amqpConnect, type ChannelModel, type ConfirmChannel } from 'amqplib';
import { connectAsync, type MqttClient } from 'mqtt';
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import { Bridge } from '../src/bridge/index.js';
import { resolveConfig, type ConnectorContext, type ConnectorDefinition } from '../src/spi/index.js';
import { amqpConnector } from '../connectors/amqp/index.js';
import { mqttConnector } from '../connectors/mqtt/index.js';
import { kafkaConnector } from '../connectors/kafka/index.js';
import { printJson, printTable, target } from './lib.js';

const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const MQTT_URL = process.env['MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const KAFKA_BROKERS = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
const THROUGHPUT_MESSAGES = Number(process.env['BENCH_BRIDGE_MESSAGES'] ?? 5_000);
const LATENCY_SECONDS = 4;
const MAX_LATENCY_MESSAGES = 1_000;
const WINDOW = 500;
const PAYLOAD_BYTES = 1_024;
const RUN_TIMEOUT_MS = 120_000;
/** Feeder sends (of up to 100 messages) waiting for their confirm at once. */
const MAX_PENDING_SENDS = 10;

type Kind = 'amqp' | 'mqtt' | 'kafka';

const context = (name: string): ConnectorContext => ({
  name,
  logger: { error() {}, warn() {}, info() {}, debug() {} },
});
const kafka = new Kafka({ clientId: 'bench-bridges', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });

/** A 1 KB payload that starts with its sequence number and send time (ms, performance clock). */
function payload(seq: number): Buffer {
  const head = `${seq};${performance.now().toFixed(3)};`;
  return Buffer.from(head.padEnd(PAYLOAD_BYTES, 'x'), 'latin1');
}

function sentAt(body: Buffer): number {
  return Number(body.toString('latin1', 0, 48).split(';')[1]);
}

function config<C>(connector: ConnectorDefinition<C>, fields: Record<string, unknown>): C {
  const { config, errors } = resolveConfig(connector.config, fields, 'bench');
  if (errors.length > 0) throw new Error(errors.join('; '));
  return config!;
}

// --- brokers: fresh names, feeders and target readers ---

interface Names {
  readonly source: string;
  readonly target: string;
}

async function setUp(from: Kind, to: Kind, names: Names): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = [from === 'kafka' ? names.source : undefined, to === 'kafka' ? names.target : undefined];
    const wanted = topics.filter((t): t is string => t !== undefined);
    if (wanted.length > 0)
      await admin.createTopics({
        topics: wanted.map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })),
        waitForLeaders: true,
      });
  } finally {
    await admin.disconnect();
  }
  const connection = await amqpConnect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    if (from === 'amqp') await channel.assertQueue(names.source, { durable: false });
    if (to === 'amqp') await channel.assertQueue(names.target, { durable: false });
  } finally {
    await connection.close();
  }
}

async function tearDown(from: Kind, to: Kind, names: Names): Promise<void> {
  const connection = await amqpConnect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const [kind, queue] of [
      [from, names.source],
      [to, names.target],
    ] as const)
      if (kind === 'amqp') await channel.deleteQueue(queue);
  } finally {
    await connection.close();
  }
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = [from === 'kafka' ? names.source : '', to === 'kafka' ? names.target : ''].filter(Boolean);
    if (topics.length > 0) await admin.deleteTopics({ topics }).catch(() => undefined);
  } finally {
    await admin.disconnect();
  }
}

/** Publishes payloads to the source broker, as fast as the client takes them. */
interface Feeder {
  send(seqs: number[]): Promise<void>;
  close(): Promise<void>;
}

async function feeder(kind: Kind, name: string): Promise<Feeder> {
  if (kind === 'amqp') {
    const connection = await amqpConnect(AMQP_URL);
    const channel = await connection.createConfirmChannel();
    return {
      async send(seqs) {
        for (const seq of seqs) channel.sendToQueue(name, payload(seq), { persistent: true });
        await channel.waitForConfirms();
      },
      close: () => connection.close(),
    };
  }
  if (kind === 'mqtt') {
    const client = await connectAsync(MQTT_URL, { clientId: `bench-feed-${randomUUID()}`, clean: true });
    return {
      async send(seqs) {
        await Promise.all(seqs.map((seq) => client.publishAsync(name, payload(seq), { qos: 1 })));
      },
      close: () => client.endAsync(),
    };
  }
  const producer = kafka.producer();
  await producer.connect();
  return {
    async send(seqs) {
      await producer.send({ topic: name, acks: 1, messages: seqs.map((seq) => ({ value: payload(seq) })) });
    },
    close: () => producer.disconnect(),
  };
}

/** Reads the target broker, recording each message's latency. */
interface Reader {
  readonly latencies: number[];
  readonly seen: Set<number>;
  close(): Promise<void>;
}

async function reader(kind: Kind, name: string): Promise<Reader> {
  const latencies: number[] = [];
  const seen = new Set<number>();
  const record = (body: Buffer): void => {
    latencies.push(performance.now() - sentAt(body));
    seen.add(Number(body.toString('latin1', 0, 16).split(';')[0]));
  };
  if (kind === 'amqp') {
    const connection = await amqpConnect(AMQP_URL);
    const channel = await connection.createChannel();
    await channel.consume(name, (message) => message && record(message.content), { noAck: true });
    return { latencies, seen, close: () => connection.close() };
  }
  const consumer = kafka.consumer({ groupId: `bench-read-${randomUUID()}`, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topic: name, fromBeginning: true });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.run({
    eachMessage: ({ message }) => {
      if (message.value) record(message.value);
      return Promise.resolve();
    },
  });
  await joined;
  return { latencies, seen, close: () => consumer.disconnect() };
}

// --- the two pipes under test ---

interface Pipe {
  start(): Promise<void>;
  stop(): Promise<void>;
}

function endpointConfig(kind: Kind, name: string, role: 'source' | 'sink', id: string): unknown {
  switch (kind) {
    case 'amqp':
      return config(amqpConnector, { url: AMQP_URL, queue: name, prefetch: 10 });
    case 'mqtt':
      return config(mqttConnector, {
        url: MQTT_URL,
        topic: name,
        qos: 1,
        clean: true,
        clientId: `bench-${role}-${id}`,
      });
    case 'kafka':
      return config(kafkaConnector, {
        brokers: KAFKA_BROKERS,
        topic: name,
        groupId: `bench-${id}`,
        fromBeginning: true,
        fetchMaxWait: 20,
      });
  }
}

const CONNECTORS = { amqp: amqpConnector, mqtt: mqttConnector, kafka: kafkaConnector } as const;

function bridgePipe(from: Kind, to: Kind, names: Names): Pipe {
  const id = randomUUID().slice(0, 8);
  const name = `bench-${from}-${to}-${id}`;
  const source = (CONNECTORS[from] as ConnectorDefinition).createSource!(
    endpointConfig(from, names.source, 'source', id),
    context(name),
  );
  const sink = (CONNECTORS[to] as ConnectorDefinition).createSink!(
    endpointConfig(to, names.target, 'sink', id),
    context(name),
  );
  const bridge = new Bridge({
    name,
    source,
    sink,
    qos: 'at-least-once',
    ordering: 'bridge',
    ...(from === 'kafka' ? { batchSize: 100, batchIntervalMs: 20 } : { batchSize: 1 }),
  });
  return { start: () => bridge.start(), stop: () => bridge.stop() };
}

/** Sends one message to the target and resolves on its confirm. */
type RawSend = (body: Buffer) => Promise<void>;

async function rawTarget(kind: Kind, name: string): Promise<{ send: RawSend; close(): Promise<void> }> {
  if (kind === 'amqp') {
    const connection: ChannelModel = await amqpConnect(AMQP_URL);
    const channel: ConfirmChannel = await connection.createConfirmChannel();
    return {
      send: (body) =>
        new Promise((resolve, reject) => {
          channel.sendToQueue(name, body, { persistent: true, mandatory: true }, (error) =>
            error ? reject(new Error(String(error))) : resolve(),
          );
        }),
      close: () => connection.close(),
    };
  }
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return {
    send: async (body) => {
      await producer.send({ topic: name, acks: -1, messages: [{ value: body }] });
    },
    close: () => producer.disconnect(),
  };
}

function rawPipe(from: Kind, to: Kind, names: Names): Pipe {
  const closers: Array<() => Promise<void>> = [];
  return {
    async start() {
      const out = await rawTarget(to, names.target);
      closers.push(() => out.close());
      // One at a time, in order: a chain, as the bridge's single ordering unit.
      let chain = Promise.resolve();
      const forward = (body: Buffer, ack: () => void): void => {
        chain = chain.then(() => out.send(body)).then(ack);
      };
      if (from === 'amqp') {
        const connection = await amqpConnect(AMQP_URL);
        closers.unshift(() => connection.close());
        const channel = await connection.createChannel();
        await channel.prefetch(10);
        await channel.consume(names.source, (message) => {
          if (message) forward(message.content, () => channel.ack(message));
        });
      } else if (from === 'mqtt') {
        const client: MqttClient = await connectAsync(MQTT_URL, {
          clientId: `bench-raw-${randomUUID()}`,
          clean: true,
        });
        closers.unshift(() => client.endAsync());
        // PUBACK only after the target confirmed: mqtt.js sends it when the callback is called.
        client.handleMessage = (packet, callback) => forward(packet.payload as Buffer, () => callback());
        await client.subscribeAsync(names.source, { qos: 1 });
      } else {
        const consumer: Consumer = kafka.consumer({
          groupId: `bench-raw-${randomUUID()}`,
          maxWaitTimeInMs: 20,
        });
        closers.unshift(() => consumer.disconnect());
        await consumer.connect();
        await consumer.subscribe({ topic: names.source, fromBeginning: true });
        await consumer.run({
          autoCommitThreshold: 100,
          autoCommitInterval: 20,
          eachMessage: ({ message }) =>
            new Promise<void>((resolve) => forward(message.value ?? Buffer.alloc(0), resolve)),
        });
      }
    },
    async stop() {
      for (const close of closers) await close().catch(() => {});
    },
  };
}

// --- runs ---

interface RunResult {
  readonly rate: number;
  readonly p50: number;
  readonly p99: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * Moves `count` messages through `pipe`: closed loop (window) when `rate` is undefined, else paced
 * at `rate` messages/s. Returns the throughput and the send→receive latencies.
 */
async function run(
  from: Kind,
  to: Kind,
  makePipe: (names: Names) => Pipe,
  count: number,
  rate?: number,
): Promise<RunResult> {
  const names = { source: `bench-src-${randomUUID()}`, target: `bench-dst-${randomUUID()}` };
  await setUp(from, to, names);
  const out = await reader(to, names.target);
  const pipe = makePipe(names);
  const feed = await feeder(from, names.source);
  try {
    await pipe.start();
    const started = performance.now();
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    let sent = 0;
    const pending = new Set<Promise<void>>();
    while (sent < count) {
      if (Date.now() > deadline) throw new Error(`${from}→${to}: timed out after ${sent} sent`);
      let due: number;
      if (rate === undefined) due = Math.min(count, out.seen.size + WINDOW) - sent;
      else due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * rate) + 1) - sent;
      if (due > 0 && pending.size < MAX_PENDING_SENDS) {
        const seqs = Array.from({ length: Math.min(due, 100) }, (_, i) => sent + i);
        sent += seqs.length;
        // Not awaited one by one: a paced feeder must not fall behind its rate waiting for confirms.
        const sending = feed.send(seqs).finally(() => pending.delete(sending));
        pending.add(sending);
      } else await sleep(rate === undefined ? 2 : 1);
    }
    await Promise.all(pending);
    while (out.seen.size < count) {
      if (Date.now() > deadline)
        throw new Error(`${from}→${to}: timed out, ${out.seen.size} of ${count} arrived`);
      await sleep(2);
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      rate: Math.round(count / seconds),
      p50: percentile(out.latencies, 50),
      p99: percentile(out.latencies, 99),
    };
  } finally {
    await feed.close().catch(() => {});
    await pipe.stop().catch(() => {});
    await out.close().catch(() => {});
    await tearDown(from, to, names).catch(() => {});
  }
}

/** `BENCH_BRIDGE_PIPES=kafka-amqp,mqtt-amqp` runs only those pipes; default all three. */
const ALL_PIPES: Array<[Kind, Kind]> = [
  ['amqp', 'kafka'],
  ['mqtt', 'amqp'],
  ['kafka', 'amqp'],
];
const wantedPipes = process.env['BENCH_BRIDGE_PIPES']?.split(',').map((pipe) => pipe.trim());
const PIPES = ALL_PIPES.filter(
  ([from, to]) => wantedPipes === undefined || wantedPipes.includes(`${from}-${to}`),
);

const rows: Record<string, string | number>[] = [];
const results: Record<string, unknown> = {};
const checks: Array<[string, boolean]> = [];
for (const [from, to] of PIPES) {
  const pipe = `${from}→${to}`;
  const rawMax = await run(from, to, (names) => rawPipe(from, to, names), THROUGHPUT_MESSAGES);
  const bridgeMax = await run(from, to, (names) => bridgePipe(from, to, names), THROUGHPUT_MESSAGES);
  const halfRate = Math.max(1, Math.round(rawMax.rate / 2));
  const latencyCount = Math.max(100, Math.min(MAX_LATENCY_MESSAGES, halfRate * LATENCY_SECONDS));
  const rawHalf = await run(from, to, (names) => rawPipe(from, to, names), latencyCount, halfRate);
  const bridgeHalf = await run(from, to, (names) => bridgePipe(from, to, names), latencyCount, halfRate);
  const ratio = bridgeMax.rate / rawMax.rate;
  const addedP50 = bridgeHalf.p50 - rawHalf.p50;
  const addedP99 = bridgeHalf.p99 - rawHalf.p99;
  rows.push(
    { pipe, run: 'raw, max', 'msg/s': rawMax.rate, 'p50 ms': rawMax.p50, 'p99 ms': rawMax.p99 },
    { pipe, run: 'bridge, max', 'msg/s': bridgeMax.rate, 'p50 ms': bridgeMax.p50, 'p99 ms': bridgeMax.p99 },
    { pipe, run: `raw @ ${halfRate}/s`, 'msg/s': rawHalf.rate, 'p50 ms': rawHalf.p50, 'p99 ms': rawHalf.p99 },
    {
      pipe,
      run: `bridge @ ${halfRate}/s`,
      'msg/s': bridgeHalf.rate,
      'p50 ms': bridgeHalf.p50,
      'p99 ms': bridgeHalf.p99,
    },
  );
  results[pipe] = {
    rawRate: rawMax.rate,
    bridgeRate: bridgeMax.rate,
    ratio: Math.round(ratio * 1000) / 1000,
    halfRate,
    addedP50Ms: Math.round(addedP50 * 100) / 100,
    addedP99Ms: Math.round(addedP99 * 100) / 100,
    latencyMessages: latencyCount,
  };
  checks.push(
    [`${pipe}: bridge throughput ${(ratio * 100).toFixed(0)}% of the raw pipe (target ≥ 70%)`, ratio >= 0.7],
    [
      `${pipe}: p99 added latency ${addedP99.toFixed(2)} ms at ${halfRate} msg/s (target ≤ 5 ms)`,
      addedP99 <= 5,
    ],
  );
}

printTable(
  `Bridges, 1 KB messages, at-least-once, ordered (${THROUGHPUT_MESSAGES} messages per max-rate run)`,
  rows,
);
printJson('bridges', { messages: THROUGHPUT_MESSAGES, payloadBytes: PAYLOAD_BYTES, pipes: results });
for (const [description, ok] of checks) target(description, ok);
