/**
 * Bridges between real brokers with 1 KB XML orders, at-least-once and ordered, next to raw pipes
 * written with the same client libraries (amqplib, mqtt, kafkajs) in the same run:
 *
 * - `raw, one at a time`: consume with manual acknowledgement, forward one message, wait for the
 *   target's confirm (publisher confirm; acks=all from an idempotent producer), then acknowledge
 *   the source. What the bridges did before they batched.
 * - `raw, batched`: the best the client library allows with the same guarantees: take what the
 *   source has buffered (up to 500), send it in one go (one Kafka request; AMQP publishes pipelined
 *   under confirms), then acknowledge the source up to the last one (AMQP `allUpTo`, Kafka offset).
 *   MQTT: a window of up to 100 unacknowledged PUBLISHes (MQTT 5 Receive Maximum), as the
 *   bridge's source keeps, PUBACKs in order once the target confirmed.
 * - `bridge, one at a time`: the runtime with batching turned off (`sendBatch.maxMessages: 1`).
 * - `bridge`: the runtime with its default settings.
 *
 * Routes: AMQP→Kafka (keyed by the XPath `/order/@id`), MQTT→AMQP, Kafka→AMQP, in-process
 * bridges; and AMQP→internal persistent queue→Kafka with the XPath split into two topics (by
 * `/order/region`, keyed by the order id), a real `jms-gateway run` process from YAML, since a
 * split needs a queue (on a queue a message no selector takes stays for the others, BRG-3). The
 * raw pipes for that route do the split in code. Its gateway process is started for each run, so
 * every pipe of that route moves 3,000 messages before the measured ones (left out of the counts),
 * to run warm as the in-process pipes do.
 *
 * Two measurements per pipe: throughput (a closed-loop feeder keeps at most 500 messages between
 * source and target: Mosquitto drops QoS 1 messages beyond `max_queued_messages`, default 1000)
 * and latency (the feeder publishes at half the batched raw pipe's rate, each payload carries its
 * send time, a consumer on the target measures send→receive; added latency = bridge pXX − raw
 * pXX). Every run counts what it lost, duplicated and received out of order per order id.
 *
 * The brokers, the pipe and the benchmark share the machine, so a run may be bound by its CPU
 * rather than by any one wait: each run prints how busy the machine was (Linux only), and the
 * CPU a message: the queue route's gateway process's, or for the in-process routes this
 * process's (the same feeder and reader for each pipe, so the difference is the pipe's). The max-rate runs go in
 * rounds (default 3, `BENCH_BRIDGE_ROUNDS`), each running the route's four pipes in turn; each
 * pipe's rate is its best round, and the table lists every round's.
 *
 * Targets: the bridge ≥ 70% of the batched raw pipe and ≥ 5× the bridge one at a time; 0 lost,
 * 0 out of order. Needs RabbitMQ (:5672), Mosquitto (:1883) and Kafka (:9092), or the URLs in
 * AMQP_URL / MQTT_URL / KAFKA_BROKERS. `BENCH_BRIDGE_PIPES=kafka-amqp,amqp-queue-kafka` runs only
 * those routes; `BENCH_BRIDGE_MESSAGES` sets the messages per throughput run (default 5,000);
 * `BENCH_GATEWAY_NODE_ARGS` passes Node options to the gateway process of the queue route (for
 * instance `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { connect as amqpConnect, type ConsumeMessage } from 'amqplib';
import { connectAsync, type MqttClient } from 'mqtt';
import type { Consumer, Producer } from 'kafkajs';
import { Kafka, logLevel } from '../connectors/kafka/kafkajs.js';
import { Bridge, type BridgeConfig } from '../src/bridge/index.js';
import {
  createXPathEvaluator,
  resolveConfig,
  type ConnectorContext,
  type ConnectorDefinition,
} from '../src/spi/index.js';
import { amqpConnector } from '../connectors/amqp/index.js';
import { mqttConnector } from '../connectors/mqtt/index.js';
import { kafkaConnector } from '../connectors/kafka/index.js';
import { cpuMark, cpuSince, formatMachineBusy } from './cpu.js';
import { printJson, printTable, target } from './lib.js';

const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const MQTT_URL = process.env['MQTT_URL'] ?? 'mqtt://127.0.0.1:1883';
const KAFKA_BROKERS = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');
const THROUGHPUT_MESSAGES = Number(process.env['BENCH_BRIDGE_MESSAGES'] ?? 5_000);
/**
 * Rounds of max-rate runs: one run of the same pipe differs from the next by up to a third here,
 * as the brokers and the benchmark share two cores. Each round runs every pipe of the route in
 * turn, so a busy spell falls on the raw pipes and the bridges alike, and each pipe counts its
 * best round, as the engine benchmark counts its best of 3.
 */
