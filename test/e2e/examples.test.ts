/**
 * Every example in config/examples runs against fresh brokers: the real gateway starts on the
 * example's own text, with the broker names it uses made unique (so nothing exists before, and
 * parallel runs do not meet), declares or creates what it needs, and its sample traffic, sent
 * with the real clients, lands where the example's comment says. What the examples created is
 * deleted afterwards.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect as amqpConnect } from 'amqplib';
import type { KafkaMessage } from 'kafkajs';
import { connectAsync as mqttConnect } from 'mqtt';
import { amqpBroker, connected, kafkaBroker, mqttBroker } from '../helpers/brokers.js';
import { kafkaClient } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { type Cleanup, teardown } from '../helpers/teardown.js';
import {
  adminJson,
  eventually,
  killGateway,
  type RunningGateway,
  repositoryRoot,
  startGateway,
  whenBridgeStatus,
  workspace,
} from './gateway-harness.js';

const amqp = await amqpBroker();
const kafka = await kafkaBroker();
const mqtt = await mqttBroker();

/** The example's text with each name replaced; every name must occur, so a changed example fails here. */
async function example(file: string, names: Record<string, string>): Promise<string> {
  let text = await readFile(join(repositoryRoot, 'config/examples', file), 'utf8');
  for (const [from, to] of Object.entries(names)) {
    assert.ok(text.includes(from), `${file} no longer contains '${from}'`);
    text = text.split(from).join(to);
  }
  return text;
}

/** Starts the gateway on `yaml` in a fresh directory; `cleanup` stops it and removes the directory. */
async function gatewayOn(
  cleanup: Cleanup,
  yaml: string,
  env: Record<string, string>,
): Promise<RunningGateway> {
  const space = await workspace({ 'gateway.yaml': yaml });
  const running: { gateway?: RunningGateway } = {};
  cleanup(async () => {
    if (running.gateway) await running.gateway.stop('SIGTERM');
    await killGateway(running.gateway);
    await space.cleanup();
  });
  running.gateway = await startGateway(space.path('gateway.yaml'), space.dir, env);
  return running.gateway;
}

/** Reads `topic` from the beginning until `count` records arrived. */
async function readRecords(topic: string, count: number): Promise<KafkaMessage[]> {
  const consumer = kafkaClient(connected(kafka).brokers, 'examples').consumer({
    groupId: uniqueName('g-examples'),
    sessionTimeout: 6000,
  });
  const records: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: ({ message }) => {
        records.push(message);
        return Promise.resolve();
      },
    });
    await eventually(
      () => Promise.resolve(records.length >= count ? true : undefined),
      `${count} records in '${topic}'`,
      60_000,
    );
  } finally {
    await consumer.disconnect();
  }
  return records;
}

async function deleteTopics(...topics: string[]): Promise<void> {
  const admin = kafkaClient(connected(kafka).brokers, 'examples').admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => {});
  await admin.disconnect();
}

async function deleteAmqp(url: string, queues: string[], exchanges: string[] = []): Promise<void> {
  const connection = await amqpConnect(url);
  const channel = await connection.createChannel();
  for (const queue of queues) await channel.deleteQueue(queue);
  for (const exchange of exchanges) await channel.deleteExchange(exchange);
  await connection.close();
}

/**
 * Waits until the bridges reading from brokers are connected: before that, a queue may not be
 * declared, a topic not created, a subscription not made, and sample traffic would be lost.
 */
async function connectedBridges(admin: string, ...names: string[]): Promise<void> {
  for (const name of names) await whenBridgeStatus(admin, name, 'connected', 60_000);
}

/**
 * error-replay.yaml on a unique exchange and queue, both deleted after the test; `binding` is what
 * the example's binding line becomes (by default the same binding on the unique names).
 */
async function errorReplay(
  cleanup: Cleanup,
  url: string,
  binding?: Record<string, string>,
): Promise<{ exchange: string; queue: string; yaml: string }> {
  const exchange = uniqueName('payments');
  const queue = `${exchange}.outgoing`;
  cleanup(() => deleteAmqp(url, [queue], [exchange]));
  const yaml = await example('error-replay.yaml', {
    'name: payments, type: topic': `name: ${exchange}, type: topic`,
    'exchange: payments\n': `exchange: ${exchange}\n`,
    ...(binding ?? {
      'bindings: [{ queue: payments.outgoing, exchange: payments,': `bindings: [{ queue: ${queue}, exchange: ${exchange},`,
    }),
    'queues: [{ name: payments.outgoing }]': `queues: [{ name: ${queue} }]`,
  });
  return { exchange, queue, yaml };
}

