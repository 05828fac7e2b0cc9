import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import {
  DeliveryMode,
  MapMessage,
  Queue,
  TextMessage,
  Topic,
  messageSnapshot,
  type Message,
} from '../../../../src/spi/index.js';
import {
  TYPES_PROPERTY,
  fromMqtt311,
  fromMqtt5,
  replyToOf,
  responseTopicOf,
  toMqtt311,
  toMqtt5,
  type MqttIncoming,
  type Mqtt5Properties,
} from '../../../../connectors/mqtt/mapping.js';
import { ALL_BODY_TYPES, MAX_LONG, sampleMessage } from '../../spi/sample-messages.js';

// mqtt.js's own packet codec (resolved from mqtt, which depends on it), so these tests see exactly
// what a subscriber parses off the wire.
const require = createRequire(createRequire(import.meta.url).resolve('mqtt'));
interface PacketCodec {
  generate(packet: unknown, options: { protocolVersion: number }): Buffer;
  parser(options: { protocolVersion: number }): {
    on(event: 'packet', listener: (packet: MqttIncoming) => void): void;
    parse(buffer: Buffer): void;
  };
}
const mqttPacket = require('mqtt-packet') as PacketCodec;

function overTheWire(
  payload: Buffer,
  properties: Mqtt5Properties | undefined,
  protocolVersion: 4 | 5,
  dup = false,
): MqttIncoming {
  const wire = mqttPacket.generate(
    { cmd: 'publish', topic: 't/1', payload, qos: 1, messageId: 7, dup, retain: false, properties },
    { protocolVersion },
  );
  let parsed: MqttIncoming | undefined;
  const parser = mqttPacket.parser({ protocolVersion });
  parser.on('packet', (packet) => (parsed = packet));
  parser.parse(wire);
  assert.ok(parsed, 'the packet parses');
  return parsed;
}

const NOW = 1_700_000_000_123;

function roundTrip5(message: Message, dup = false): ReturnType<typeof fromMqtt5> {
  const { payload, properties } = toMqtt5(message, { ttl: true, now: NOW });
  return fromMqtt5(overTheWire(payload, properties, 5, dup), NOW, 'bytes');
}

test('mqtt mapping - MQTT 5: every body type, header and typed property survives the wire identically (BRG-6)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleMessage(bodyType, NOW);
    const { message: back, warnings } = roundTrip5(message);
    assert.deepEqual(warnings, [], bodyType);
    assert.equal(back.constructor, message.constructor, bodyType);
    assert.deepEqual(messageSnapshot(back), messageSnapshot(message), bodyType);
  }
});

test('mqtt mapping - MQTT 5: a foreign subscriber sees MQTT 5 properties and natural user property strings (BRG-6)', () => {
  const message = sampleMessage('text', NOW);
  const { payload, properties } = toMqtt5(message, { ttl: true, now: NOW });
  const wire = overTheWire(payload, properties, 5).properties!;
  assert.equal(wire.contentType, 'text/plain; charset=utf-8');
  assert.equal(wire.payloadFormatIndicator, true);
  assert.equal(Buffer.from(wire.correlationData!).toString('utf8'), 'corr-ü-42');
  assert.equal(wire.responseTopic, 'queue://replies');
  assert.equal(wire.messageExpiryInterval, 3600);
  const user = wire.userProperties!;
  assert.equal(user['JMSMessageID'], 'ID:sample-text-1');
  assert.equal(user['JMSTimestamp'], String(NOW));
  assert.equal(user['JMSExpiration'], String(NOW + 3_600_000));
  assert.equal(user['JMSPriority'], '7');
  assert.equal(user['JMSDeliveryMode'], 'NON_PERSISTENT');
  assert.equal(user['qty'], '42');
  assert.equal(user['flag'], 'true');
  assert.equal(user['ratio'], '1.5');
  assert.equal(user['tenth'], '0.1');
  assert.equal(user['big'], '9223372036854775807');
  assert.equal(user['name'], 'wïdget, "quoted": yes');
  assert.equal(user['JMSCorrelationID'], undefined, 'travels in correlationData');
  assert.match(String(user[TYPES_PROPERTY]), /^flag:boolean,tiny:byte,shortish:short,qty:int,big:long,/);
  assert.equal(toMqtt5(new MapMessage(), { ttl: true, now: NOW }).properties.payloadFormatIndicator, true);
  assert.equal(
    toMqtt5(sampleMessage('bytes'), { ttl: true, now: NOW }).properties.payloadFormatIndicator,
    false,
  );
});