const ROUNDS = Math.max(1, Number(process.env['BENCH_BRIDGE_ROUNDS'] ?? 3));
const LATENCY_SECONDS = 4;
const MAX_LATENCY_MESSAGES = 2_000;
const WINDOW = 500;
/**
 * What a bridge may hold unsettled, and its AMQP and Kafka sources' read-ahead: as much as the
 * batched raw pipes' AMQP prefetch (the raw Kafka pipe takes each fetch whole), so both may read
 * as far ahead (the bridge's default `maxInFlight`).
 */
const BRIDGE_IN_FLIGHT = 1_000;
const PAYLOAD_BYTES = 1_024;
const RUN_TIMEOUT_MS = 180_000;
/** Feeder sends (of up to 100 messages) waiting for their confirm at once. */
const MAX_PENDING_SENDS = 10;
/** Messages a gateway process moves before a measured run (see `run`). */
const GATEWAY_WARM_UP = 3_000;
/** Order ids cycle through this many values, so each id has many updates whose order counts. */
const ORDER_IDS = 100;
/** The batched raw pipes' largest batch and the AMQP source's prefetch for them. */
const RAW_BATCH = 500;
/** The raw MQTT pipes' Receive Maximum: the MQTT source's default `receiveMaximum`. */
const RAW_MQTT_WINDOW = 100;
/** What turns the runtime's batching off, for the one-at-a-time bridge runs. */
const ONE_AT_A_TIME: Partial<BridgeConfig> = { sendBatch: { maxMessages: 1 } };
/** The same, as a line of a YAML bridge (after its `maxInFlight:` line). */
const ONE_AT_A_TIME_YAML = '\n    sendBatch: { maxMessages: 1 }';

type Kind = 'amqp' | 'mqtt' | 'kafka';

interface Route {
  /** As `BENCH_BRIDGE_PIPES` names it. */
  readonly id: string;
  readonly from: Kind;
  readonly to: Kind;
  /** Through a `jms-gateway` process and its persistent queue, split by region into two topics. */
  readonly viaGateway: boolean;
}

const ALL_ROUTES: readonly Route[] = [
  { id: 'amqp-kafka', from: 'amqp', to: 'kafka', viaGateway: false },
  { id: 'mqtt-amqp', from: 'mqtt', to: 'amqp', viaGateway: false },
  { id: 'kafka-amqp', from: 'kafka', to: 'amqp', viaGateway: false },
  { id: 'amqp-queue-kafka', from: 'amqp', to: 'kafka', viaGateway: true },
];

const silent = { error() {}, warn() {}, info() {}, debug() {} };
const evaluateXPath = createXPathEvaluator();
const context = (name: string): ConnectorContext => ({ name, logger: silent, evaluateXPath });
const kafka = new Kafka({ clientId: 'bench-bridges', brokers: KAFKA_BROKERS, logLevel: logLevel.NOTHING });

// --- payloads: 1 KB XML orders carrying their sequence number and send time ---

const REGIONS = ['EU', 'US'] as const;

function payload(seq: number): Buffer {
  const head =
    `<order id="o-${seq % ORDER_IDS}"><region>${REGIONS[seq % 2]}</region>` +
    `<seq>${seq}</seq><sentAt>${performance.now().toFixed(3)}</sentAt><note>`;
  const tail = '</note></order>';
  return Buffer.from(head + 'x'.repeat(Math.max(0, PAYLOAD_BYTES - head.length - tail.length)) + tail);
}

const FIELDS = /^<order id="([^"]*)"><region>([^<]*)<\/region><seq>(\d+)<\/seq><sentAt>([\d.]+)<\/sentAt>/;

interface Order {
  readonly id: string;
  readonly region: string;
  readonly seq: number;
  readonly sentAt: number;
}

