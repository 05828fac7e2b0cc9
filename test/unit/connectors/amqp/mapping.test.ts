import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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
  AMQP_HEADERS,
  fromAmqp,
  replyToAmqp,
  replyToJms,
  toAmqp,
  type AmqpIncoming,
  type ToAmqpOptions,
} from '../../../../connectors/amqp/mapping.js';
import { connectionUser } from '../../../../connectors/amqp/connection.js';
import { ALL_BODY_TYPES, MAX_LONG, sampleMessage } from '../../spi/sample-messages.js';

// amqplib's own property codec, so these tests see exactly what a consumer decodes off the wire.
const require = createRequire(import.meta.url);
const amqplibDir = dirname(require.resolve('amqplib'));
const defs = require(join(amqplibDir, 'lib/defs.js')) as {
  encodeProperties(id: number, channel: number, size: number, fields: unknown): Buffer;
  decode(id: number, buffer: Buffer): AmqpIncoming['properties'];
};
const args = require(join(amqplibDir, 'lib/api_args.js')) as {
  publish(exchange: string, routingKey: string, options: unknown): unknown;
};
const BASIC_PROPERTIES = 60;
/** Frame header (7) + class, weight and body size (12) before the flags; one frame-end byte after. */
const PROPERTIES_OFFSET = 19;

function overTheWire(properties: unknown, content: Buffer): AmqpIncoming['properties'] {
  const frame = defs.encodeProperties(BASIC_PROPERTIES, 1, content.length, args.publish('', 'q', properties));
  return defs.decode(BASIC_PROPERTIES, frame.subarray(PROPERTIES_OFFSET, frame.length - 1));
}

const NOW = 1_700_000_000_123;
const OPTIONS: ToAmqpOptions = { persistent: 'message', ttl: true, now: NOW };

function roundTrip(message: Message, options = OPTIONS, redelivered = false): ReturnType<typeof fromAmqp> {
  const { content, properties } = toAmqp(message, options);
  return fromAmqp(
    { content, fields: { redelivered }, properties: overTheWire(properties, content) },
    options.now,
  );
}

function foreign(properties: AmqpIncoming['properties'], content = ''): ReturnType<typeof fromAmqp> {
  return fromAmqp({ content: Buffer.from(content), fields: { redelivered: false }, properties }, NOW);
}

test('amqp mapping - every body type, header and typed property survives the AMQP wire codec identically (BRG-6)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleMessage(bodyType, NOW);
    const { message: back, warnings } = roundTrip(message);
    assert.deepEqual(warnings, [], bodyType);
    assert.equal(back.constructor, message.constructor, bodyType);
    assert.deepEqual(messageSnapshot(back), messageSnapshot(message), bodyType);
  }
});

test('amqp mapping - a foreign consumer sees natural AMQP properties and typed header values (BRG-6)', () => {
  const message = sampleMessage('text', NOW);
  const { content, properties } = toAmqp(message, OPTIONS);
  const wire = overTheWire(properties, content);
  assert.equal(content.toString('utf8'), 'héllo wörld ✓ — "quotes" \n and newlines');
  assert.equal(wire.contentType, 'text/plain; charset=utf-8');
  assert.equal(wire.messageId, 'ID:sample-text-1');
  assert.equal(wire.correlationId, 'corr-ü-42');
  assert.equal(wire.replyTo, 'replies');
  assert.equal(wire.type, 'order.created');
  assert.equal(wire.timestamp, 1_700_000_000, 'AMQP timestamps are seconds');
  assert.equal(wire.expiration, '3600000', 'AMQP expiration is a relative TTL in ms');
  assert.equal(wire.priority, 7);
  assert.equal(wire.deliveryMode, 1);
  const headers = wire.headers!;
  assert.equal(headers['qty'], 42);
  assert.equal(headers['tiny'], -7);
  assert.equal(headers['flag'], true);
  assert.equal(headers['ratio'], 1.5);
  assert.equal(headers['price'], 19.99);
  assert.equal(headers['name'], 'wïdget, "quoted": yes');
  assert.equal(headers['numeric'], '42');
  assert.equal(headers['notANumber'], 'NaN', 'RabbitMQ cannot hold NaN as a float');
  assert.equal(typeof headers['big'], 'number', 'a long is an AMQP long (amqplib reads it as a number)');
  assert.equal(headers[AMQP_HEADERS.timestamp], NOW);
  assert.equal(headers[AMQP_HEADERS.expiration], NOW + 3_600_000);
  assert.deepEqual(headers[AMQP_HEADERS.exactLongs], {
    big: MAX_LONG.toString(),
    negBig: '-9223372036854775807',
  });
  assert.match(
    String(headers[AMQP_HEADERS.types]),
    /^flag:boolean,tiny:byte,shortish:short,qty:int,big:long,/,
  );
});

