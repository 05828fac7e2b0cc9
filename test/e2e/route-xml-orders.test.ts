/**
 * The product's headline route, end to end through the real `jms-gateway run` process: XML orders
 * published to RabbitMQ land in the gateway's queue://orders, two bridges with JMS_BEA_SELECT
 * selectors split them by region into two Kafka topics keyed by order id (so each order's
 * updates stay in order), and a malformed order is parked in queue://orders.errors, where the
 * admin API shows it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { connect } from 'amqplib';
import { amqpBroker, kafkaBroker } from '../helpers/brokers.js';
import { createKafkaTopics, kafkaClient } from '../helpers/kafka-topics.js';
import {
  adminJson,
  eventually,
  killGateway,
  type RunningGateway,
  startGateway,
  workspace,
} from './gateway-harness.js';

const amqp = await amqpBroker();
const kafka = await kafkaBroker();
const skip = amqp.skip || kafka.skip;

const ORDER_IDS = ['o-1', 'o-2', 'o-3', 'o-4', 'o-5', 'o-6'];
const REGION: Record<string, 'EU' | 'US'> = {
  'o-1': 'EU',
  'o-2': 'US',
  'o-3': 'EU',
  'o-4': 'US',
  'o-5': 'EU',
  'o-6': 'US',
};
const UPDATES = 4;
const MALFORMED = '<order id="o-bad"><region>EU</region><total>12.50</total>';

function configYaml(queue: string, topics: { eu: string; us: string }, brokers: readonly string[]): string {
  const kafkaTarget = (topic: string) =>
    `{ type: kafka, connection: kafka, topic: ${topic}, key: { from: xpath, expression: /order/@id } }`;
  return [
    'store: { path: ./data }',
    'shutdown: { deadlineMs: 10000 }',
    'connections:',
    '  rabbit: { type: amqp, url: "${AMQP_URL}" }',
    `  kafka: { type: kafka, brokers: ${JSON.stringify(brokers)}, connectionTimeout: 5000 }`,
    'destinations:',
    '  queues: [{ name: orders }, { name: orders.errors }]',
    'bridges:',
    '  - name: orders-in',
    `    source: { type: amqp, connection: rabbit, queue: ${queue}, prefetch: 20 }`,
    '    target: { type: jms, destination: queue://orders }',
    '    reconnect: { minMs: 500, maxMs: 5000 }',
    ...(['eu', 'us'] as const).flatMap((region) => [
      `  - name: orders-${region}`,
      '    source: { type: jms, destination: queue://orders }',
      `    selector: "JMS_BEA_SELECT('xpath', '/order/region') = '${region.toUpperCase()}'"`,
      `    target: ${kafkaTarget(topics[region])}`,
      '    errorDestination: { type: jms, destination: queue://orders.errors }',
      '    retry: { delay: { kind: fixed, ms: 500 }, limit: 3 }',
      '    reconnect: { minMs: 500, maxMs: 5000 }',
    ]),
    '  - name: orders-unroutable',
    '    source: { type: jms, destination: queue://orders }',
    '    selector: >-',
    "      JMS_BEA_SELECT('xpath', '/order/region') IS NULL",
    "      OR JMS_BEA_SELECT('xpath', '/order/region') NOT IN ('EU', 'US')",
    '    target: { type: jms, destination: queue://orders.errors }',
    '',
  ].join('\n');
}

interface Record_ {
  key: string;
  seq: number;
  body: string;
}

test(
  'route xml orders - RabbitMQ to an internal queue, split by XPath into two Kafka topics keyed by order id, malformed parked',
  { timeout: 90_000, skip },
  async () => {
    if (amqp.skip !== false || kafka.skip !== false) return;
    const id = randomUUID();
    const queue = `orders-${id}`;
    const topics = { eu: `orders-eu-${id}`, us: `orders-us-${id}` };
    const client = kafkaClient(kafka.brokers, 'e2e');
    const admin = client.admin();
    const consumer = client.consumer({
      groupId: `e2e-${id}`,
      sessionTimeout: 10_000,
      heartbeatInterval: 1_000,
    });
    const rabbit = await connect(amqp.url);
    const channel = await rabbit.createConfirmChannel();
    const space = await workspace({ 'gateway.yaml': configYaml(queue, topics, kafka.brokers) });
    let gateway: RunningGateway | undefined;
    try {
      await admin.connect();
      await createKafkaTopics(admin, [
        { topic: topics.eu, numPartitions: 3, replicationFactor: 1 },
        { topic: topics.us, numPartitions: 3, replicationFactor: 1 },
      ]);
      await channel.assertQueue(queue, { durable: false, autoDelete: false });

      const running = await startGateway('gateway.yaml', space.dir, { AMQP_URL: amqp.url });
      gateway = running;

      // Updates of each order interleaved across orders; the malformed one in the middle.
      for (let seq = 1; seq <= UPDATES; seq++) {
        for (const orderId of ORDER_IDS) {
          const xml = `<order id="${orderId}" seq="${seq}"><region>${REGION[orderId]}</region><total>${seq}0.00</total></order>`;
          channel.sendToQueue(queue, Buffer.from(xml), { contentType: 'application/xml', persistent: true });
        }
        if (seq === 2)
          channel.sendToQueue(queue, Buffer.from(MALFORMED), {
            contentType: 'application/xml',
            persistent: true,
          });
      }
      await channel.waitForConfirms();

      const received = new Map<string, Record_[]>([
        [topics.eu, []],
        [topics.us, []],
      ]);
      await consumer.connect();
      await consumer.subscribe({ topics: [topics.eu, topics.us], fromBeginning: true });
      await consumer.run({
        eachMessage: ({ topic, message }) => {
          const body = message.value?.toString('utf8') ?? '';
          const seq = Number(/seq="(\d+)"/.exec(body)?.[1]);
          received.get(topic)!.push({ key: message.key?.toString('utf8') ?? '', seq, body });
          return Promise.resolve();
        },
      });
      const perTopic = (ORDER_IDS.length / 2) * UPDATES;
      await eventually(
        () =>
          Promise.resolve(
            received.get(topics.eu)!.length >= perTopic && received.get(topics.us)!.length >= perTopic
              ? true
              : undefined,
          ),
        `${perTopic} records on each Kafka topic`,
        60_000,
      );

      for (const [topic, region] of [
        [topics.eu, 'EU'],
        [topics.us, 'US'],
      ] as const) {
        const records = received.get(topic)!;
        assert.equal(records.length, perTopic, `${topic}: no duplicates`);
        for (const record of records) {
          assert.equal(REGION[record.key], region, `${record.key} went to ${topic}`);
          assert.match(record.body, new RegExp(`^<order id="${record.key}" seq="${record.seq}">`));
        }
        for (const orderId of ORDER_IDS.filter((o) => REGION[o] === region)) {
          assert.deepEqual(
            records.filter((r) => r.key === orderId).map((r) => r.seq),
            [1, 2, 3, 4],
            `order ${orderId} kept its order`,
          );
        }
      }

      const parked = await eventually(async () => {
        const messages = await adminJson<{ type: string; body: string }[]>(
          running.admin,
          '/destinations/queue/orders.errors/messages',
        );
        return messages.length > 0 ? messages : undefined;
      }, 'the malformed order in queue://orders.errors');
      assert.deepEqual(
        parked.map((m) => [m.type, m.body]),
        [['xml', MALFORMED]],
      );
      const bridges = await adminJson<{ name: string; status: string; counters: Record<string, number> }[]>(
        running.admin,
        '/bridges',
      );
      const counters = Object.fromEntries(bridges.map((b) => [b.name, b.counters.out]));
      assert.deepEqual(counters, {
        'orders-in': ORDER_IDS.length * UPDATES + 1,
        'orders-eu': perTopic,
        'orders-us': perTopic,
        'orders-unroutable': 1,
      });
      const stats = await adminJson<{ messagesCurrent: number }>(running.admin, '/destinations/queue/orders');
      assert.equal(stats.messagesCurrent, 0);

      const result = await running.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
      assert.ok(
        !result.stdout.includes(amqp.url),
        'the AMQP URL (a secret from the environment) is never logged',
      );
    } finally {
      await killGateway(gateway);
      await consumer.disconnect().catch(() => undefined);
      await admin.deleteTopics({ topics: [topics.eu, topics.us] }).catch(() => undefined);
      await admin.deleteGroups([`e2e-${id}`]).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
      await channel.deleteQueue(queue).catch(() => undefined);
      await rabbit.close().catch(() => undefined);
      await space.cleanup();
    }
  },
);