function order(body: Buffer): Order {
  const match = FIELDS.exec(body.toString('latin1', 0, 120));
  if (!match) throw new Error(`not a benchmark order: ${body.toString('latin1', 0, 60)}`);
  return { id: match[1]!, region: match[2]!, seq: Number(match[3]), sentAt: Number(match[4]) };
}

function config<C>(connector: ConnectorDefinition<C>, fields: Record<string, unknown>): C {
  const { config, errors } = resolveConfig(connector.config, fields, 'bench');
  if (errors.length > 0) throw new Error(errors.join('; '));
  return config!;
}

// --- brokers: fresh names, feeders and target readers ---

interface Names {
  readonly source: string;
  /** One target, or the EU and US topics of a split. */
  readonly targets: readonly string[];
}

function namesFor(route: Route): Names {
  const id = randomUUID().slice(0, 8);
  return {
    source: `bench-src-${id}`,
    targets: route.viaGateway ? [`bench-eu-${id}`, `bench-us-${id}`] : [`bench-dst-${id}`],
  };
}

async function setUp(route: Route, names: Names): Promise<void> {
  const topics = [
    ...(route.from === 'kafka' ? [{ topic: names.source, numPartitions: 1 }] : []),
    ...(route.to === 'kafka'
      ? names.targets.map((topic) => ({ topic, numPartitions: route.viaGateway ? 3 : 1 }))
      : []),
  ];
  if (topics.length > 0) {
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: topics.map((topic) => ({ ...topic, replicationFactor: 1 })),
        waitForLeaders: true,
      });
    } finally {
      await admin.disconnect();
    }
  }
  const connection = await amqpConnect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    if (route.from === 'amqp') await channel.assertQueue(names.source, { durable: true });
    if (route.to === 'amqp')
      for (const queue of names.targets) await channel.assertQueue(queue, { durable: true });
  } finally {
    await connection.close();
  }
}

async function tearDown(route: Route, names: Names): Promise<void> {
  const connection = await amqpConnect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    if (route.from === 'amqp') await channel.deleteQueue(names.source);
    if (route.to === 'amqp') for (const queue of names.targets) await channel.deleteQueue(queue);
  } finally {
    await connection.close();
  }
  const topics = [
    ...(route.from === 'kafka' ? [names.source] : []),
    ...(route.to === 'kafka' ? names.targets : []),
  ];
  if (topics.length === 0) return;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics }).catch(() => undefined);
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
        for (const seq of seqs)
          channel.sendToQueue(name, payload(seq), { persistent: true, contentType: 'application/xml' });
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
  // One send after the other, idempotent: kafkajs does not keep concurrent sends in the order they
  // were made (the first waits for the fresh topic's metadata, a retried one lands behind later
  // ones), and a source topic out of order would count against every pipe.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let last: Promise<unknown> = Promise.resolve();
  return {
    send(seqs) {
      const messages = seqs.map((seq) => ({ value: payload(seq) }));
      const sent = last.then(() => producer.send({ topic: name, acks: -1, messages }));
      last = sent.catch(() => undefined);
      return sent.then(() => undefined);
    },
    close: () => producer.disconnect(),
  };
}

/** Reads the target broker: latency of each message, and what was lost, duplicated or reordered. */
interface Reader {
  readonly latencies: number[];
  readonly seen: Set<number>;
  /** Messages received, duplicates included. */
  received(): number;
  /** Messages that arrived after a later update of the same order id. */
  outOfOrder(): number;
  /** Messages that arrived in the wrong topic of a split. */
  misrouted(): number;
  /** Forgets everything counted so far and ignores messages numbered below `from` from now on. */
  reset(from: number): void;
  close(): Promise<void>;
}