test('amqp mapping - JMSReplyTo is a bare queue name or topic://name in replyTo', () => {
  assert.equal(replyToAmqp(new Queue('rpc.replies')), 'rpc.replies');
  assert.equal(replyToAmqp(new Topic('prices')), 'topic://prices');
  assert.ok(replyToJms('amq.rabbitmq.reply-to') instanceof Queue);
  assert.ok(replyToJms('queue://q') instanceof Queue);
  const topic = replyToJms('topic://prices');
  assert.ok(topic instanceof Topic);
  assert.equal(topic.name, 'prices');
  const message = new TextMessage('x');
  message.setJMSReplyTo(new Topic('prices'));
  assert.equal(roundTrip(message).message.getJMSReplyTo()?.toString(), 'topic://prices');
});

test('amqp mapping - the persistent policy and ttl option shape deliveryMode and expiration', () => {
  const message = new TextMessage('x');
  message.setJMSExpiration(NOW + 1500);
  assert.equal(toAmqp(message, OPTIONS).properties.deliveryMode, 2);
  assert.equal(toAmqp(message, { ...OPTIONS, persistent: 'never' }).properties.deliveryMode, 1);
  message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
  assert.equal(toAmqp(message, { ...OPTIONS, persistent: 'always' }).properties.deliveryMode, 2);
  assert.equal(toAmqp(message, OPTIONS).properties.expiration, '1500');
  assert.equal(toAmqp(message, { ...OPTIONS, ttl: false }).properties.expiration, undefined);
  assert.equal(toAmqp(message, { ...OPTIONS, now: NOW + 9999 }).properties.expiration, '0');
  const back = roundTrip(message, { ...OPTIONS, ttl: false }).message;
  assert.equal(back.getJMSExpiration(), NOW + 1500);
});

test('amqp mapping - ids, types and reply-to beyond 255 bytes travel in x-jms headers', () => {
  const message = new TextMessage('x');
  const long = 'c'.repeat(300);
  message.setJMSCorrelationID(long);
  message.setJMSMessageID(`ID:${long}`);
  message.setJMSType(long);
  message.setJMSReplyTo(new Queue(long));
  const { properties } = toAmqp(message, OPTIONS);
  assert.equal(properties.correlationId, undefined);
  assert.equal(properties.headers[AMQP_HEADERS.correlationId], long);
  const back = roundTrip(message).message;
  assert.deepEqual(messageSnapshot(back), messageSnapshot(message));
});

test('amqp mapping - JMSRedelivered comes from the delivery, JMSXDeliveryCount never travels', () => {
  const message = new TextMessage('x');
  message.deliveryCount = 4;
  message.setJMSRedelivered(true);
  assert.equal(toAmqp(message, OPTIONS).properties.headers['JMSXDeliveryCount'], undefined);
  assert.equal(roundTrip(message).message.getJMSRedelivered(), false);
  assert.equal(roundTrip(message).message.deliveryCount, 1);
  assert.equal(roundTrip(message, OPTIONS, true).message.getJMSRedelivered(), true);
  assert.equal(roundTrip(message, OPTIONS, true).message.deliveryCount, 2);
  const quorum = fromAmqp(
    {
      content: Buffer.from('x'),
      fields: { redelivered: true },
      properties: { headers: { 'x-delivery-count': 3 } },
    },
    NOW,
  ).message;
  assert.equal(quorum.deliveryCount, 4, 'a quorum queue counts earlier returns');
  assert.equal(quorum.propertyExists('x-delivery-count'), false);
});