test('mqtt mapping - JMSReplyTo is a topic name or queue://name in responseTopic', () => {
  assert.equal(responseTopicOf(new Topic('replies/a')), 'replies/a');
  assert.equal(responseTopicOf(new Queue('q')), 'queue://q');
  assert.ok(replyToOf('replies/a') instanceof Topic);
  assert.ok(replyToOf('queue://q') instanceof Queue);
  const wild = new TextMessage('x');
  wild.setJMSReplyTo(new Topic('prices/#'));
  const { properties } = toMqtt5(wild, { ttl: true, now: NOW });
  assert.equal(properties.responseTopic, undefined, 'a wildcard is no valid response topic');
  assert.equal(roundTrip5(wild).message.getJMSReplyTo()?.toString(), 'topic://prices/#');
});

test('mqtt mapping - MQTT 5: JMSRedelivered comes from dup, the expiry interval only when ttl is on', () => {
  const message = new TextMessage('x');
  message.setJMSRedelivered(true);
  assert.equal(roundTrip5(message).message.getJMSRedelivered(), false);
  assert.equal(roundTrip5(message, true).message.getJMSRedelivered(), true);
  assert.equal(roundTrip5(message).message.deliveryCount, 1);
  assert.equal(roundTrip5(message, true).message.deliveryCount, 2);
  message.setJMSExpiration(NOW + 1);
  assert.equal(toMqtt5(message, { ttl: true, now: NOW }).properties.messageExpiryInterval, 1);
  assert.equal(toMqtt5(message, { ttl: false, now: NOW }).properties.messageExpiryInterval, undefined);
});

test('mqtt mapping - MQTT 5: a foreign message is read as naturally as it can be', () => {
  const { message, warnings } = fromMqtt5(
    {
      payload: Buffer.from('21.5'),
      qos: 0,
      dup: false,
      properties: {
        payloadFormatIndicator: true,
        responseTopic: 'devices/7/replies',
        messageExpiryInterval: 60,
        correlationData: Buffer.from('abc'),
        userProperties: {
          unit: 'celsius',
          repeated: ['a', 'b'],
          'bad-name': 'dropped',
          qty: 'lots',
          [TYPES_PROPERTY]: 'qty:int',
          JMSPriority: 'urgent',
        },
      },
    },
    NOW,
    'bytes',
  );
  assert.ok(message instanceof TextMessage);
  assert.equal(message.getText(), '21.5');
  assert.equal(message.getJMSReplyTo()?.toString(), 'topic://devices/7/replies');
  assert.equal(message.getJMSExpiration(), NOW + 60_000);
  assert.equal(message.getJMSCorrelationID(), 'abc');
  assert.equal(message.getJMSDeliveryMode(), DeliveryMode.NON_PERSISTENT, 'QoS 0 is non-persistent');
  assert.equal(message.getJMSPriority(), 4);
  assert.equal(message.getStringProperty('unit'), 'celsius');
  assert.equal(message.getStringProperty('repeated'), 'a');
  assert.deepEqual(message.getTypedProperty('qty'), { type: 'string', value: 'lots' });
  assert.deepEqual(message.getPropertyNames().sort(), ['JMSXDeliveryCount', 'qty', 'repeated', 'unit']);
  assert.equal(warnings.length, 4);
  assert.match(warnings.join('\n'), /'bad-name' has no JMS property form/);
  assert.match(warnings.join('\n'), /JMSPriority/);
  assert.match(warnings.join('\n'), /'repeated' is repeated/);
  assert.match(warnings.join('\n'), /'qty' does not hold its tagged type int/);
  const plain = fromMqtt5({ payload: Buffer.from([1, 2]), qos: 1, dup: false }, NOW, 'bytes').message;
  assert.equal(plain.bodyType, 'bytes');
  assert.equal(plain.getJMSDeliveryMode(), DeliveryMode.PERSISTENT);
  assert.equal(
    fromMqtt5({ payload: Buffer.from('hi'), qos: 1, dup: false }, NOW, 'text').message.bodyType,
    'text',
  );
});

