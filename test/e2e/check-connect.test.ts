/**
 * `jms-gateway check --connect FILE` through the real command against real brokers: a file whose
 * queues and topics exist (or are declared) passes; missing ones are positioned lines and exit
 * 1; a broker that refuses or never answers is a line within the time bound, not a hang.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { connect } from 'amqplib';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import { amqpBroker, connected, kafkaBroker, mqttBroker } from '../helpers/brokers.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { teardown } from '../helpers/teardown.js';
import { runCli, workspace } from './gateway-harness.js';

const amqp = await amqpBroker();
const kafka = await kafkaBroker();
const mqtt = await mqttBroker();
const skip = amqp.skip || kafka.skip || mqtt.skip;

/** A route from an AMQP queue to a Kafka topic, with an MQTT error destination. */
function routeYaml(queue: string, topic: string, brokers: readonly string[], extra: string[] = []): string {
  return [
    'store: { memory: true }',
    'connections:',
    `  kafka: { type: kafka, brokers: ${JSON.stringify(brokers)} }`,
    'destinations:',
    '  queues: [{ name: staged }]',
    'bridges:',
    '  - name: in',
    `    source: { type: amqp, url: "\${AMQP_URL}", queue: ${queue} }`,
    '    target: { type: jms, destination: queue://staged }',
    '  - name: out',
    '    source: { type: jms, destination: queue://staged }',
    `    target: { type: kafka, connection: kafka, topic: ${topic} }`,
    `    errorDestination: { type: mqtt, url: "\${MQTT_URL}", topic: ${uniqueName('errors')} }`,
    ...extra,
    '',
  ].join('\n');
}

test(
  'check --connect - a file whose queues and topics exist or are declared exits 0 and says what it could not check',
  { skip, timeout: 90_000 },
  async (t) => {
    const [rabbit, cluster, mosquitto] = [connected(amqp), connected(kafka), connected(mqtt)];
    const queue = uniqueName('q-check');
    const topic = uniqueName('t-check');
    const declaredQueue = uniqueName('q-check-declared');
    const cleanup = teardown(t);
    const connection = await connect(rabbit.url);
    cleanup(() => connection.close());
    const admin = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING }).admin();
    cleanup(() => admin.disconnect());
    const space = await workspace({
      'good.yaml': routeYaml(queue, topic, cluster.brokers, [
        '  - name: declared',
        `    source: { type: amqp, url: "\${AMQP_URL}", queue: ${declaredQueue}, declare: { queues: [{ name: ${declaredQueue} }] } }`,
        '    target: { type: jms, destination: queue://staged }',
      ]),
    });
    cleanup(() => space.cleanup());
    cleanup(() => admin.deleteTopics({ topics: [topic] }).catch(() => {}));
    cleanup(async () => (await connection.createChannel()).deleteQueue(queue));
    await (await connection.createChannel()).assertQueue(queue, { durable: false });
    await admin.connect();
    await createKafkaTopics(admin, [{ topic }]);

    const result = await runCli(['check', '--connect', space.path('good.yaml')], space.dir, {
      AMQP_URL: rabbit.url,
      MQTT_URL: mosquitto.url,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^ok$/m);
    assert.match(
      result.stdout,
      /note: .*good\.yaml:\d+:\d+: bridges\[1\]\.errorDestination: topic '.*' is not checked: MQTT brokers create topics on first use/,
    );
    const channel = await connection.createChannel();
    channel.on('error', () => {});
    await assert.rejects(channel.checkQueue(declaredQueue), /NOT_FOUND/, 'the check declares nothing');
  },
);

test(
  'check --connect - a missing queue and a missing topic exit 1 with file:line:col lines',
  { skip, timeout: 90_000 },
  async (t) => {
    const [rabbit, cluster, mosquitto] = [connected(amqp), connected(kafka), connected(mqtt)];
    const queue = uniqueName('q-missing');
    const topic = uniqueName('t-missing');
    const space = await workspace({ 'bad.yaml': routeYaml(queue, topic, cluster.brokers) });
    t.after(() => space.cleanup());
    const result = await runCli(['check', '--connect', space.path('bad.yaml')], space.dir, {
      AMQP_URL: rabbit.url,
      MQTT_URL: mosquitto.url,
    });
    assert.equal(result.code, 1, result.stdout);
    const lines = result.stderr.trim().split('\n');
    assert.deepEqual(lines, [
      `${space.path('bad.yaml')}:8:54: bridges[0].source.queue: queue '${queue}' does not exist on the broker: create it, or declare it at connect under declare.queues`,
      `${space.path('bad.yaml')}:12:54: bridges[1].target.topic: topic '${topic}' does not exist on the kafka cluster: create it, or set createTopic on the endpoint`,
      `2 problems in '${space.path('bad.yaml')}'`,
    ]);
    assert.doesNotMatch(result.stderr, /guest:guest/, 'credentials never appear');
  },
);

test(
  'check --connect - a broker that refuses or never answers is a clear line within the time bound',
  { timeout: 60_000 },
  async (t) => {
    // A port that accepts connections and never says a word: a hung broker.
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
    const { port } = silent.address() as { port: number };
    const refused = await new Promise<number>((found) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const free = (probe.address() as { port: number }).port;
        probe.close(() => found(free));
      });
    });
    const space = await workspace({
      'down.yaml': [
        'store: { memory: true }',
        'connections:',
        `  gone: { type: kafka, brokers: ['127.0.0.1:${refused}'] }`,
        'bridges:',
        '  - name: hung',
        `    source: { type: amqp, url: "amqp://guest:secret-pw@127.0.0.1:${port}", queue: q }`,
        '    target: { type: jms, destination: queue://x }',
        '  - name: gone',
        '    source: { type: jms, destination: queue://x }',
        '    target: { type: kafka, connection: gone, topic: t }',
        'destinations: { queues: [{ name: x }] }',
        '',
      ].join('\n'),
    });
    t.after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((closed) => silent.close(closed));
      await space.cleanup();
    });
    const started = Date.now();
    const result = await runCli(
      ['check', '--connect', '--timeout', '2000', space.path('down.yaml')],
      space.dir,
    );
    assert.equal(result.code, 1, result.stdout);
    assert.ok(Date.now() - started < 30_000, 'the check is bounded by --timeout');
    const file = space.path('down.yaml');
    assert.match(
      result.stderr,
      new RegExp(
        `^${file}:6:\\d+: bridges\\[0\\]\\.source(\\.url)?: (no answer from the amqp broker within 2000 ms \\(--timeout\\)|cannot connect to the AMQP broker at 127\\.0\\.0\\.1:${port}.*)$`,
        'm',
      ),
    );
    assert.match(
      result.stderr,
      new RegExp(
        // The brokers come from the connection: the line points there.
        `^${file}:3:\\d+: connections\\.gone\\.brokers: connecting to kafka at 127\\.0\\.0\\.1:${refused} failed: .*$`,
        'm',
      ),
    );
    assert.doesNotMatch(result.stderr, /secret-pw/, 'credentials never appear');
  },
);