async function reader(kind: Kind, names: readonly string[], split: boolean): Promise<Reader> {
  const latencies: number[] = [];
  const seen = new Set<number>();
  const lastSeq = new Map<string, number>();
  let received = 0;
  let outOfOrder = 0;
  let misrouted = 0;
  let firstCounted = 0;
  const record = (body: Buffer, from: string): void => {
    const { id, region, seq, sentAt } = order(body);
    if (seq < firstCounted) return;
    received++;
    latencies.push(performance.now() - sentAt);
    if (seen.has(seq)) return;
    seen.add(seq);
    if ((lastSeq.get(id) ?? -1) > seq) outOfOrder++;
    else lastSeq.set(id, seq);
    if (split && from !== names[REGIONS.indexOf(region as 'EU')]) misrouted++;
  };
  const counts = {
    latencies,
    seen,
    received: () => received,
    outOfOrder: () => outOfOrder,
    misrouted: () => misrouted,
    reset: (from: number) => {
      latencies.length = 0;
      seen.clear();
      lastSeq.clear();
      received = outOfOrder = misrouted = 0;
      firstCounted = from;
    },
  };
  if (kind === 'amqp') {
    const connection = await amqpConnect(AMQP_URL);
    const channel = await connection.createChannel();
    for (const name of names)
      await channel.consume(name, (message) => message && record(message.content, name), { noAck: true });
    return { ...counts, close: () => connection.close() };
  }
  const consumer = kafka.consumer({ groupId: `bench-read-${randomUUID()}`, maxWaitTimeInMs: 20 });
  await consumer.connect();
  await consumer.subscribe({ topics: [...names], fromBeginning: true });
  const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
  await consumer.run({
    eachMessage: ({ topic, message }) => {
      if (message.value) record(message.value, topic);
      return Promise.resolve();
    },
  });
  await joined;
  return { ...counts, close: () => consumer.disconnect() };
}

// --- the pipes under test ---

interface Pipe {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** The process the pipe runs in, when it has one of its own (a gateway), for its CPU. */
  pid?(): number | undefined;
}

function endpointConfig(kind: Kind, name: string, role: 'source' | 'sink', id: string): unknown {
  switch (kind) {
    case 'amqp':
      return config(amqpConnector, { url: AMQP_URL, queue: name, prefetch: BRIDGE_IN_FLIGHT });
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
        ...(role === 'source' ? { prefetch: BRIDGE_IN_FLIGHT } : {}),
        ...(role === 'sink' ? { key: { from: 'xpath', expression: '/order/@id' } } : {}),
      });
  }
}

const CONNECTORS = { amqp: amqpConnector, mqtt: mqttConnector, kafka: kafkaConnector } as const;

/** An in-process bridge from the route's source to its one target. */
function bridgePipe(route: Route, names: Names, settings: Partial<BridgeConfig>): Pipe {
  const id = randomUUID().slice(0, 8);
  const name = `bench-${route.id}-${id}`;
  const source = (CONNECTORS[route.from] as ConnectorDefinition).createSource!(
    endpointConfig(route.from, names.source, 'source', id),
    context(name),
  );
  const sink = (CONNECTORS[route.to] as ConnectorDefinition).createSink!(
    endpointConfig(route.to, names.targets[0]!, 'sink', id),
    context(name),
  );
  const bridge = new Bridge({
    name,
    source,
    sink,
    qos: 'at-least-once',
    ordering: 'bridge',
    batchSize: 100,
    batchIntervalMs: 20,
    maxInFlight: BRIDGE_IN_FLIGHT,
    ...settings,
  });
  return { start: () => bridge.start(), stop: () => bridge.stop() };
}

const here = dirname(fileURLToPath(import.meta.url));
/** The compiled CLI beside the compiled benchmark (`npm run bench`), or the source through tsx. */
function cliCommand(): string[] {
  const fromSource = fileURLToPath(import.meta.url).endsWith('.ts');
  if (!fromSource) return [join(here, '../src/cli/main.js')];
  return ['--import', join(here, '../node_modules/tsx/dist/loader.mjs'), join(here, '../src/cli/main.ts')];
}

/** The route AMQP → queue://orders → Kafka split by region, as `config/examples` writes it. */
function gatewayYaml(names: Names, extra: string): string {
  const regional = (region: string, topic: string) => `
  - name: orders-${region.toLowerCase()}
    source: { type: jms, destination: queue://orders }
    selector: "JMS_BEA_SELECT('xpath', '/order/region') = '${region}'"
    target:
      type: kafka
      connection: kafka
      topic: ${topic}
      key: { from: xpath, expression: /order/@id }
    batchSize: 100
    batchIntervalMs: 20
    maxInFlight: ${BRIDGE_IN_FLIGHT}${extra}`;
  return `
store:
  path: ./data
connections:
  rabbit: { type: amqp, url: '${AMQP_URL}' }
  kafka: { type: kafka, brokers: [${KAFKA_BROKERS.map((broker) => `'${broker}'`).join(', ')}] }
destinations:
  queues:
    - name: orders
bridges:
  - name: orders-in
    source: { type: amqp, connection: rabbit, queue: ${names.source}, prefetch: ${BRIDGE_IN_FLIGHT} }
    target: { type: jms, destination: queue://orders }
    batchSize: 100
    batchIntervalMs: 20
    maxInFlight: ${BRIDGE_IN_FLIGHT}${extra}${regional('EU', names.targets[0]!)}${regional('US', names.targets[1]!)}
`;
}

