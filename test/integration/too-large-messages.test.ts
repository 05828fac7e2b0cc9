/**
 * Messages too large for the target, through the bridge runtime against real brokers: each is
 * parked in the error destination with a reason naming its size and the limit, and the message
 * after it in the same ordering unit still reaches the target (DLV-9, BRG-4, ORD-3).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, connect as netConnect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { connect as amqpConnect } from 'amqplib';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import type { Admin } from 'kafkajs';
import { Bridge, ERROR_REASON, InternalSink, InternalSource } from '../../src/bridge/index.js';
import {
  BytesMessage,
  ConnectionFactory,
  JmsEngine,
  MemoryStore,
  type Message,
  Queue,
  TextMessage,
} from '../../src/index.js';
import {
  MessageTooLargeError,
  NotConnectedError,
  resolveConfig,
  type EngineLogger,
  type Sink,
} from '../../src/spi/index.js';
import { AmqpSink, amqpConnector } from '../../connectors/amqp/index.js';
import { KafkaSink, kafkaConfigSchema } from '../../connectors/kafka/index.js';
import { MqttSink, mqttConnector } from '../../connectors/mqtt/index.js';
import { brokerTest } from '../helpers/brokers.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';

const WAIT_MS = 30_000;
const silent: EngineLogger = { error() {}, warn() {}, info() {}, debug() {} };

/**
 * An engine whose queue `in` a bridge forwards to `sink`, parking in queue `errors`: one ordering
 * unit, no retries, short reconnect delays. The bridge runs on the system clock, as the broker does.
 */
async function parkingRig(sink: Sink) {
  const engine = await JmsEngine.open({ store: new MemoryStore() });
  await engine.createQueue('in');
  await engine.createQueue('errors');
  const bridge = new Bridge(
    {
      name: uniqueName('too-large'),
      source: new InternalSource({ engine, destination: 'queue://in' }),
      sink,
      errorDestination: new InternalSink({ engine, destination: 'queue://errors' }),
      ordering: 'bridge',
      retry: { delay: { kind: 'fixed', ms: 100 }, limit: 0 },
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
    },
    { logger: silent },
  );
  const connection = new ConnectionFactory(engine).createConnection();
  connection.start();
  const session = connection.createSession();
  const producer = session.createProducer(new Queue('in'));
  const parked = session.createConsumer(new Queue('errors'));
  await bridge.start();
  return {
    bridge,
    send: (message: Message) => producer.send(message),
    /** The next message in the error destination. */
    parked: async (): Promise<Message> => {
      const message = await withTimeout(parked.receive(), WAIT_MS, 'a parked message');
      assert.ok(message, 'a parked message');
      return message;
    },
    /** Resolves once the target confirmed `count` messages. */
    delivered: (count: number) => eventually(() => bridge.counters.out >= count, `${count} delivered`),
    async close() {
      await bridge.stop();
      await connection.close();
      await engine.close();
    },
  };
}

