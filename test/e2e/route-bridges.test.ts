/**
 * Bridges end to end through the real `jms-gateway run` process and the real brokers (issue 6,
 * item 6): MQTT 5 user properties reach AMQP intact; Kafka records fan out through an internal
 * topic to a durable subscription with a selector and on to MQTT; and an AMQP target that goes
 * away for a while (a TCP proxy in front of the shared broker is closed, the broker itself keeps
 * running for everyone else) gets everything, in order, once it is back.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket, connect as connectTcp } from 'node:net';
import { test } from 'node:test';
import { connect as amqpConnect, type ConsumeMessage } from 'amqplib';
import { connectAsync, type IPublishPacket } from 'mqtt';
import { amqpBroker, kafkaBroker, mqttBroker } from '../helpers/brokers.js';
import { createKafkaTopics, kafkaClient } from '../helpers/kafka-topics.js';
import {
  adminJson,
  bridgeView,
  eventually,
  killGateway,
  type RunningGateway,
  startGateway,
  whenBridgeStatus,
  workspace,
} from './gateway-harness.js';

const amqp = await amqpBroker();
const mqtt = await mqttBroker();
const kafka = await kafkaBroker();

/** Collects what arrives on an AMQP queue. */
async function amqpReader(url: string, queue: string) {
  const connection = await amqpConnect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue(queue, { durable: false, autoDelete: false });
  const received: ConsumeMessage[] = [];
  await channel.consume(queue, (message) => message && received.push(message), { noAck: true });
  return {
    received,
    async close() {
      await channel.deleteQueue(queue).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

test(
  'route bridges - MQTT 5 user properties and properties arrive in AMQP intact',
  { timeout: 90_000, skip: amqp.skip || mqtt.skip },
  async () => {
    if (amqp.skip !== false || mqtt.skip !== false) return;
    const id = randomUUID();
    const topic = `e2e/devices/${id}`;
    const queue = `e2e-devices-${id}`;
    const out = await amqpReader(amqp.url, queue);
    const space = await workspace({
      'gateway.yaml': [
        'bridges:',
        '  - name: devices-in',
        `    source: { type: mqtt, url: "\${MQTT_URL}", topic: "${topic}", qos: 1, clean: false, clientId: e2e-src-${id} }`,
        `    target: { type: amqp, url: "\${AMQP_URL}", queue: ${queue} }`,
        '',
      ].join('\n'),
    });
    const publisher = await connectAsync(mqtt.url, { protocolVersion: 5, clientId: `e2e-pub-${id}` });
    let gateway: RunningGateway | undefined;
    try {
      gateway = await startGateway('gateway.yaml', space.dir, { AMQP_URL: amqp.url, MQTT_URL: mqtt.url });
      await whenBridgeStatus(gateway.admin, 'devices-in', 'connected');
      await publisher.publishAsync(topic, '{"temperature":21.5}', {
        qos: 1,
        properties: {
          contentType: 'application/json',
          correlationData: Buffer.from('reading-42'),
          userProperties: {
            region: 'EU',
            deviceId: 'd-ünï-7',
            JMSType: 'reading',
            sequence: '42',
            calibrated: 'true',
            'x-jms-types': 'sequence:long,calibrated:boolean',
          },
        },
      });
      const [message] = await eventually(
        () => Promise.resolve(out.received.length > 0 ? out.received : undefined),
        'the reading on the AMQP queue',
      );
      assert.ok(message);
      assert.equal(message.content.toString('utf8'), '{"temperature":21.5}');
      assert.equal(message.properties.correlationId, 'reading-42');
      assert.equal(message.properties.type, 'reading');
      const headers = message.properties.headers ?? {};
      assert.equal(headers['region'], 'EU');
      assert.equal(headers['deviceId'], 'd-ünï-7');
      assert.equal(headers['sequence'], 42, 'a typed long stays a number');
      assert.equal(headers['calibrated'], true, 'a typed boolean stays a boolean');
      const counters = (await bridgeView(gateway.admin, 'devices-in')).counters;
      assert.equal(counters['out'], 1);
      const result = await gateway.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
    } finally {
      await killGateway(gateway);
      await publisher.endAsync().catch(() => undefined);
      await out.close();
      await space.cleanup();
    }
  },
);

test(
  'route bridges - Kafka to an internal topic, a durable subscription with a selector to MQTT, kept while paused',
  { timeout: 120_000, skip: kafka.skip || mqtt.skip },
  async () => {
    if (kafka.skip !== false || mqtt.skip !== false) return;
    const id = randomUUID();
    const kafkaTopic = `e2e-alerts-${id}`;
    const mqttTopic = `e2e/alerts/${id}/severe`;
    const client = kafkaClient(kafka.brokers, 'e2e');
    const admin = client.admin();
    const producer = client.producer();
    const subscriber = await connectAsync(mqtt.url, { protocolVersion: 5, clientId: `e2e-sub-${id}` });
    const received: { body: string; severity: unknown }[] = [];
    subscriber.on('message', (_topic, payload, packet: IPublishPacket) =>
      received.push({
        body: payload.toString('utf8'),
        severity: packet.properties?.userProperties?.['severity'],
      }),
    );
    await subscriber.subscribeAsync(mqttTopic, { qos: 1 });
    const space = await workspace({
      'gateway.yaml': [
        'store: { path: ./data }',
        'destinations:',
        '  topics: [{ name: alerts }]',
        'bridges:',
        '  - name: alerts-in',
        `    source: { type: kafka, brokers: ${JSON.stringify(kafka.brokers)}, topic: ${kafkaTopic}, groupId: e2e-${id}, fromBeginning: true, foreignBody: text }`,
        '    target: { type: jms, destination: topic://alerts }',
        '  - name: severe-out',
        '    source:',
        '      type: jms',
        '      destination: topic://alerts',
        `      durable: { clientId: e2e-${id}, name: severe }`,
        `      selector: "severity IN ('high', 'critical')"`,
        `    target: { type: mqtt, url: "\${MQTT_URL}", topic: "${mqttTopic}", qos: 1 }`,
        '',
      ].join('\n'),
    });
    const send = (from: number, to: number) =>
      producer.send({
        topic: kafkaTopic,
        messages: Array.from({ length: to - from + 1 }, (_, i) => {
          const n = from + i;
          const severity = ['low', 'high', 'medium', 'critical'][n % 4]!;
          return { value: `alert-${n}`, headers: { severity } };
        }),
      });
    const severeOf = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => from + i)
        .filter((n) => n % 4 === 1 || n % 4 === 3)
        .map((n) => `alert-${n}`);
    let gateway: RunningGateway | undefined;
    try {
      await admin.connect();
      await createKafkaTopics(admin, [{ topic: kafkaTopic, numPartitions: 1 }]);
      await producer.connect();
      gateway = await startGateway('gateway.yaml', space.dir, { MQTT_URL: mqtt.url });
      const running = gateway;
      await whenBridgeStatus(running.admin, 'alerts-in', 'connected');
      await send(1, 20);
      await eventually(
        () => Promise.resolve(received.length >= 10 ? true : undefined),
        'the severe alerts of the first 20 on MQTT',
      );
      await adminJson(running.admin, '/bridges/severe-out/pause', { method: 'POST' });
      await whenBridgeStatus(running.admin, 'severe-out', 'paused');
      await send(21, 40);
      await eventually(
        async () =>
          (await bridgeView(running.admin, 'alerts-in')).counters['out'] === 40 ? true : undefined,
        'all 40 alerts in topic://alerts',
      );
      assert.equal(received.length, 10, 'nothing goes out while the bridge is paused');
      await adminJson(running.admin, '/bridges/severe-out/resume', { method: 'POST' });
      await eventually(
        () => Promise.resolve(received.length >= 20 ? true : undefined),
        'the severe alerts kept by the durable subscription',
      );
      assert.deepEqual(
        received.map((r) => r.body),
        severeOf(1, 40),
        'only high and critical, each once, in order',
      );
      assert.ok(received.every((r) => r.severity === 'high' || r.severity === 'critical'));
      const result = await running.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
    } finally {
      await killGateway(gateway);
      await subscriber.endAsync().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await admin.deleteTopics({ topics: [kafkaTopic] }).catch(() => undefined);
      await admin.deleteGroups([`e2e-${id}`]).catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
      await space.cleanup();
    }
  },
);

/** A TCP proxy to `target` that the test can take down (every connection cut) and bring back on the same port. */
async function tcpProxy(target: { host: string; port: number }) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const current = createServer((client) => {
        const upstream = connectTcp(target.port, target.host);
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => socket.destroy());
        }
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
      });
      current.once('error', reject);
      current.listen(port, '127.0.0.1', () => {
        port = (current.address() as { port: number }).port;
        server = current;
        resolve();
      });
    });
  await open();
  return {
    get port() {
      return port;
    },
    open,
    /** Stops listening and cuts every connection: the target is unreachable. */
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        if (server) server.close(() => resolve());
        else resolve();
        server = undefined;
      }),
  };
}