test('amqp mapping - a foreign message is read as naturally as it can be', () => {
  const { message, warnings } = foreign(
    {
      contentType: 'application/json',
      messageId: 'm-1',
      timestamp: 1_700_000_000,
      expiration: '5000',
      priority: 200,
      deliveryMode: 2,
      userId: 'guest',
      appId: 'billing',
      headers: {
        count: 7,
        total: 5_000_000_000,
        ratio: 0.25,
        on: false,
        label: 'x',
        when: { '!': 'timestamp', value: 1_700_000_000 },
        'x-death': [{ count: 1 }],
        'not an identifier': 'dropped',
        nested: { a: 1 },
        JMSMessageID: 'refused: not a property name',
      },
    },
    '{"a":1}',
  );
  assert.ok(message instanceof TextMessage);
  assert.equal(message.getText(), '{"a":1}');
  assert.equal(message.getJMSMessageID(), 'm-1');
  assert.equal(message.getJMSTimestamp(), 1_700_000_000_000);
  assert.equal(message.getJMSExpiration(), NOW + 5000);
  assert.equal(message.getJMSPriority(), 9);
  assert.equal(message.getJMSDeliveryMode(), DeliveryMode.PERSISTENT);
  assert.deepEqual(message.getTypedProperty('count'), { type: 'int', value: 7 });
  assert.deepEqual(message.getTypedProperty('total'), { type: 'long', value: 5_000_000_000n });
  assert.deepEqual(message.getTypedProperty('ratio'), { type: 'double', value: 0.25 });
  assert.deepEqual(message.getTypedProperty('on'), { type: 'boolean', value: false });
  assert.deepEqual(message.getTypedProperty('when'), { type: 'long', value: 1_700_000_000n });
  assert.equal(message.getStringProperty('JMSXUserID'), 'guest');
  assert.equal(message.getStringProperty('JMSXAppID'), 'billing');
  assert.deepEqual(message.getPropertyNames().sort(), [
    'JMSXAppID',
    'JMSXDeliveryCount',
    'JMSXUserID',
    'count',
    'label',
    'on',
    'ratio',
    'total',
    'when',
  ]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /priority 200/);
});

test('amqp mapping - foreign bodies: no content type is bytes, other charsets and encodings are honoured', () => {
  assert.equal(foreign({}, 'raw').message.bodyType, 'bytes');
  assert.equal(foreign({ contentType: 'text/xml' }, '<a/>').message.bodyType, 'xml');
  const latin1 = fromAmqp(
    {
      content: Buffer.from([0x63, 0x61, 0x66, 0xe9]),
      fields: { redelivered: false },
      properties: { contentType: 'text/plain; charset=ISO-8859-1' },
    },
    NOW,
  ).message as TextMessage;
  assert.equal(latin1.getText(), 'café');
  assert.equal(foreign({ contentType: 'text/plain; charset=utf-16' }, 'x').message.bodyType, 'bytes');
  assert.equal(
    foreign({ contentType: 'text/plain', contentEncoding: 'gzip' }, 'x').message.bodyType,
    'bytes',
  );
  const broken = foreign({ contentType: 'application/x-jms-map+json' }, '{not json');
  assert.equal(broken.message.bodyType, 'bytes');
  assert.match(broken.warnings[0]!, /not valid JSON; kept as a bytes body/);
  const empty = foreign({}, '');
  assert.equal(
    empty.message.getJMSDeliveryMode(),
    DeliveryMode.NON_PERSISTENT,
    'AMQP defaults to non-persistent',
  );
  assert.equal(empty.message.getJMSPriority(), 4);
});