/** Resolves when `condition` holds, checking on every turn of the event loop's timers. */
async function eventually(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function bytes(size: number): BytesMessage {
  return new BytesMessage(new Uint8Array(size).fill(7));
}

// --- Kafka ---

function kafkaSink(brokers: string[], topic: string, fields: Record<string, unknown> = {}): KafkaSink {
  const { config, errors } = resolveConfig(
    kafkaConfigSchema,
    { brokers, topic, retries: 1, ...fields },
    'endpoint',
  );
  assert.deepEqual(errors, []);
  return new KafkaSink(config!, { name: 'too-large-it', logger: silent });
}

/** Runs `fn` with a fresh one-partition topic with these settings, deleted afterwards. */
async function withKafkaTopic(
  brokers: string[],
  configEntries: Array<{ name: string; value: string }>,
  fn: (topic: string) => Promise<void>,
): Promise<void> {
  const topic = uniqueName('t-too-large');
  const admin: Admin = new Kafka({
    clientId: uniqueName('too-large-it'),
    brokers,
    logLevel: logLevel.NOTHING,
  }).admin();
  await admin.connect();
  try {
    await createKafkaTopics(admin, [{ topic, numPartitions: 1, replicationFactor: 1, configEntries }]);
    await fn(topic);
  } finally {
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

brokerTest(
  'kafka',
  "too large - a message over the kafka topic's max.message.bytes is parked with its size and the limit, and the next one flows (DLV-9, BRG-4, ORD-3)",
  async ({ brokers }) => {
    await withKafkaTopic(brokers, [{ name: 'max.message.bytes', value: '10000' }], async (topic) => {
      const rig = await parkingRig(kafkaSink(brokers, topic));
      try {
        const big = bytes(50_000);
        await rig.send(big);
        await rig.send(new TextMessage('small'));
        const parked = await rig.parked();
        assert.equal((parked as BytesMessage).getBodyLength(), 50_000);
        assert.match(
          parked.getStringProperty(ERROR_REASON)!,
          new RegExp(
            `^poison: MessageTooLargeError: message '${big.getJMSMessageID()}' is too large: 50\\d{3} bytes, over the limit of 10000 bytes of kafka topic '${topic}' \\(max\\.message\\.bytes\\)$`,
          ),
        );
        await rig.delivered(1);
        assert.equal(rig.bridge.counters.deadLettered, 1);
      } finally {
        await rig.close();
      }
    });
  },
  { timeout: 60_000 },
);

brokerTest(
  'kafka',
  "too large - a message over the kafka broker's socket.request.max.bytes is parked before it is sent, instead of a connection the broker closes (DLV-9, BRG-5)",
  async ({ brokers }) => {
    // The topic would take it; the request carrying it is over the broker's 100 MB default.
    await withKafkaTopic(brokers, [{ name: 'max.message.bytes', value: '200000000' }], async (topic) => {
      const rig = await parkingRig(kafkaSink(brokers, topic));
      try {
        await rig.send(bytes(104_857_600));
        await rig.send(new TextMessage('small'));
        const reason = (await rig.parked()).getStringProperty(ERROR_REASON)!;
        assert.match(
          reason,
          /is too large: 1048\d{5} bytes, over the limit of 104857600 bytes of kafka broker \d+ \(socket\.request\.max\.bytes\)$/,
        );
        await rig.delivered(1);
        assert.equal(rig.bridge.counters.reconnects, 0, 'nothing was sent, no connection was lost');
      } finally {
        await rig.close();
      }
    });
  },
  { timeout: 120_000 },
);

brokerTest(
  'kafka',
  'too large - a record kafka answers by closing the connection is parked once its sends keep losing the connection, and the next one flows (BRG-4, BRG-5, ORD-3)',
  async ({ brokers }) => {
    // maxMessageBytes above the request limit turns the sink's own check off, so the record
    // really goes out and Kafka closes the connection: what the runtime's rule for lost
    // connections is for. Retry limit 0: the first loss is free, the lone resend counts.
    await withKafkaTopic(brokers, [{ name: 'max.message.bytes', value: '200000000' }], async (topic) => {
      const rig = await parkingRig(kafkaSink(brokers, topic, { maxMessageBytes: 2_000_000_000 }));
      try {
        await rig.send(bytes(104_900_000));
        await rig.send(new TextMessage('small'));
        const reason = (await rig.parked()).getStringProperty(ERROR_REASON)!;
        assert.match(
          reason,
          /^retry limit 0 reached after 1 deliveries: the connection to the target was lost during each of its 2 sends \(NotConnectedError: /,
        );
        await rig.delivered(1);
        assert.ok(rig.bridge.counters.reconnects >= 2);
      } finally {
        await rig.close();
      }
    });
  },
  { timeout: 180_000 },
);

// --- AMQP ---

function amqpSink(url: string, queue: string, fields: Record<string, unknown> = {}): AmqpSink {
  const { config, errors } = resolveConfig(
    amqpConnector.config,
    { url, queue, declare: { queues: [{ name: queue, durable: false }] }, ...fields },
    'endpoint',
  );
  assert.deepEqual(errors, []);
  return new AmqpSink(config!, { name: 'too-large-it', logger: silent });
}

/** Runs `fn` with a queue name, then deletes the queue; resolves to how many messages it held. */
async function withAmqpQueue(url: string, fn: (queue: string) => Promise<void>): Promise<number> {
  const queue = uniqueName('q-too-large');
  let held = -1;
  try {
    await fn(queue);
  } finally {
    const connection = await amqpConnect(url);
    try {
      const channel = await connection.createChannel();
      held = (await channel.assertQueue(queue, { durable: false })).messageCount;
      await channel.deleteQueue(queue);
    } finally {
      await connection.close().catch(() => {});
    }
  }
  return held;
}

async function rabbitmqVersion(url: string): Promise<string> {
  const connection = await amqpConnect(url);
  try {
    return connection.connection.serverProperties.version;
  } finally {
    await connection.close();
  }
}

brokerTest(
  'amqp',
  "too large - a message over the amqp sink's maxMessageBytes is parked with its size and the limit, and the next one flows (DLV-9, BRG-4, ORD-3)",
  async ({ url }) => {
    const kept = await withAmqpQueue(url, async (queue) => {
      const rig = await parkingRig(amqpSink(url, queue, { maxMessageBytes: 1_000 }));
      try {
        const big = bytes(2_000);
        await rig.send(big);
        await rig.send(new TextMessage('small'));
        assert.equal(
          (await rig.parked()).getStringProperty(ERROR_REASON),
          `poison: MessageTooLargeError: message '${big.getJMSMessageID()}' is too large: 2000 bytes, over the limit of 1000 bytes of the amqp sink's maxMessageBytes`,
        );
        await rig.delivered(1);
      } finally {
        await rig.close();
      }
    });
    assert.equal(kept, 1, 'only the small message reached the queue');
  },
  { timeout: 60_000 },
);

brokerTest(
  'amqp',
  'too large - properties beyond the negotiated frame_max are poison, and the next message flows on the same channel (DLV-9, BRG-4)',
  async ({ url }) => {
    const kept = await withAmqpQueue(url, async (queue) => {
      const rig = await parkingRig(amqpSink(url, queue));
      try {
        const wide = new TextMessage('wide');
        wide.setStringProperty('note', 'x'.repeat(200_000)); // RabbitMQ's frame_max is 131072 by default
        await rig.send(wide);
        await rig.send(new TextMessage('small'));
        assert.match(
          (await rig.parked()).getStringProperty(ERROR_REASON)!,
          /^poison: PoisonMessageError: message '[^']+' cannot be encoded for AMQP: .*exceeds the \d+ byte encoding buffer/,
        );
        await rig.delivered(1);
        assert.equal(rig.bridge.counters.reconnects, 0, 'nothing reached the broker');
      } finally {
        await rig.close();
      }
    });
    assert.equal(kept, 1);
  },
  { timeout: 60_000 },
);

brokerTest(
  'amqp',
  "too large - the amqp sink holds a body to the running rabbitmq version's default max_message_size, before publishing (DLV-9)",
  async ({ url }) => {
    const version = await rabbitmqVersion(url);
    const limit = version.startsWith('3.') ? 134_217_728 : 16_777_216;
    await withAmqpQueue(url, async (queue) => {
      const rig = await parkingRig(amqpSink(url, queue));
      try {
        await rig.send(bytes(limit + 1));
        assert.match(
          (await rig.parked()).getStringProperty(ERROR_REASON)!,
          new RegExp(
            `is too large: ${limit + 1} bytes, over the limit of ${limit} bytes of rabbitmq ${version.replaceAll('.', '\\.')} \\(its default max_message_size\\)$`,
          ),
        );
        assert.equal(rig.bridge.counters.reconnects, 0, 'nothing was published');
      } finally {
        await rig.close();
      }
    });
  },
  { timeout: 120_000 },
);

brokerTest(
  'amqp',
  "too large - rabbitmq's own answer to a body over its max_message_size is poison with both sizes, for that message only (DLV-9)",
  async ({ url }) => {
    // One real publish over the limit, the sink's own check turned off by a maxMessageBytes above it.
    const version = await rabbitmqVersion(url);
    const limit = version.startsWith('3.') ? 134_217_728 : 16_777_216;
    await withAmqpQueue(url, async (queue) => {
      const sink = amqpSink(url, queue, { maxMessageBytes: 536_870_912 });
      await sink.connect(AbortSignal.timeout(WAIT_MS));
      try {
        // The broker closes the channel, failing both publishes: only the big one is poison.
        const big = sink.send(bytes(limit + 1), AbortSignal.timeout(WAIT_MS));
        const small = sink.send(new TextMessage('small'), AbortSignal.timeout(WAIT_MS));
        await assert.rejects(
          big,
          (error: unknown) =>
            error instanceof MessageTooLargeError &&
            error.size === limit + 1 &&
            error.limit === limit &&
            error.limitSource === 'the amqp broker (max_message_size)',
        );
        await assert.rejects(small, NotConnectedError);
      } finally {
        await sink.close();
      }
    });
  },
  { timeout: 120_000 },
);

// --- MQTT ---

function mqttSink(url: string, topic: string, fields: Record<string, unknown> = {}): MqttSink {
  const { config, errors } = resolveConfig(
    mqttConnector.config,
    { url, topic, clientId: uniqueName('too-large-it'), ...fields },
    'endpoint',
  );
  assert.deepEqual(errors, []);
  return new MqttSink(config!, { name: 'too-large-it', logger: silent });
}

brokerTest(
  'mqtt',
  "too large - a message over the mqtt sink's maxMessageBytes is parked with its size and the limit, and the next one flows (DLV-9, BRG-4, ORD-3)",
  async ({ url }) => {
    const rig = await parkingRig(mqttSink(url, uniqueName('too-large'), { maxMessageBytes: 1_000 }));
    try {
      const big = bytes(2_000);
      await rig.send(big);
      await rig.send(new TextMessage('small'));
      assert.match(
        (await rig.parked()).getStringProperty(ERROR_REASON)!,
        new RegExp(
          `^poison: MessageTooLargeError: message '${big.getJMSMessageID()}' is too large: 2\\d{3} bytes, over the limit of 1000 bytes of the mqtt sink's maxMessageBytes$`,
        ),
      );
      await rig.delivered(1);
    } finally {
      await rig.close();
    }
  },
  { timeout: 60_000 },
);

/**
 * A Mosquitto of this test's own on a free loopback port, with `max_packet_size` (the shared
 * broker keeps its configuration); skipped where there is no `mosquitto` binary.
 */
async function withOwnMosquitto(
  t: TestContext,
  maxPacketSize: number,
  fn: (url: string) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const directory = await mkdtemp(join(tmpdir(), 'too-large-mosquitto-'));
  const configFile = join(directory, 'mosquitto.conf');
  await writeFile(
    configFile,
    `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_packet_size ${maxPacketSize}\n`,
  );
  const broker = spawn('mosquitto', ['-c', configFile], { stdio: 'ignore' });
  const missing = await Promise.race([
    once(broker, 'error').then(() => true),
    answers(port).then(() => false),
  ]);
  try {
    if (missing) {
      // These cases need a private broker with its own max_packet_size, never the shared one.
      t.skip('no mosquitto binary to run a broker with max_packet_size; install mosquitto'); // skip reason: without the mosquitto binary there is no private broker to start
      return;
    }
    await fn(`mqtt://127.0.0.1:${port}`);
  } finally {
    broker.kill();
    await rm(directory, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on `port`. */
async function answers(port: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = netConnect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

void test(
  'too large - a message over the maximum packet size an mqtt 5 broker states in its CONNACK is parked before it is sent (DLV-9)',
  { timeout: 60_000 },
  async (t) => {
    await withOwnMosquitto(t, 10_000, async (url) => {
      const rig = await parkingRig(mqttSink(url, 'orders'));
      try {
        await rig.send(bytes(20_000));
        await rig.send(new TextMessage('small'));
        assert.match(
          (await rig.parked()).getStringProperty(ERROR_REASON)!,
          /is too large: 20\d{3} bytes, over the limit of 10000 bytes of the mqtt broker \(the maximum packet size in its CONNACK\)$/,
        );
        await rig.delivered(1);
        assert.equal(rig.bridge.counters.reconnects, 0, 'the broker never saw it');
      } finally {
        await rig.close();
      }
    });
  },
);

void test(
  'too large - an mqtt broker that disconnects with reason 0x95 (packet too large) during a send has it parked as poison, and the next one flows (DLV-9, BRG-5)',
  { timeout: 60_000 },
  async (t) => {
    await withOwnMosquitto(t, 10_000, async (url) => {
      // maxMessageBytes above the broker's limit: the packet goes out and the broker answers.
      const rig = await parkingRig(mqttSink(url, 'orders', { maxMessageBytes: 1_000_000 }));
      try {
        const big = bytes(20_000);
        await rig.send(big);
        await rig.send(new TextMessage('small'));
        assert.equal(
          (await rig.parked()).getStringProperty(ERROR_REASON),
          `poison: PoisonMessageError: the MQTT broker disconnected (reason 0x95, packet too large) while message '${big.getJMSMessageID()}' was being sent`,
        );
        await rig.delivered(1);
      } finally {
        await rig.close();
      }
    });
  },
);