test(
  'route bridges - an AMQP target down for a while gets everything, in order, once it is back',
  { timeout: 120_000, skip: amqp.skip },
  async () => {
    if (amqp.skip !== false) return;
    const id = randomUUID();
    const input = `e2e-down-in-${id}`;
    const output = `e2e-down-out-${id}`;
    const broker = new URL(amqp.url);
    const proxy = await tcpProxy({ host: broker.hostname, port: Number(broker.port || 5672) });
    const viaProxy = new URL(amqp.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    const out = await amqpReader(amqp.url, output);
    const connection = await amqpConnect(amqp.url);
    const channel = await connection.createConfirmChannel();
    await channel.assertQueue(input, { durable: false, autoDelete: false });
    const space = await workspace({
      'gateway.yaml': [
        'bridges:',
        '  - name: to-target',
        `    source: { type: amqp, url: "\${AMQP_URL}", queue: ${input}, prefetch: 20 }`,
        `    target: { type: amqp, url: "\${TARGET_URL}", queue: ${output} }`,
        '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
        '',
      ].join('\n'),
    });
    const publish = async (from: number, to: number) => {
      for (let n = from; n <= to; n++)
        channel.sendToQueue(input, Buffer.from(`m-${n}`), { persistent: true });
      await channel.waitForConfirms();
    };
    const arrived = () => out.received.map((m) => m.content.toString('utf8'));
    let gateway: RunningGateway | undefined;
    try {
      gateway = await startGateway('gateway.yaml', space.dir, {
        AMQP_URL: amqp.url,
        TARGET_URL: viaProxy.toString(),
      });
      const running = gateway;
      await whenBridgeStatus(running.admin, 'to-target', 'connected');
      await publish(1, 20);
      await eventually(() => Promise.resolve(out.received.length >= 20 ? true : undefined), 'the first 20');

      await proxy.close();
      await publish(21, 60);
      const down = await whenBridgeStatus(running.admin, 'to-target', 'reconnecting');
      assert.equal(out.received.length, 20, 'nothing reaches the target while it is down');
      assert.equal(down.counters['dropped'], 0);

      await proxy.open();
      await eventually(
        () => Promise.resolve(out.received.length >= 60 ? true : undefined),
        'all 60 after the target came back',
        60_000,
      );
      await whenBridgeStatus(running.admin, 'to-target', 'connected');
      assert.deepEqual(
        arrived(),
        Array.from({ length: 60 }, (_, i) => `m-${i + 1}`),
        'everything, once, in order',
      );
      const counters = (await bridgeView(running.admin, 'to-target')).counters;
      assert.ok((counters['reconnects'] ?? 0) >= 1, 'the bridge reconnected');
      assert.equal(counters['dropped'], 0);
      assert.equal(counters['out'], 60);
      const result = await running.stop('SIGTERM');
      assert.equal(result.code, 0, result.stderr);
    } finally {
      await killGateway(gateway);
      await proxy.close();
      await channel.deleteQueue(input).catch(() => undefined);
      await connection.close().catch(() => undefined);
      await out.close();
      await space.cleanup();
    }
  },
);