test(
  'examples - error-replay declares its exchange, queue and binding and delivers a payment to RabbitMQ',
  { skip: amqp.skip, timeout: 120_000 },
  async (t) => {
    const cleanup = teardown(t);
    const { url } = connected(amqp);
    const { queue, yaml } = await errorReplay(cleanup, url);
    const gateway = await gatewayOn(cleanup, yaml, { AMQP_URL: url });
    await connectedBridges(gateway.admin, 'payments-out');
    await adminJson(gateway.admin, '/destinations/queue/payments/messages', {
      method: 'POST',
      body: JSON.stringify({ type: 'xml', body: '<payment id="1"/>' }),
    });
    const connection = await amqpConnect(url);
    cleanup(() => connection.close());
    const channel = await connection.createChannel();
    const got = await eventually(
      async () => (await channel.get(queue, { noAck: true })) || undefined,
      'the payment',
    );
    assert.equal(got.content.toString(), '<payment id="1"/>');
  },
);

test(
  'examples - error-replay: a payment no queue is bound for (NO_ROUTE) is retried, visible as retrying, and delivered in order once a queue is bound',
  { skip: amqp.skip, timeout: 120_000 },
  async (t) => {
    const cleanup = teardown(t);
    const { url } = connected(amqp);
    // The example without its binding: the exchange exists and routes nowhere.
    const { exchange, queue, yaml } = await errorReplay(cleanup, url, {
      '        bindings: [{ queue: payments.outgoing, exchange: payments, routingKey: payments.# }]\n': '',
    });
    const gateway = await gatewayOn(cleanup, yaml, { AMQP_URL: url });
    for (const id of ['1', '2'])
      await adminJson(gateway.admin, '/destinations/queue/payments/messages', {
        method: 'POST',
        body: JSON.stringify({ type: 'text', body: `payment ${id}` }),
      });
    const retrying = await whenBridgeStatus(gateway.admin, 'payments-out', 'retrying');
    assert.match(retrying.lastError ?? '', /unroutable.*NO_ROUTE/);
    const parked = await adminJson<unknown[]>(gateway.admin, '/destinations/queue/payments.errors/messages');
    assert.deepEqual(parked, [], 'nothing is parked for a missing binding');

    const connection = await amqpConnect(url);
    cleanup(() => connection.close());
    const channel = await connection.createChannel();
    await channel.bindQueue(queue, exchange, 'payments.#');
    const bodies: string[] = [];
    await eventually(
      async () => {
        const got = await channel.get(queue, { noAck: true });
        if (got) bodies.push(got.content.toString());
        return bodies.length === 2 ? true : undefined;
      },
      'both payments once the queue is bound',
      60_000,
    );
    assert.deepEqual(bodies, ['payment 1', 'payment 2']);
    const after = await whenBridgeStatus(gateway.admin, 'payments-out', 'connected');
    assert.equal(after.counters.out, 2);
  },
);

test(
  'examples - kafka-to-mqtt-durable creates its Kafka topic and forwards only severe alerts to MQTT',
  { skip: kafka.skip || mqtt.skip, timeout: 120_000 },
  async (t) => {
    const cleanup = teardown(t);
    const { brokers } = connected(kafka);
    const { url } = connected(mqtt);
    const topic = uniqueName('alerts');
    const mqttTopic = `${uniqueName('alerts')}/severe`;
    cleanup(() => deleteTopics(topic));
    const yaml = await example('kafka-to-mqtt-durable.yaml', {
      'topic: alerts\n': `topic: ${topic}\n`,
      'groupId: jms-gateway-alerts': `groupId: ${uniqueName('g-alerts')}`,
      // A client id of its own too: brokers disconnect the older of two equal ones.
      'topic: alerts/severe': `topic: ${mqttTopic}\n      clientId: ${uniqueName('severe-alerts')}`,
    });
    const subscriber = await mqttConnect(url, { protocolVersion: 5 });
    cleanup(() => subscriber.endAsync());
    const received: string[] = [];
    subscriber.on('message', (_topic, payload) => received.push(payload.toString()));
    await subscriber.subscribeAsync(mqttTopic, { qos: 1 });
    const gateway = await gatewayOn(cleanup, yaml, { KAFKA_BROKER: brokers[0]!, MQTT_URL: url });
    await connectedBridges(gateway.admin, 'alerts-in', 'severe-alerts-out');

    const producer = kafkaClient(connected(kafka).brokers, 'examples').producer();
    await producer.connect();
    cleanup(() => producer.disconnect());
    await producer.send({
      topic,
      messages: [
        { key: 'disk', value: 'disk full', headers: { severity: 'critical' } },
        { key: 'fan', value: 'fan slow', headers: { severity: 'low' } },
        { key: 'cpu', value: 'cpu hot', headers: { severity: 'high' } },
      ],
    });
    await eventually(
      () => Promise.resolve(received.length >= 2 ? true : undefined),
      'the severe alerts on MQTT',
      60_000,
    );
    assert.deepEqual([...received].sort(), ['cpu hot', 'disk full']);
  },
);

