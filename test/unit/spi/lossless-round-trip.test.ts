/**
 * Property-based round trips of every lossless form a message takes, over random messages
 * (arbitrary-messages.ts): the admin/CLI JSON form, the store's serialization, and the wire
 * mappings of AMQP 0-9-1, MQTT 5, MQTT 3.1.1 (envelope) and Kafka, each through its broker
 * client's own codec. All of them encode typed values with the one codec of
 * `src/jms/message/typed-value-codec.ts`; these properties hold them to it.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import type { IHeaders, Message as KafkaJSMessage } from 'kafkajs';
import { messageSnapshot, Queue, TextMessage, type Message } from '../../../src/spi/index.js';
import { messageFromJson, messageToJson } from '../../../src/jms/message/message-json.js';
import { deserializeMessage, serializeMessage } from '../../../src/store/message-serializer.js';
import { fromAmqp, toAmqp, type AmqpIncoming } from '../../../connectors/amqp/mapping.js';
import {
  fromMqtt311,
  fromMqtt5,
  toMqtt311,
  toMqtt5,
  type MqttIncoming,
} from '../../../connectors/mqtt/mapping.js';
import { messageToRecord, recordToMessage, type KafkaRecordIn } from '../../../connectors/kafka/mapping.js';
import { ARBITRARY_NOW, ROUND_TRIP_SEED, arbitraryMessage } from './arbitrary-messages.js';

const RUNS = { seed: ROUND_TRIP_SEED, numRuns: 300 };

/** What the engine keeps of a message beyond what travels: its destination and delivery state. */
function fullSnapshot(message: Message): unknown {
  return {
    ...messageSnapshot(message),
    destination: message.getJMSDestination()?.toString() ?? null,
    redelivered: message.getJMSRedelivered(),
    deliveryCount: message.deliveryCount,
  };
}

/** A message as the engine holds one it has delivered: destination set, redelivered, counted. */
const deliveredMessage = fc
  .tuple(arbitraryMessage, fc.integer({ min: 1, max: 20 }))
  .map(([message, count]) => {
    message.setJMSDestination(new Queue('orders'));
    message.setJMSRedelivered(count > 1);
    message.deliveryCount = count;
    return message;
  });

/**
 * The wire mappings write a null text as zero bytes, which read back as the empty text
 * (docs/mapping.md, bodies): the one body they do not tell apart.
 */
function withoutNullText(message: Message): boolean {
  return !(message instanceof TextMessage && message.getText() === null);
}

test('lossless forms - the JSON form keeps every header, typed property and body of random messages', () => {
  fc.assert(
    fc.property(deliveredMessage, (message) => {
      const back = messageFromJson(JSON.parse(JSON.stringify(messageToJson(message))));
      assert.equal(back.constructor, message.constructor);
      assert.deepEqual(fullSnapshot(back), fullSnapshot(message));
    }),
    RUNS,
  );
});

test('lossless forms - the store serialization keeps every header, typed property and body of random messages', () => {
  fc.assert(
    fc.property(deliveredMessage, (message) => {
      const back = deserializeMessage(serializeMessage(message));
      assert.equal(back.constructor, message.constructor);
      assert.deepEqual(fullSnapshot(back), fullSnapshot(message));
    }),
    RUNS,
  );
});

// amqplib's own property codec, so the AMQP property sees what a consumer decodes off the wire.
const require = createRequire(import.meta.url);
const amqplibDir = dirname(require.resolve('amqplib'));
const amqpDefs = require(join(amqplibDir, 'lib/defs.js')) as {
  encodeProperties(id: number, channel: number, size: number, fields: unknown): Buffer;
  decode(id: number, buffer: Buffer): AmqpIncoming['properties'];
};
const amqpArgs = require(join(amqplibDir, 'lib/api_args.js')) as {
  publish(exchange: string, routingKey: string, options: unknown): unknown;
};

function amqpRoundTrip(message: Message): Message {
  const { content, properties } = toAmqp(message, { persistent: 'message', ttl: true, now: ARBITRARY_NOW });
  const frame = amqpDefs.encodeProperties(60, 1, content.length, amqpArgs.publish('', 'q', properties));
  // Frame header (7) and class, weight and body size (12) before the flags; a frame-end byte after.
  const wire = amqpDefs.decode(60, frame.subarray(19, frame.length - 1));
  const decoded = fromAmqp({ content, fields: { redelivered: false }, properties: wire }, ARBITRARY_NOW);
  assert.deepEqual(decoded.warnings, []);
  return decoded.message;
}