test('mqtt mapping - MQTT 3.1.1 envelope format: every body type, header and property comes back identical (BRG-6)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleMessage(bodyType, NOW);
    const wire = overTheWire(toMqtt311(message, 'envelope'), undefined, 4);
    const { message: back, warnings } = fromMqtt311(wire, 'envelope', 'bytes');
    assert.deepEqual(warnings, [], bodyType);
    assert.deepEqual(messageSnapshot(back), messageSnapshot(message), bodyType);
  }
});

test('mqtt mapping - MQTT 3.1.1 body format sends the body alone; a source reads any non-envelope as a body', () => {
  const message = sampleMessage('text', NOW);
  assert.equal(toMqtt311(message, 'body').toString('utf8'), 'héllo wörld ✓ — "quotes" \n and newlines');
  const map = new MapMessage();
  map.setLong('big', MAX_LONG);
  assert.equal(
    toMqtt311(map, 'body').toString('utf8'),
    '{"big":{"type":"long","value":"9223372036854775807"}}',
  );
  const asText = fromMqtt311({ payload: Buffer.from('22.5'), qos: 1, dup: true }, 'body', 'text').message;
  assert.ok(asText instanceof TextMessage);
  assert.equal(asText.getText(), '22.5');
  assert.equal(asText.getJMSRedelivered(), true);
  assert.equal(asText.getJMSDeliveryMode(), DeliveryMode.PERSISTENT);
  const foreign = fromMqtt311(
    { payload: Buffer.from('{"temp":21}'), qos: 0, dup: false },
    'envelope',
    'bytes',
  );
  assert.equal(foreign.message.bodyType, 'bytes');
  assert.deepEqual(foreign.warnings, []);
  const broken = fromMqtt311(
    { payload: Buffer.from('{"jmsEnvelope":1,"bodyType":"nope"}'), qos: 1, dup: false },
    'envelope',
    'text',
  );
  assert.equal(broken.message.bodyType, 'text');
  assert.match(broken.warnings[0]!, /bodyType 'nope'.*kept as the body/);
  const envelopeInBodyFormat = fromMqtt311(
    { payload: toMqtt311(message, 'envelope'), qos: 1, dup: false },
    'body',
    'bytes',
  );
  assert.equal(envelopeInBodyFormat.message.bodyType, 'bytes', "'body' format never unwraps envelopes");
});

test('mqtt mapping - an MQTT 5 source reads an envelope from an MQTT 3.1.1 publisher', () => {
  const message = sampleMessage('stream', NOW);
  const wire = overTheWire(toMqtt311(message, 'envelope'), undefined, 5);
  assert.deepEqual(messageSnapshot(fromMqtt5(wire, NOW, 'bytes').message), messageSnapshot(message));
});

test('mqtt mapping - MQTT 5: JMSXUserID and JMSXAppID travel as user properties of those names, both ways (MSG-2, BRG-6)', () => {
  const sent = new TextMessage('reading');
  sent.setProviderProperty('JMSXUserID', { type: 'string', value: 'device-7' });
  sent.setProviderProperty('JMSXAppID', { type: 'string', value: 'telemetry' });
  const { payload, properties } = toMqtt5(sent, { ttl: true, now: NOW });
  assert.equal(properties.userProperties?.JMSXUserID, 'device-7');
  assert.equal(properties.userProperties?.JMSXAppID, 'telemetry');
  const back = fromMqtt5(overTheWire(payload, properties, 5), NOW, 'bytes').message;
  assert.equal(back.getStringProperty('JMSXUserID'), 'device-7');
  assert.equal(back.getStringProperty('JMSXAppID'), 'telemetry');
  const foreign = fromMqtt5(
    overTheWire(Buffer.from('21.5'), { userProperties: { JMSXUserID: 'sensor-1', JMSXAppID: 'edge' } }, 5),
    NOW,
    'text',
  ).message;
  assert.equal(foreign.getStringProperty('JMSXUserID'), 'sensor-1');
  assert.equal(foreign.getStringProperty('JMSXAppID'), 'edge');
});