test(
  'examples - mqtt-devices-to-kafka creates its Kafka topic and keys each reading by its device',
  { skip: kafka.skip || mqtt.skip, timeout: 120_000 },
  async (t) => {
    const cleanup = teardown(t);
    const { brokers } = connected(kafka);
    const { url } = connected(mqtt);
    const prefix = uniqueName('plant');
    const topic = uniqueName('device-telemetry');
    cleanup(() => deleteTopics(topic));
    const yaml = await example('mqtt-devices-to-kafka.yaml', {
      'topic: devices/+/telemetry': `topic: ${prefix}/devices/+/telemetry`,
      'clientId: jms-gateway-telemetry': `clientId: ${uniqueName('telemetry')}`,
      'topic: device-telemetry': `topic: ${topic}`,
    });
    const gateway = await gatewayOn(cleanup, yaml, { KAFKA_BROKER: brokers[0]!, MQTT_URL: url });
    await connectedBridges(gateway.admin, 'telemetry');
    const device = await mqttConnect(url, { protocolVersion: 5 });
    cleanup(() => device.endAsync());
    for (const [id, reading] of [
      ['d-1', '20.5'],
      ['d-2', '18.0'],
      ['d-1', '20.7'],
    ] as const)
      await device.publishAsync(`${prefix}/devices/${id}/telemetry`, reading, {
        qos: 1,
        properties: { userProperties: { deviceId: id } },
      });
    const records = await readRecords(topic, 3);
    const byDevice = (id: string) =>
      records.filter((record) => record.key?.toString() === id).map((record) => record.value?.toString());
    assert.deepEqual(byDevice('d-1'), ['20.5', '20.7']);
    assert.deepEqual(byDevice('d-2'), ['18.0']);
  },
);

test(
  'examples - xml-orders-rabbitmq-to-kafka declares its queue, creates its topics and splits orders by region',
  { skip: amqp.skip || kafka.skip, timeout: 150_000 },
  async (t) => {
    const cleanup = teardown(t);
    const { url } = connected(amqp);
    const { brokers } = connected(kafka);
    const queue = uniqueName('orders');
    const eu = uniqueName('orders.eu');
    const us = uniqueName('orders.us');
    cleanup(() => deleteAmqp(url, [queue]));
    cleanup(() => deleteTopics(eu, us));
    const yaml = await example('xml-orders-rabbitmq-to-kafka.yaml', {
      'queue: orders\n': `queue: ${queue}\n`,
      'declare: { queues: [{ name: orders }] }': `declare: { queues: [{ name: ${queue} }] }`,
      'topic: orders.eu': `topic: ${eu}`,
      'topic: orders.us': `topic: ${us}`,
    });
    const gateway = await gatewayOn(cleanup, yaml, { AMQP_URL: url, KAFKA_BROKER: brokers[0]! });
    await connectedBridges(gateway.admin, 'orders-in', 'orders-eu', 'orders-us');
    const connection = await amqpConnect(url);
    cleanup(() => connection.close());
    const channel = await connection.createConfirmChannel();
    const orders = [
      '<order id="o-1"><region>EU</region></order>',
      '<order id="o-2"><region>US</region></order>',
      '<order id="o-3"><region>EU</region></order>',
      '<order id="o-4"><region>APAC</region></order>',
    ];
    for (const order of orders)
      channel.sendToQueue(queue, Buffer.from(order), { contentType: 'application/xml' });
    await channel.waitForConfirms();
    const [euRecords, usRecords] = await Promise.all([readRecords(eu, 2), readRecords(us, 1)]);
    // Keyed by order id into three partitions: order holds per key, not across these two keys.
    assert.deepEqual(
      euRecords
        .map((record) => [record.key?.toString(), record.value?.toString()])
        .sort(([a], [b]) => String(a).localeCompare(String(b))),
      [
        ['o-1', orders[0]],
        ['o-3', orders[2]],
      ],
    );
    assert.deepEqual(
      usRecords.map((record) => [record.key?.toString(), record.value?.toString()]),
      [['o-2', orders[1]]],
    );
    const parked = await eventually(async () => {
      const messages = await adminJson<{ body: string }[]>(
        gateway.admin,
        '/destinations/queue/orders.errors/messages',
      );
      return messages.length > 0 ? messages : undefined;
    }, 'the unroutable order in queue://orders.errors');
    assert.deepEqual(
      parked.map((message) => message.body),
      [orders[3]],
    );
  },
);