test('amqp mapping - a header that does not fit its tagged type is read as it came, with a warning', () => {
  const { message, warnings } = foreign({
    headers: { qty: 'many', [AMQP_HEADERS.types]: 'qty:int,gone:long' },
  });
  assert.deepEqual(message.getTypedProperty('qty'), { type: 'string', value: 'many' });
  assert.match(warnings[0]!, /'qty' does not hold its tagged type int/);
});

test('amqp mapping - a map with a long near 2^63 keeps every bit in the body', () => {
  const map = new MapMessage();
  map.setLong('big', MAX_LONG);
  const back = roundTrip(map).message as MapMessage;
  assert.equal(back.getLong('big'), MAX_LONG);
});

/** A message carrying the provider's sender properties, as the engine or a connector sets them. */
function fromSender(user: string, app: string): Message {
  const message = new TextMessage('order');
  message.setProviderProperty('JMSXUserID', { type: 'string', value: user });
  message.setProviderProperty('JMSXAppID', { type: 'string', value: app });
  return message;
}

test("amqp mapping - JMSXUserID is `userId` only when it is the connection's own user, JMSXAppID is `appId`, and both round trip (MSG-2, BRG-6)", () => {
  const own = toAmqp(fromSender('guest', 'order-entry'), { ...OPTIONS, user: 'guest' }).properties;
  assert.equal(own.userId, 'guest');
  assert.equal(own.appId, 'order-entry');
  assert.equal('JMSXUserID' in own.headers, false, 'not twice');
  assert.equal('JMSXAppID' in own.headers, false, 'not twice');

  // RabbitMQ would close the channel on a userId that is not the connection's user.
  const foreignUser = toAmqp(fromSender('alice', 'order-entry'), { ...OPTIONS, user: 'guest' }).properties;
  assert.equal(foreignUser.userId, undefined);
  assert.equal(foreignUser.headers.JMSXUserID, 'alice');
  assert.equal(toAmqp(fromSender('guest', 'a'), OPTIONS).properties.userId, undefined, 'no user known');

  for (const user of ['guest', 'alice']) {
    const back = roundTrip(fromSender(user, 'order-entry'), { ...OPTIONS, user: 'guest' }).message;
    assert.equal(back.getStringProperty('JMSXUserID'), user);
    assert.equal(back.getStringProperty('JMSXAppID'), 'order-entry');
  }
  const longApp = 'a'.repeat(300);
  const long = toAmqp(fromSender('guest', longApp), OPTIONS).properties;
  assert.equal(long.appId, undefined, 'beyond a short string');
  assert.equal(roundTrip(fromSender('guest', longApp)).message.getStringProperty('JMSXAppID'), longApp);
});

test('amqp mapping - the broker-checked userId is JMSXUserID over a JMSXUserID header a publisher wrote (MSG-2)', () => {
  const { message } = foreign({ userId: 'guest', appId: 'billing', headers: { JMSXUserID: 'forged' } }, 'x');
  assert.equal(message.getStringProperty('JMSXUserID'), 'guest');
  const unchecked = foreign({ headers: { JMSXUserID: 'relayed', JMSXAppID: 'shop' }, appId: 'other' }, 'x');
  assert.equal(unchecked.message.getStringProperty('JMSXUserID'), 'relayed');
  assert.equal(unchecked.message.getStringProperty('JMSXAppID'), 'shop', 'a JMS publisher wrote the header');
});

test("amqp mapping - the sink's user is the URL's, or guest when the URL names none, as amqplib connects", () => {
  assert.equal(connectionUser('amqp://orders%40eu:pw@rabbit:5672/vh'), 'orders@eu');
  assert.equal(connectionUser('amqp://rabbit:5672'), 'guest');
  assert.equal(connectionUser('amqps://svc:@rabbit'), 'svc');
});
