import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connectAsync, type IPublishPacket, type MqttClient } from 'mqtt';
import {
  ConfigValidationError,
  NotConnectedError,
  TextMessage,
  messageSnapshot,
  resolveConfig,
  type ConnectorContext,
  type Delivery,
} from '../../src/spi/index.js';
import { mqttConnector, MqttSink, MqttSource, type MqttConfig } from '../../connectors/mqtt/index.js';
import { Bridge } from '../../src/bridge/index.js';
import { brokerTest } from '../helpers/brokers.js';
import {
  OVERSIZE_AT,
  assertOversizeFailedAlone,
  kinds,
  numbered,
  oversizeBatch,
  relayedBroker,
} from '../helpers/batch-sends.js';
import { until } from '../helpers/until.js';
import { teardown } from '../helpers/teardown.js';
import { withTimeout } from '../helpers/timeout.js';
import { ALL_BODY_TYPES, sampleMessage } from '../unit/spi/sample-messages.js';

const TIMEOUT = { timeout: 30_000 };
const WAIT_MS = 10_000;

const context: ConnectorContext = {
  name: 'mqtt-it',
  logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
};

function config(url: string, fields: Record<string, unknown>): MqttConfig {
  const { config, errors } = resolveConfig(mqttConnector.config, { url, ...fields }, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

function signal(ms = WAIT_MS): AbortSignal {
  return AbortSignal.timeout(ms);
}

function topicName(): string {
  return `jms-gateway/it/${randomUUID()}`;
}

async function receive(source: MqttSource, ms = WAIT_MS): Promise<Delivery> {
  return withTimeout(source.receive(signal(ms)), ms, 'a delivery from the mqtt source');
}

/** Nothing arrives within `ms`. */
async function nothingWithin(source: MqttSource, ms: number): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('quiet')), ms);
  try {
    const delivery = await source.receive(controller.signal);
    assert.fail(`unexpected message ${String(delivery.message.getJMSMessageID())}`);
  } catch (error) {
    assert.match(String(error), /quiet/);
  } finally {
    clearTimeout(timer);
  }
}

/** A plain mqtt.js client: what a foreign publisher or subscriber sees. */
async function plainClient(url: string, protocolVersion: 4 | 5): Promise<MqttClient> {
  return connectAsync(url, {
    clientId: `plain-${randomUUID()}`,
    protocolVersion,
    reconnectPeriod: 0,
    clean: true,
  });
}

/** Ends a persistent session left on the broker by a test. */
async function dropSession(url: string, clientId: string, protocolVersion: 4 | 5): Promise<void> {
  const client = await connectAsync(url, { clientId, clean: true, protocolVersion, reconnectPeriod: 0 });
  await client.endAsync();
}

async function closeAll(...endpoints: Array<{ close(): Promise<void> }>): Promise<void> {
  for (const endpoint of endpoints) await endpoint.close();
}