// mqtt.js's own packet codec (resolved from mqtt, which depends on it).
const mqttRequire = createRequire(require.resolve('mqtt'));
const mqttPacket = mqttRequire('mqtt-packet') as {
  generate(packet: unknown, options: { protocolVersion: number }): Buffer;
  parser(options: { protocolVersion: number }): {
    on(event: 'packet', listener: (packet: MqttIncoming) => void): void;
    parse(buffer: Buffer): void;
  };
};

function overMqtt(payload: Buffer, properties: unknown, protocolVersion: 4 | 5): MqttIncoming {
  const wire = mqttPacket.generate(
    { cmd: 'publish', topic: 't/1', payload, qos: 1, messageId: 7, dup: false, retain: false, properties },
    { protocolVersion },
  );
  let parsed: MqttIncoming | undefined;
  const parser = mqttPacket.parser({ protocolVersion });
  parser.on('packet', (packet) => (parsed = packet));
  parser.parse(wire);
  assert.ok(parsed, 'the packet parses');
  return parsed;
}

function mqtt5RoundTrip(message: Message): Message {
  const { payload, properties } = toMqtt5(message, { ttl: true, now: ARBITRARY_NOW });
  const decoded = fromMqtt5(overMqtt(payload, properties, 5), ARBITRARY_NOW, 'bytes');
  assert.deepEqual(decoded.warnings, []);
  return decoded.message;
}

function mqtt311RoundTrip(message: Message): Message {
  const decoded = fromMqtt311(overMqtt(toMqtt311(message, 'envelope'), undefined, 4), 'envelope', 'bytes');
  assert.deepEqual(decoded.warnings, []);
  return decoded.message;
}

/** What a Kafka consumer gets back for a produced record: bytes everywhere, as kafkajs hands them out. */
function kafkaRoundTrip(message: Message): Message {
  const record: KafkaJSMessage = messageToRecord(message, { key: { from: 'none' } });
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(record.headers ?? {}))
    headers[name] = Buffer.from(String(value));
  const toBuffer = (value: Buffer | string | null | undefined): Buffer | null =>
    value === null || value === undefined ? null : Buffer.from(value);
  const fetched: KafkaRecordIn = {
    topic: 't',
    partition: 0,
    offset: '0',
    key: toBuffer(record.key),
    value: toBuffer(record.value),
    timestamp: record.timestamp ?? '1',
    headers,
  };
  return recordToMessage(fetched);
}

const WIRE_MAPPINGS: ReadonlyArray<[string, (message: Message) => Message, (message: Message) => boolean]> = [
  ['AMQP 0-9-1', amqpRoundTrip, withoutNullText],
  ['MQTT 5', mqtt5RoundTrip, withoutNullText],
  ['MQTT 3.1.1 envelope', mqtt311RoundTrip, () => true],
  ['Kafka', kafkaRoundTrip, withoutNullText],
];

for (const [protocol, roundTrip, carries] of WIRE_MAPPINGS) {
  test(`lossless forms - the ${protocol} mapping keeps every carried header, typed property and body of random messages (BRG-6)`, () => {
    fc.assert(
      fc.property(arbitraryMessage.filter(carries), (message) => {
        const back = roundTrip(message);
        assert.equal(back.constructor, message.constructor);
        assert.deepEqual(messageSnapshot(back), messageSnapshot(message));
      }),
      RUNS,
    );
  });
}

test('lossless forms - the JSON form keeps a double -0, which a JSON number cannot hold', () => {
  const message = new TextMessage('x');
  message.setDoubleProperty('negZero', -0);
  const json = JSON.parse(JSON.stringify(messageToJson(message))) as unknown;
  assert.deepEqual((json as { properties: unknown }).properties, {
    negZero: { type: 'double', value: '-0' },
  });
  assert.ok(Object.is(messageFromJson(json).getDoubleProperty('negZero'), -0));
});