/** A `jms-gateway run` process with the split route, from a fresh directory. */
function gatewayPipe(names: Names, extra: string): Pipe {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  return {
    async start() {
      dir = await mkdtemp(join(tmpdir(), 'bench-gateway-'));
      await writeFile(join(dir, 'gateway.yaml'), gatewayYaml(names, extra));
      const started = spawn(
        process.execPath,
        [
          ...(process.env['BENCH_GATEWAY_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
          ...cliCommand(),
          'run',
          '--config',
          'gateway.yaml',
          '--admin-port',
          '0',
        ],
        {
          cwd: dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      child = started;
      let output = '';
      await new Promise<void>((ready, fail) => {
        const timer = setTimeout(() => fail(new Error(`gateway not ready in 60 s:\n${output}`)), 60_000);
        const look = (chunk: Buffer): void => {
          output += chunk.toString();
          if (output.includes('"gateway ready"')) {
            clearTimeout(timer);
            ready();
          }
        };
        started.stdout.on('data', look);
        started.stderr.on('data', look);
        started.on('exit', (code) => {
          clearTimeout(timer);
          fail(new Error(`the gateway exited (${String(code)}) before it was ready:\n${output}`));
        });
      });
    },
    pid: () => child?.pid,
    async stop() {
      if (child && child.exitCode === null) {
        const exited = new Promise((done) => child!.once('exit', done));
        child.kill('SIGTERM');
        await exited;
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Sends bodies to the target and resolves once every one is confirmed. */
type RawSend = (bodies: readonly Buffer[]) => Promise<void>;

async function rawTarget(
  kind: Kind,
  names: Names,
  split: boolean,
): Promise<{ send: RawSend; close(): Promise<void> }> {
  if (kind === 'amqp') {
    const connection = await amqpConnect(AMQP_URL);
    const channel = await connection.createConfirmChannel();
    const queue = names.targets[0]!;
    return {
      send: (bodies) =>
        Promise.all(
          bodies.map(
            (body) =>
              new Promise<void>((resolve, reject) => {
                channel.sendToQueue(queue, body, { persistent: true, mandatory: true }, (error) =>
                  error ? reject(new Error(String(error))) : resolve(),
                );
              }),
          ),
        ).then(() => undefined),
      close: () => connection.close(),
    };
  }
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return {
    async send(bodies) {
      const byTopic = new Map<string, { key: string; value: Buffer }[]>();
      for (const body of bodies) {
        const { id, region } = order(body);
        const topic = split ? names.targets[REGIONS.indexOf(region as 'EU')]! : names.targets[0]!;
        let records = byTopic.get(topic);
        if (!records) byTopic.set(topic, (records = []));
        records.push({ key: id, value: body });
      }
      await producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, messages]) => ({ topic, messages })),
      });
    },
    close: () => producer.disconnect(),
  };
}

/**
 * A raw pipe: takes what the source has buffered, up to `maxBatch`, sends it to the target in one
 * go, and acknowledges the source after the target confirmed. With `maxBatch` 1 it is the
 * one-at-a-time pipe. One batch at a time, so order is the source's.
 */
function rawPipe(route: Route, names: Names, maxBatch: number): Pipe {
  const closers: Array<() => Promise<void>> = [];
  return {
    async start() {
      const out = await rawTarget(route.to, names, route.viaGateway);
      closers.push(() => out.close());
      const waiting: { body: Buffer; ack: () => void }[] = [];
      let flushing = false;
      const flush = async (): Promise<void> => {
        flushing = true;
        while (waiting.length > 0) {
          const batch = waiting.splice(0, maxBatch);
          await out.send(batch.map((entry) => entry.body));
          for (const entry of batch) entry.ack();
        }
        flushing = false;
      };
      const forward = (body: Buffer, ack: () => void): void => {
        waiting.push({ body, ack });
        // A macrotask later, so what the client has already read joins the batch.
        if (!flushing) setImmediate(() => void flush());
        flushing = true;
      };
      if (route.from === 'amqp') {
        const connection = await amqpConnect(AMQP_URL);
        closers.unshift(() => connection.close());
        const channel = await connection.createChannel();
        await channel.prefetch(maxBatch === 1 ? 10 : RAW_BATCH * 2);
        // Acknowledgements up to the newest settled message in one frame, as the bridge batches them.
        let lastUnacked: ConsumeMessage | undefined;
        let ackScheduled = false;
        await channel.consume(names.source, (message) => {
          if (!message) return;
          forward(message.content, () => {
            lastUnacked = message;
            if (ackScheduled) return;
            ackScheduled = true;
            queueMicrotask(() => {
              ackScheduled = false;
              if (lastUnacked) channel.ack(lastUnacked, true);
              lastUnacked = undefined;
            });
          });
        });
      } else if (route.from === 'mqtt') {
        // As the bridge's source: MQTT 5 with a Receive Maximum of 100 (its default window).
        const client: MqttClient = await connectAsync(MQTT_URL, {
          clientId: `bench-raw-${randomUUID()}`,
          clean: true,
          protocolVersion: 5,
          properties: { receiveMaximum: RAW_MQTT_WINDOW },
        });
        closers.unshift(() => client.endAsync());
        if (maxBatch === 1) {
          // PUBACK only after the target confirmed: mqtt.js sends it when the callback is called,
          // and reads the next PUBLISH only then.
          client.handleMessage = (packet, callback) => forward(packet.payload as Buffer, () => callback());
        } else {
          // A window: calling back with an error makes mqtt.js read on without its PUBACK, which
          // goes after the target confirmed, in order (batches go one at a time), through the
          // method mqtt.js sends its own with.
          const writer = client as unknown as { _sendPacket(packet: object): void };
          client.handleMessage = (packet, callback) => {
            forward(packet.payload as Buffer, () =>
              writer._sendPacket({ cmd: 'puback', messageId: packet.messageId, reasonCode: 0 }),
            );
            callback(new Error('PUBACK once forwarded'));
          };
        }
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
          eachBatchAutoResolve: false,
          eachBatch: async (payload) => {
            const { batch } = payload;
            for (let i = 0; i < batch.messages.length; i += maxBatch) {
              const chunk = batch.messages.slice(i, i + maxBatch);
              await out.send(chunk.map((message) => message.value ?? Buffer.alloc(0)));
              payload.resolveOffset(chunk[chunk.length - 1]!.offset);
              await payload.heartbeat();
            }
          },
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
  readonly lost: number;
  readonly duplicated: number;
  readonly outOfOrder: number;
  readonly misrouted: number;
  /** Share of the machine's cores busy during the run (everything on it), 0..1. */
  readonly machineBusy: number | undefined;
  /**
   * CPU µs a message: of the pipe's gateway process, or for an in-process route of this process
   * (feeder, reader and pipe); not known for the queue route's raw pipes.
   */
  readonly pipeCpuUsPerMessage: number | undefined;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/**
 * Sends the messages numbered `from` to `from + count - 1` and waits until the reader has seen
 * them: closed loop (at most {@link WINDOW} between source and target) when `rate` is undefined,
 * else paced at `rate` messages/s. Resolves with the time the first was sent.
 */
async function pump(
  route: Route,
  feed: Feeder,
  out: Reader,
  from: number,
  count: number,
  rate: number | undefined,
  deadline: number,
): Promise<number> {
  const started = performance.now();
  let sent = 0;
  const pending = new Set<Promise<void>>();
  while (sent < count) {
    if (Date.now() > deadline) throw new Error(`${route.id}: timed out after ${sent} sent`);
    let due: number;
    if (rate === undefined) due = Math.min(count, out.seen.size + WINDOW) - sent;
    else due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * rate) + 1) - sent;
    if (due > 0 && pending.size < MAX_PENDING_SENDS) {
      const seqs = Array.from({ length: Math.min(due, 100) }, (_, i) => from + sent + i);
      sent += seqs.length;
      // Not awaited one by one: a paced feeder must not fall behind its rate waiting for confirms.
      const sending = feed.send(seqs).finally(() => pending.delete(sending));
      pending.add(sending);
    } else await sleep(rate === undefined ? 2 : 1);
  }
  await Promise.all(pending);
  while (out.seen.size < count && Date.now() < deadline) await sleep(2);
  return started;
}

/**
 * Moves `count` messages through the pipe: closed loop (window) when `rate` is undefined, else
 * paced at `rate` messages/s. Returns the throughput, the send→receive latencies and the counts.
 */
async function run(
  route: Route,
  makePipe: (names: Names) => Pipe,
  count: number,
  rate?: number,
): Promise<RunResult> {
  const names = namesFor(route);
  await setUp(route, names);
  const out = await reader(route.to, names.targets, route.viaGateway);
  const pipe = makePipe(names);
  const feed = await feeder(route.from, names.source);
  try {
    await pipe.start();
    const deadline = Date.now() + RUN_TIMEOUT_MS;
    // The queue route's bridge is a gateway process that starts cold for each run, where the
    // in-process pipes run warm from the runs before: each pipe of that route moves a closed-loop
    // warm-up first, which the counts leave out.
    const warmUp = route.viaGateway ? GATEWAY_WARM_UP : 0;
    if (warmUp > 0) {
      await pump(route, feed, out, 0, warmUp, undefined, deadline);
      out.reset(warmUp);
    }
    // A gateway's own CPU; for an in-process pipe, this process's: the feeder and the reader are the
    // same for every pipe of a route, so the difference between two pipes is theirs.
    const pid = pipe.pid?.() ?? (route.viaGateway ? undefined : process.pid);
    const cpu = cpuMark(pid === undefined ? [] : [pid]);
    const started = await pump(route, feed, out, warmUp, count, rate, deadline);
    const seconds = (performance.now() - started) / 1000;
    const spent = cpuSince(cpu);
    const pipeMs = pid === undefined ? undefined : spent.processMs.get(pid);
    return {
      machineBusy: spent.machineBusy,
      pipeCpuUsPerMessage:
        pipeMs === undefined || out.seen.size === 0 ? undefined : Math.round((pipeMs * 1000) / out.seen.size),
      rate: Math.round(out.seen.size / seconds),
      p50: percentile(out.latencies, 50),
      p99: percentile(out.latencies, 99),
      lost: count - out.seen.size,
      duplicated: out.received() - out.seen.size,
      outOfOrder: out.outOfOrder(),
      misrouted: out.misrouted(),
    };
  } finally {
    await feed.close().catch(() => {});
    await pipe.stop().catch(() => {});
    await out.close().catch(() => {});
    await tearDown(route, names).catch(() => {});
  }
}

const wanted = process.env['BENCH_BRIDGE_PIPES']?.split(',').map((id) => id.trim());
const ROUTES = ALL_ROUTES.filter((route) => wanted === undefined || wanted.includes(route.id));

const rows: Record<string, string | number>[] = [];
const results: Record<string, unknown> = {};
const checks: Array<[string, boolean]> = [];
for (const route of ROUTES) {
  const pipe = route.viaGateway ? 'amqp→queue→kafka (split)' : `${route.from}→${route.to}`;
  const bridge = (settings: 'default' | 'one at a time') => (names: Names) =>
    route.viaGateway
      ? gatewayPipe(names, settings === 'default' ? '' : ONE_AT_A_TIME_YAML)
      : bridgePipe(route, names, settings === 'default' ? {} : ONE_AT_A_TIME);
  const measured: Array<[string, RunResult]> = [];
  /** A pipe's row: its (best) run's rate and latency, and what every run of it lost, duplicated or disordered. */
  const row = (label: string, result: RunResult, rounds: readonly RunResult[] = [result]) => {
    const sum = (count: (run: RunResult) => number) => rounds.reduce((total, run) => total + count(run), 0);
    rows.push({
      pipe,
      run: label,
      'msg/s': result.rate,
      ...(rounds.length > 1 && {
        rounds: rounds.map((round) => round.rate.toLocaleString('en-US')).join(' / '),
      }),
      'p50 ms': result.p50,
      'p99 ms': result.p99,
      lost: sum((run) => run.lost),
      dup: sum((run) => run.duplicated),
      'out of order': sum((run) => run.outOfOrder + run.misrouted),
      'machine busy': formatMachineBusy(result.machineBusy),
      [route.viaGateway ? 'gateway CPU µs/msg' : 'process CPU µs/msg']: result.pipeCpuUsPerMessage ?? '-',
    });
  };
  const measure = async (label: string, makePipe: (names: Names) => Pipe, count: number, rate?: number) => {
    const result = await run(route, makePipe, count, rate);
    measured.push([label, result]);
    row(label, result);
    return result;
  };
  // The max-rate runs, round by round: each round runs every pipe once, in turn, and a pipe's
  // rate is its best round.
  const maxRatePipes: Array<[string, (names: Names) => Pipe]> = [
    ['raw, one at a time', (names) => rawPipe(route, names, 1)],
    ['raw, batched', (names) => rawPipe(route, names, RAW_BATCH)],
    ['bridge, one at a time', bridge('one at a time')],
    ['bridge', bridge('default')],
  ];
  const rounds = maxRatePipes.map((): RunResult[] => []);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, [label, makePipe]] of maxRatePipes.entries()) {
      const result = await run(route, makePipe, THROUGHPUT_MESSAGES);
      measured.push([label, result]);
      rounds[i]!.push(result);
    }
  }
  const [rawOne, rawBatched, bridgeOne, bridgeMax] = rounds.map((results, i) => {
    const top = results.reduce((a, b) => (b.rate > a.rate ? b : a));
    row(`${maxRatePipes[i]![0]}${ROUNDS > 1 ? `, best of ${ROUNDS}` : ''}`, top, results);
    return top;
  }) as [RunResult, RunResult, RunResult, RunResult];
  const halfRate = Math.max(1, Math.round(rawBatched.rate / 2));
  const latencyCount = Math.max(100, Math.min(MAX_LATENCY_MESSAGES, halfRate * LATENCY_SECONDS));
  const rawHalf = await measure(
    `raw, batched @ ${halfRate}/s`,
    (names) => rawPipe(route, names, RAW_BATCH),
    latencyCount,
    halfRate,
  );
  const bridgeHalf = await measure(`bridge @ ${halfRate}/s`, bridge('default'), latencyCount, halfRate);
  const ofBatched = bridgeMax.rate / rawBatched.rate;
  const overOne = bridgeMax.rate / bridgeOne.rate;
  const addedP99 = bridgeHalf.p99 - rawHalf.p99;
  const lost = measured.reduce((sum, [, result]) => sum + result.lost, 0);
  const disordered = measured.reduce((sum, [, result]) => sum + result.outOfOrder + result.misrouted, 0);
  results[route.id] = {
    rawOneAtATime: rawOne.rate,
    rawBatched: rawBatched.rate,
    bridgeOneAtATime: bridgeOne.rate,
    bridge: bridgeMax.rate,
    ofBatched: Math.round(ofBatched * 1000) / 1000,
    overOneAtATime: Math.round(overOne * 100) / 100,
    halfRate,
    addedP50Ms: Math.round((bridgeHalf.p50 - rawHalf.p50) * 100) / 100,
    addedP99Ms: Math.round(addedP99 * 100) / 100,
    rawBatchedMachineBusy: rawBatched.machineBusy,
    bridgeMachineBusy: bridgeMax.machineBusy,
    ...(route.viaGateway
      ? { gatewayCpuUsPerMessage: bridgeMax.pipeCpuUsPerMessage }
      : {
          rawBatchedProcessCpuUsPerMessage: rawBatched.pipeCpuUsPerMessage,
          bridgeProcessCpuUsPerMessage: bridgeMax.pipeCpuUsPerMessage,
        }),
    lost,
    outOfOrder: disordered,
  };
  checks.push(
    [
      `${pipe}: bridge ${(ofBatched * 100).toFixed(0)}% of the batched raw pipe (target ≥ 70%)`,
      ofBatched >= 0.7,
    ],
    [`${pipe}: bridge ${overOne.toFixed(1)}× the bridge one at a time (target ≥ 5×)`, overOne >= 5],
    [
      `${pipe}: ${lost} lost, ${disordered} out of order over all runs (target 0, 0)`,
      lost === 0 && disordered === 0,
    ],
  );
  console.log(`${pipe}: p99 added latency ${addedP99.toFixed(2)} ms at ${halfRate} msg/s`);
}

printTable(
  `Bridges, 1 KB XML orders, at-least-once, ordered (${THROUGHPUT_MESSAGES} messages per max-rate run)`,
  rows,
);
printJson('bridges', { messages: THROUGHPUT_MESSAGES, payloadBytes: PAYLOAD_BYTES, routes: results });
for (const [description, ok] of checks) target(description, ok);