async function roundTripEveryBodyType(url: string, fields: Record<string, unknown>): Promise<void> {
  const topic = topicName();
  const source = new MqttSource(config(url, { topic, clean: true, ...fields }), context);
  const sink = new MqttSink(config(url, { topic, ...fields }), context);
  try {
    await source.connect(signal());
    await sink.connect(signal());
    for (const bodyType of ALL_BODY_TYPES) {
      const sent = sampleMessage(bodyType, Date.now());
      await sink.send(sent, signal());
      const delivery = await receive(source);
      assert.equal(delivery.message.constructor, sent.constructor, bodyType);
      assert.deepEqual(messageSnapshot(delivery.message), messageSnapshot(sent), bodyType);
      assert.equal(delivery.orderingKey, topic);
      await delivery.settle({ kind: 'ack' });
    }
  } finally {
    await closeAll(sink, source);
  }
}

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 5: every body type, header and typed property comes back identical (BRG-6)',
  ({ url }) => roundTripEveryBodyType(url, { protocolVersion: 5, qos: 1 }),
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 5 at QoS 2: every body type comes back identical (BRG-6)',
  ({ url }) => roundTripEveryBodyType(url, { protocolVersion: 5, qos: 2 }),
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 3.1.1 envelope format: every body type, header and typed property comes back identical (BRG-6)',
  ({ url }) => roundTripEveryBodyType(url, { protocolVersion: 4, qos: 1, mqtt311Format: 'envelope' }),
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 3.1.1 at QoS 2 in envelope format comes back identical (BRG-6)',
  ({ url }) => roundTripEveryBodyType(url, { protocolVersion: 4, qos: 2 }),
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 5: a plain subscriber sees natural properties and user properties (BRG-6)',
  async ({ url }) => {
    const topic = topicName();
    const plain = await plainClient(url, 5);
    const sink = new MqttSink(config(url, { topic }), context);
    try {
      const received = new Promise<IPublishPacket>((resolve) =>
        plain.on('message', (_t, _p, packet) => resolve(packet)),
      );
      await plain.subscribeAsync(topic, { qos: 1 });
      await sink.connect(signal());
      const now = Date.now();
      await sink.send(sampleMessage('text', now), signal());
      const packet = await withTimeout(received, WAIT_MS, 'the plain subscriber to get the message');
      assert.equal(packet.payload.toString(), 'héllo wörld ✓ — "quotes" \n and newlines');
      const properties = packet.properties!;
      assert.equal(properties.contentType, 'text/plain; charset=utf-8');
      assert.equal(properties.payloadFormatIndicator, true);
      assert.equal(properties.correlationData?.toString(), 'corr-ü-42');
      assert.equal(properties.responseTopic, 'queue://replies');
      const user = properties.userProperties!;
      assert.equal(user['JMSMessageID'], 'ID:sample-text-1');
      assert.equal(user['JMSTimestamp'], String(now));
      assert.equal(user['qty'], '42');
      assert.equal(user['flag'], 'true');
      assert.equal(user['price'], '19.99');
      assert.equal(user['big'], '9223372036854775807');
      assert.equal(user['name'], 'wïdget, "quoted": yes');
    } finally {
      await sink.close();
      await plain.endAsync();
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 3.1.1 body format: a plain subscriber gets the body alone, a plain publisher a plain body',
  async ({ url }) => {
    const topic = topicName();
    const plain = await plainClient(url, 4);
    const sink = new MqttSink(config(url, { topic, protocolVersion: 4, mqtt311Format: 'body' }), context);
    const source = new MqttSource(
      config(url, { topic, protocolVersion: 4, mqtt311Format: 'body', plainBodyType: 'text', clean: true }),
      context,
    );
    try {
      const received = new Promise<Buffer>((resolve) =>
        plain.on('message', (_t, payload) => resolve(payload)),
      );
      await plain.subscribeAsync(topic, { qos: 1 });
      await sink.connect(signal());
      await source.connect(signal());
      await sink.send(sampleMessage('text'), signal());
      const payload = await withTimeout(received, WAIT_MS, 'the plain subscriber to get the message');
      assert.equal(payload.toString('utf8'), 'héllo wörld ✓ — "quotes" \n and newlines');
      const fromSink = await receive(source);
      assert.equal((fromSink.message as TextMessage).getText(), 'héllo wörld ✓ — "quotes" \n and newlines');
      assert.equal(fromSink.message.getJMSMessageID(), null, 'body format carries no headers');
      await fromSink.settle({ kind: 'ack' });
      await plain.publishAsync(topic, '21.5', { qos: 1 });
      const fromPlain = await receive(source);
      assert.equal((fromPlain.message as TextMessage).getText(), '21.5');
      await fromPlain.settle({ kind: 'ack' });
    } finally {
      await closeAll(sink, source);
      await plain.endAsync();
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - MQTT 5: a plain publisher’s message is read with natural types',
  async ({ url }) => {
    const topic = topicName();
    const plain = await plainClient(url, 5);
    const source = new MqttSource(config(url, { topic, clean: true }), context);
    try {
      await source.connect(signal());
      await plain.publishAsync(topic, '{"temp":21.5}', {
        qos: 1,
        properties: {
          contentType: 'application/json',
          responseTopic: 'devices/7/replies',
          userProperties: { unit: 'celsius', room: '12' },
        },
      });
      const delivery = await receive(source);
      const message = delivery.message as TextMessage;
      assert.equal(message.getText(), '{"temp":21.5}');
      assert.equal(message.getJMSReplyTo()?.toString(), 'topic://devices/7/replies');
      assert.equal(message.getStringProperty('unit'), 'celsius');
      assert.equal(message.getIntProperty('room'), 12, 'a string property reads as int per the JMS table');
      await delivery.settle({ kind: 'ack' });
    } finally {
      await source.close();
      await plain.endAsync();
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - settle(retry) hands the unacknowledged message out again, marked redelivered (BRG-4)',
  async ({ url }) => {
    const topic = topicName();
    const clientId = `src-${randomUUID()}`;
    const source = new MqttSource(config(url, { topic, clientId }), context);
    const sink = new MqttSink(config(url, { topic }), context);
    try {
      await source.connect(signal());
      await sink.connect(signal());
      await sink.send(new TextMessage('again'), signal());
      const first = await receive(source);
      assert.equal(first.message.getJMSRedelivered(), false);
      await first.settle({ kind: 'retry' });
      const second = await receive(source);
      assert.equal((second.message as TextMessage).getText(), 'again');
      assert.equal(second.message.getJMSRedelivered(), true);
      assert.equal(second.message.deliveryCount, 2, 'the source reports the redelivery to the runtime');
      await second.settle({ kind: 'ack' });
      await assert.rejects(second.settle({ kind: 'ack' }), /already settled/);
      // Acknowledged now: the persistent session holds nothing for a reconnect.
      await source.close();
      await source.connect(signal());
      await nothingWithin(source, 500);
    } finally {
      await closeAll(sink, source);
      await dropSession(url, clientId, 5);
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - settle(reject) acknowledges and drops the message (DLV-9)',
  async ({ url }) => {
    const topic = topicName();
    const clientId = `src-${randomUUID()}`;
    const source = new MqttSource(config(url, { topic, clientId }), context);
    const sink = new MqttSink(config(url, { topic }), context);
    try {
      await source.connect(signal());
      await sink.connect(signal());
      await sink.send(new TextMessage('poison'), signal());
      await sink.send(new TextMessage('next'), signal());
      await (await receive(source)).settle({ kind: 'reject', reason: new Error('bad') });
      const next = await receive(source);
      assert.equal((next.message as TextMessage).getText(), 'next');
      await next.settle({ kind: 'ack' });
      await source.close();
      await source.connect(signal());
      await nothingWithin(source, 500);
    } finally {
      await closeAll(sink, source);
      await dropSession(url, clientId, 5);
    }
  },
  TIMEOUT,
);

for (const [protocolVersion, qos] of [
  [5, 1],
  [4, 1],
  [5, 2],
  [4, 2],
] as const) {
  brokerTest(
    'mqtt',
    `mqtt connector - a QoS ${qos} message not settled is delivered again after reconnecting the persistent session (MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}, BRG-5)`,
    async ({ url }) => {
      const topic = topicName();
      const clientId = `src-${randomUUID()}`;
      const fields = { topic, clientId, clean: false, protocolVersion, qos };
      const first = new MqttSource(config(url, fields), context);
      const sink = new MqttSink(config(url, { topic, protocolVersion, qos }), context);
      // MQTT 3.1.1 QoS 2: mqtt.js sent PUBREC on receipt, so the broker resends only the PUBREL and
      // the message comes from the source's own store: the same source must reconnect (as the
      // runtime does). Otherwise a new source shows the message survives a gateway restart.
      const second =
        protocolVersion === 4 && qos === 2 ? first : new MqttSource(config(url, fields), context);
      try {
        await first.connect(signal());
        await sink.connect(signal());
        const sent = sampleMessage('map', Date.now());
        await sink.send(sent, signal());
        const unsettled = await receive(first);
        await first.close();
        await assert.rejects(unsettled.settle({ kind: 'ack' }), NotConnectedError);
        await second.connect(signal());
        const again = await receive(second);
        assert.deepEqual(messageSnapshot(again.message), messageSnapshot(sent));
        assert.equal(again.message.getJMSRedelivered(), true, 'the broker resends it with DUP set');
        await again.settle({ kind: 'ack' });
        await second.close();
        await second.connect(signal());
        await nothingWithin(second, 500);
      } finally {
        await closeAll(sink, first, second);
        await dropSession(url, clientId, protocolVersion);
      }
    },
    TIMEOUT,
  );
}

brokerTest(
  'mqtt',
  'mqtt connector - 1,000 messages arrive in send order (ORD-1)',
  async ({ url }) => {
    const topic = topicName();
    const source = new MqttSource(config(url, { topic, clean: true }), context);
    const sink = new MqttSink(config(url, { topic }), context);
    const count = 1000;
    try {
      await source.connect(signal());
      await sink.connect(signal());
      const consumed = (async () => {
        for (let seq = 0; seq < count; seq++) {
          const delivery = await receive(source);
          assert.equal(delivery.message.getIntProperty('seq'), seq);
          await delivery.settle({ kind: 'ack' });
        }
      })();
      for (let seq = 0; seq < count; seq++) {
        const message = new TextMessage(`m${seq}`);
        message.setIntProperty('seq', seq);
        await sink.send(message, signal());
      }
      await consumed;
    } finally {
      await closeAll(sink, source);
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - QoS 0: delivered at most once, settle has nothing to acknowledge',
  async ({ url }) => {
    const topic = topicName();
    const source = new MqttSource(config(url, { topic, qos: 0, clean: true }), context);
    const sink = new MqttSink(config(url, { topic, qos: 0 }), context);
    try {
      await source.connect(signal());
      await sink.connect(signal());
      await sink.send(new TextMessage('fire and forget'), signal());
      const delivery = await receive(source);
      assert.equal((delivery.message as TextMessage).getText(), 'fire and forget');
      await delivery.settle({ kind: 'retry' });
      const again = await receive(source);
      assert.equal(again.message.getJMSRedelivered(), true);
      await again.settle({ kind: 'ack' });
    } finally {
      await closeAll(sink, source);
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - a lost connection fails receive and pending settles with NotConnectedError (BRG-5)',
  async ({ url }) => {
    const topic = topicName();
    const clientId = `src-${randomUUID()}`;
    const source = new MqttSource(config(url, { topic, clientId, clean: true }), context);
    let usurper: MqttClient | undefined;
    try {
      await source.connect(signal());
      const failed = assert.rejects(source.receive(signal()), NotConnectedError);
      // Another client with the same id takes the session over: the broker drops the source.
      usurper = await connectAsync(url, { clientId, clean: true, protocolVersion: 5, reconnectPeriod: 0 });
      await withTimeout(failed, WAIT_MS, 'receive to fail');
      await assert.rejects(source.receive(signal()), NotConnectedError);
    } finally {
      await source.close();
      await usurper?.endAsync();
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - an unreachable broker is not connected, a wildcard sink topic a configuration error',
  async ({ url }) => {
    const unreachable = new MqttSink(config('mqtt://user:secret-pw@127.0.0.1:1', { topic: 't' }), context);
    await assert.rejects(unreachable.connect(signal()), (error: unknown) => {
      assert.ok(error instanceof NotConnectedError, String(error));
      assert.doesNotMatch(error.message, /secret-pw/, 'credentials never appear in errors');
      return true;
    });
    await assert.rejects(unreachable.send(new TextMessage('x'), signal()), NotConnectedError);
    assert.throws(() => new MqttSink(config(url, { topic: 'a/+/b' }), context), ConfigValidationError);
    const source = new MqttSource(config(url, { topic: 'a/+/b', clean: true }), context);
    await assert.rejects(source.receive(signal()), NotConnectedError);
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - sources in one shared subscription group split the messages between them',
  async ({ url }) => {
    const topic = topicName();
    const group = `g${randomUUID().slice(0, 8)}`;
    const a = new MqttSource(
      config(url, { topic, shareGroup: group, clean: true, clientId: `a-${randomUUID()}` }),
      context,
    );
    const b = new MqttSource(
      config(url, { topic, shareGroup: group, clean: true, clientId: `b-${randomUUID()}` }),
      context,
    );
    const sink = new MqttSink(config(url, { topic }), context);
    try {
      await a.connect(signal());
      await b.connect(signal());
      await sink.connect(signal());
      for (let i = 0; i < 10; i++) await sink.send(new TextMessage(`m${i}`), signal());
      const seen: string[] = [];
      const drain = async (source: MqttSource): Promise<void> => {
        for (;;) {
          const controller = new AbortController();
          const timer = setTimeout(() => controller.abort(new Error('quiet')), 500);
          try {
            const delivery = await source.receive(controller.signal);
            seen.push((delivery.message as TextMessage).getText()!);
            await delivery.settle({ kind: 'ack' });
          } catch {
            return;
          } finally {
            clearTimeout(timer);
          }
        }
      };
      await Promise.all([drain(a), drain(b)]);
      assert.deepEqual([...seen].sort(), Array.from({ length: 10 }, (_, i) => `m${i}`).sort());
    } finally {
      await closeAll(sink, a, b);
    }
  },
  TIMEOUT,
);

/** A plain subscriber collecting the numbers of the messages it gets, in arrival order. */
async function collector(
  url: string,
  topic: string,
  protocolVersion: 4 | 5,
  qos: 0 | 1 | 2,
): Promise<{ numbers: number[]; client: MqttClient }> {
  const client = await plainClient(url, protocolVersion);
  const numbers: number[] = [];
  client.on('message', (_topic, payload: Buffer) => {
    const text = payload.toString('utf8');
    const match = /m-(\d+)/.exec(text);
    if (match) numbers.push(Number(match[1]));
  });
  await client.subscribeAsync(topic, { qos });
  return { numbers, client };
}

function messagesOf(client: MqttClient): (wake: () => void) => () => void {
  return (wake) => {
    client.on('message', wake);
    return () => client.off('message', wake);
  };
}

for (const [protocolVersion, qos] of [
  [5, 1],
  [4, 1],
  [4, 2],
  [5, 2],
  [5, 0],
] as const) {
  brokerTest(
    'mqtt',
    `mqtt connector - sendBatch keeps a window of publishes in flight and the batch arrives in order (MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}, QoS ${qos})`,
    async ({ url }, t) => {
      const cleanup = teardown(t);
      const topic = topicName();
      const count = 500;
      const { numbers, client } = await collector(url, topic, protocolVersion, qos);
      cleanup(() => client.endAsync());
      const sink = new MqttSink(config(url, { topic, protocolVersion, qos, mqtt311Format: 'body' }), context);
      cleanup(() => sink.close());
      await sink.connect(signal());
      const batch = numbered(count);
      const [first, second] = await Promise.all([
        sink.sendBatch(batch.slice(0, 300), signal()),
        sink.sendBatch(batch.slice(300), signal()),
      ]);
      assert.deepEqual(kinds([...first, ...second]), Array(count).fill('ok'));
      await until(() => numbers.length >= count, `${count} messages at the subscriber`, [messagesOf(client)]);
      assert.deepEqual(numbers, [...Array(count).keys()]);
    },
    TIMEOUT,
  );
}

brokerTest(
  'mqtt',
  'mqtt connector - an oversize message in a batch fails alone as MessageTooLargeError, the rest arrive in order (DLV-9)',
  async ({ url }, t) => {
    const cleanup = teardown(t);
    const topic = topicName();
    const { numbers, client } = await collector(url, topic, 5, 1);
    cleanup(() => client.endAsync());
    const sink = new MqttSink(
      config(url, { topic, protocolVersion: 5, qos: 1, maxMessageBytes: 300 }),
      context,
    );
    cleanup(() => sink.close());
    await sink.connect(signal());
    assertOversizeFailedAlone(await sink.sendBatch(oversizeBatch(1000), signal()));
    await until(() => numbers.length >= 19, '19 messages at the subscriber', [messagesOf(client)]);
    assert.deepEqual(
      numbers,
      [...Array(20).keys()].filter((n) => n !== OVERSIZE_AT),
    );
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - a connection lost in the middle of a batch fails every unacknowledged message, and nothing later is acknowledged before a failed one (ORD-3)',
  async ({ url }, t) => {
    const cleanup = teardown(t);
    const topic = topicName();
    const { numbers, client } = await collector(url, topic, 5, 1);
    cleanup(() => client.endAsync());
    const { relay, url: relayed } = await relayedBroker(t, url, 1883);
    const sink = new MqttSink(config(relayed, { topic, protocolVersion: 5, qos: 1 }), context);
    cleanup(() => sink.close());
    await sink.connect(signal());
    const count = 400;
    // About half the batch reaches the broker; the rest is held back until the connection is cut.
    relay.holdAfter(200 * 1100);
    const sending = sink.sendBatch(numbered(count, 1024), signal());
    await until(() => numbers.length > 0, 'the first message at the subscriber', [messagesOf(client)]);
    relay.cut();
    const results = await withTimeout(sending, WAIT_MS, 'the batch results');
    const firstFailed = results.findIndex((result) => !result.ok);
    assert.ok(firstFailed >= 0 && firstFailed < count, 'the unacknowledged messages failed');
    for (const result of results.slice(firstFailed))
      assert.ok(!result.ok && result.error instanceof NotConnectedError, String(!result.ok && result.error));
    await until(() => numbers.length >= firstFailed, 'every acknowledged message at the subscriber', [
      messagesOf(client),
    ]);
    assert.deepEqual(numbers, [...Array(numbers.length).keys()], 'what arrived is a prefix, in order');
    assert.ok(numbers.length < count, `${numbers.length} of ${count} arrived`);
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - a bridge from an MQTT source with acknowledgement batching does not wait the batch interval for messages a full window cannot read',
  async ({ url }, t) => {
    const cleanup = teardown(t);
    const from = topicName();
    const to = topicName();
    const { numbers, client } = await collector(url, to, 5, 1);
    cleanup(() => client.endAsync());
    const source = new MqttSource(
      config(url, { topic: from, protocolVersion: 5, qos: 1, clientId: `it-${randomUUID()}` }),
      context,
    );
    const sink = new MqttSink(config(url, { topic: to, protocolVersion: 5, qos: 1 }), context);
    // An interval no test could wait out once per message: the acknowledgements must go at once.
    const bridge = new Bridge({ name: 'mqtt-it', source, sink, batchSize: 100, batchIntervalMs: 600_000 });
    cleanup(() => bridge.stop());
    await bridge.start();
    const publisher = await plainClient(url, 5);
    cleanup(() => publisher.endAsync());
    const count = 50;
    for (const message of numbered(count))
      await publisher.publishAsync(from, message.getText() ?? '', { qos: 1 });
    await until(() => numbers.length >= count, `${count} messages through the bridge`, [messagesOf(client)]);
    assert.deepEqual(numbers, [...Array(count).keys()], 'in order');
  },
  TIMEOUT,
);

/** `count` messages `w-0` ... published by a plain client at QoS 1. */
async function publishNumbered(
  url: string,
  topic: string,
  protocolVersion: 4 | 5,
  count: number,
): Promise<void> {
  const publisher = await plainClient(url, protocolVersion);
  try {
    for (let i = 0; i < count; i++) await publisher.publishAsync(topic, `w-${i}`, { qos: 1 });
  } finally {
    await publisher.endAsync();
  }
}

function textOf(delivery: Delivery): string {
  return (delivery.message as TextMessage).getText() ?? '';
}

async function receiveTexts(source: MqttSource, count: number): Promise<Delivery[]> {
  const deliveries: Delivery[] = [];
  for (let i = 0; i < count; i++) deliveries.push(await receive(source));
  return deliveries;
}

for (const [protocolVersion, count] of [
  [5, 60],
  // Mosquitto sends an MQTT 3.1.1 client at most max_inflight_messages (20) unacknowledged.
  [4, 15],
] as const) {
  brokerTest(
    'mqtt',
    `mqtt connector - a QoS 1 source hands out many messages before any is settled (MQTT ${protocolVersion === 5 ? '5' : '3.1.1'})`,
    async ({ url }) => {
      const topic = topicName();
      const source = new MqttSource(
        config(url, { topic, protocolVersion, mqtt311Format: 'body', plainBodyType: 'text', clean: true }),
        context,
      );
      try {
        await source.connect(signal());
        await publishNumbered(url, topic, protocolVersion, count);
        const deliveries = await receiveTexts(source, count);
        assert.deepEqual(
          deliveries.map(textOf),
          Array.from({ length: count }, (_, i) => `w-${i}`),
          'all handed out in order, none settled yet',
        );
        for (const delivery of deliveries) await delivery.settle({ kind: 'ack' });
      } finally {
        await source.close();
      }
    },
    TIMEOUT,
  );
}

brokerTest(
  'mqtt',
  'mqtt connector - receiveMaximum bounds the window: a full window reads nothing more until its oldest message is acknowledged',
  async ({ url }) => {
    const topic = topicName();
    const source = new MqttSource(
      config(url, { topic, clean: true, receiveMaximum: 5, plainBodyType: 'text' }),
      context,
    );
    try {
      await source.connect(signal());
      await publishNumbered(url, topic, 5, 8);
      const deliveries = await receiveTexts(source, 5);
      assert.deepEqual(deliveries.map(textOf), ['w-0', 'w-1', 'w-2', 'w-3', 'w-4']);
      assert.equal(source.backlog(), 0, 'nothing received that was not handed out');
      // A later message settled first leaves the window full: its PUBACK waits for w-0's.
      await deliveries[1]!.settle({ kind: 'ack' });
      await nothingWithin(source, 300);
      await deliveries[0]!.settle({ kind: 'ack' });
      const more = await receiveTexts(source, 2);
      assert.deepEqual(more.map(textOf), ['w-5', 'w-6']);
      for (const delivery of [...deliveries.slice(2), ...more]) await delivery.settle({ kind: 'ack' });
      assert.equal(textOf(await receive(source)), 'w-7');
    } finally {
      await source.close();
    }
  },
  TIMEOUT,
);

for (const protocolVersion of [5, 4] as const) {
  brokerTest(
    'mqtt',
    `mqtt connector - PUBACKs go in the order the messages came: a settled message behind an unsettled one is not acknowledged (MQTT ${protocolVersion === 5 ? '5' : '3.1.1'}, MQTT 4.6)`,
    async ({ url }) => {
      const topic = topicName();
      const clientId = `src-${randomUUID()}`;
      const fields = {
        topic,
        clientId,
        clean: false,
        protocolVersion,
        mqtt311Format: 'body',
        plainBodyType: 'text',
      };
      const first = new MqttSource(config(url, fields), context);
      const second = new MqttSource(config(url, fields), context);
      try {
        await first.connect(signal());
        await publishNumbered(url, topic, protocolVersion, 4);
        const [w0, w1, w2, w3] = await receiveTexts(first, 4);
        // w-0 is acknowledged; w-2 is settled but waits for w-1, which is never settled; w-3 neither.
        await w2!.settle({ kind: 'ack' });
        await w0!.settle({ kind: 'ack' });
        await first.close();
        await assert.rejects(w1!.settle({ kind: 'ack' }), NotConnectedError);
        await assert.rejects(w3!.settle({ kind: 'ack' }), NotConnectedError);
        await second.connect(signal());
        const again = await receiveTexts(second, 3);
        assert.deepEqual(
          again.map(textOf),
          ['w-1', 'w-2', 'w-3'],
          'everything from the first unacknowledged on',
        );
        for (const delivery of again) {
          assert.equal(delivery.message.getJMSRedelivered(), true);
          await delivery.settle({ kind: 'ack' });
        }
        await second.close();
        await second.connect(signal());
        await nothingWithin(second, 500);
      } finally {
        await closeAll(first, second);
        await dropSession(url, clientId, protocolVersion);
      }
    },
    TIMEOUT,
  );
}

brokerTest(
  'mqtt',
  'mqtt connector - a lost connection with a window of unsettled messages: the persistent session delivers them all again, in order (BRG-5)',
  async ({ url }, t) => {
    const topic = topicName();
    const clientId = `src-${randomUUID()}`;
    const { relay, url: relayed } = await relayedBroker(t, url, 1883);
    const fields = { topic, clientId, clean: false, plainBodyType: 'text' };
    const first = new MqttSource(config(relayed, fields), context);
    const second = new MqttSource(config(url, fields), context);
    try {
      await first.connect(signal());
      await publishNumbered(url, topic, 5, 10);
      const unsettled = await receiveTexts(first, 10);
      const failed = assert.rejects(first.receive(signal()), NotConnectedError);
      relay.cut();
      await withTimeout(failed, WAIT_MS, 'receive to fail');
      for (const delivery of unsettled)
        await assert.rejects(delivery.settle({ kind: 'ack' }), NotConnectedError);
      await second.connect(signal());
      const again = await receiveTexts(second, 10);
      assert.deepEqual(
        again.map(textOf),
        Array.from({ length: 10 }, (_, i) => `w-${i}`),
      );
      assert.ok(again.every((delivery) => delivery.message.getJMSRedelivered()));
      for (const delivery of again) await delivery.settle({ kind: 'ack' });
      await second.close();
      await second.connect(signal());
      await nothingWithin(second, 500);
    } finally {
      await closeAll(first, second);
      await dropSession(url, clientId, 5);
    }
  },
  TIMEOUT,
);

brokerTest(
  'mqtt',
  'mqtt connector - retry in a window hands the message out again before the ones waiting, and holds the later PUBACKs (BRG-4)',
  async ({ url }) => {
    const topic = topicName();
    const clientId = `src-${randomUUID()}`;
    const source = new MqttSource(config(url, { topic, clientId, plainBodyType: 'text' }), context);
    try {
      await source.connect(signal());
      await publishNumbered(url, topic, 5, 3);
      const [w0, w1] = await receiveTexts(source, 2);
      await w0!.settle({ kind: 'retry' });
      assert.ok((source.backlog() ?? 0) >= 1, 'the retried message waits to be handed out again');
      await w1!.settle({ kind: 'ack' });
      const again = await receive(source);
      assert.equal(textOf(again), 'w-0', 'first in line');
      assert.equal(again.message.getJMSRedelivered(), true);
      const w2 = await receive(source);
      assert.equal(textOf(w2), 'w-2');
      await again.settle({ kind: 'ack' });
      await w2.settle({ kind: 'ack' });
      await source.close();
      await source.connect(signal());
      await nothingWithin(source, 500);
    } finally {
      await source.close();
      await dropSession(url, clientId, 5);
    }
  },
  TIMEOUT,
);
