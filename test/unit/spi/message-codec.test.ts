import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BytesMessage,
  MapMessage,
  Message,
  MessageFormatError,
  Queue,
  StreamMessage,
  TextMessage,
  Topic,
  XMLMessage,
  bodyTypeOfContentType,
  carriedProperties,
  contentTypeOf,
  decodeBody,
  decodeEnvelope,
  decodeTypeTags,
  encodeBody,
  encodeEnvelope,
  encodeTypeTags,
  headersFromStrings,
  headersToStrings,
  isEnvelope,
  messageSnapshot,
  readHeaders,
  setCarriedProperty,
  typedFromJson,
  typedFromString,
  typedToJson,
  typedToString,
  writeHeaders,
  type TypedValue,
  type ValueType,
} from '../../../src/spi/index.js';
import { ALL_BODY_TYPES, MAX_LONG, sampleBody, sampleMessage } from './sample-messages.js';

const NATURAL: Array<[TypedValue, string]> = [
  [{ type: 'boolean', value: true }, 'true'],
  [{ type: 'boolean', value: false }, 'false'],
  [{ type: 'byte', value: -128 }, '-128'],
  [{ type: 'short', value: 32767 }, '32767'],
  [{ type: 'int', value: 42 }, '42'],
  [{ type: 'int', value: -2147483648 }, '-2147483648'],
  [{ type: 'long', value: MAX_LONG }, '9223372036854775807'],
  [{ type: 'long', value: -9223372036854775808n }, '-9223372036854775808'],
  [{ type: 'float', value: Math.fround(0.1) }, '0.1'],
  [{ type: 'float', value: 1.5 }, '1.5'],
  [{ type: 'float', value: Math.fround(3.4028234663852886e38) }, '3.4028235e+38'],
  [{ type: 'double', value: 1.5 }, '1.5'],
  [{ type: 'double', value: 0.1 }, '0.1'],
  [{ type: 'double', value: 5e-324 }, '5e-324'],
  [{ type: 'double', value: Number.NaN }, 'NaN'],
  [{ type: 'double', value: Number.NEGATIVE_INFINITY }, '-Infinity'],
  [{ type: 'double', value: -0 }, '-0'],
  [{ type: 'string', value: 'wïdget' }, 'wïdget'],
  [{ type: 'string', value: '' }, ''],
  [{ type: 'char', value: 'ü' }, 'ü'],
  [{ type: 'bytes', value: Uint8Array.from([0, 255]) }, 'AP8='],
];

test('message codec - typed values read as natural strings and back exactly (BRG-6, MSG-3)', () => {
  for (const [typed, text] of NATURAL) {
    assert.equal(typedToString(typed), text, `${typed.type} ${String(typed.value)}`);
    assert.deepEqual(typedFromString(typed.type, text), typed, `${typed.type} '${text}'`);
  }
});

test('message codec - typedFromString rejects text that is not exactly a value of the type', () => {
  const bad: Array<[ValueType, string]> = [
    ['int', '3.5'],
    ['int', ''],
    ['int', '2147483648'],
    ['byte', '128'],
    ['short', '1e3'],
    ['long', '9223372036854775808'],
    ['long', '12abc'],
    ['boolean', 'yes'],
    ['float', ''],
    ['double', '0x10'],
    ['double', ' 1'],
    ['char', 'ab'],
    ['bytes', 'not base64!'],
  ];
  for (const [type, text] of bad) {
    assert.throws(() => typedFromString(type, text), MessageFormatError, `${type} '${text}'`);
  }
  assert.deepEqual(typedFromString('boolean', 'TRUE'), { type: 'boolean', value: true });
  assert.deepEqual(typedFromString('int', '+7'), { type: 'int', value: 7 });
});

test('message codec - typed JSON keeps longs as strings and non-finite floats as text (BRG-6)', () => {
  assert.deepEqual(typedToJson({ type: 'int', value: 3 }), { type: 'int', value: 3 });
  assert.deepEqual(typedToJson({ type: 'long', value: MAX_LONG }), {
    type: 'long',
    value: '9223372036854775807',
  });
  assert.deepEqual(typedToJson({ type: 'float', value: Math.fround(0.1) }), { type: 'float', value: 0.1 });
  assert.deepEqual(typedToJson({ type: 'double', value: Number.NaN }), { type: 'double', value: 'NaN' });
  assert.deepEqual(typedToJson({ type: 'double', value: -0 }), { type: 'double', value: '-0' });
  assert.deepEqual(typedToJson({ type: 'bytes', value: Uint8Array.from([1]) }), {
    type: 'bytes',
    value: 'AQ==',
  });
  for (const [typed] of NATURAL) {
    const json = JSON.parse(JSON.stringify(typedToJson(typed))) as unknown;
    assert.deepEqual(typedFromJson(json, 'value'), typed);
  }
  assert.deepEqual(typedFromJson({ type: 'long', value: 5 }, 'v'), { type: 'long', value: 5n });
  assert.throws(() => typedFromJson({ type: 'long', value: 2 ** 60 }, 'v'), /not an exact long/);
  assert.throws(() => typedFromJson({ type: 'int', value: 'x' }, 'entry'), /entry/);
  assert.throws(() => typedFromJson({ type: 'decimal', value: 1 }, 'entry'), /unknown type 'decimal'/);
  assert.throws(() => typedFromJson(3, 'entry'), MessageFormatError);
});

test('message codec - type tags list non-string property types compactly and read back', () => {
  const tag = encodeTypeTags([
    ['qty', { type: 'int', value: 3 }],
    ['name', { type: 'string', value: 'x' }],
    ['big', { type: 'long', value: 1n }],
    ['flag', { type: 'boolean', value: true }],
  ]);
  assert.equal(tag, 'qty:int,big:long,flag:boolean');
  assert.deepEqual(
    [...decodeTypeTags(tag)],
    [
      ['qty', 'int'],
      ['big', 'long'],
      ['flag', 'boolean'],
    ],
  );
  assert.deepEqual([...decodeTypeTags('a:int,junk,b:decimal,:int')], [['a', 'int']]);
  assert.equal(decodeTypeTags(undefined).size, 0);
});

test('message codec - every body type encodes to bytes and decodes to an identical body (MSG-4)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleBody(bodyType);
    const decoded = decodeBody(bodyType, encodeBody(message));
    assert.equal(decoded.bodyType, bodyType);
    assert.deepEqual(messageSnapshot(decoded), messageSnapshot(message), bodyType);
  }
  assert.equal(encodeBody(new TextMessage('é')).toString('hex'), 'c3a9');
  assert.equal(encodeBody(new Message()).length, 0);
  assert.deepEqual(encodeBody(new BytesMessage(Uint8Array.from([9, 8]))), Buffer.from([9, 8]));
  assert.ok(decodeBody('xml', Buffer.from('<a/>')) instanceof XMLMessage);
});

test('message codec - map and stream bodies are documented typed JSON with 64-bit longs (MSG-4)', () => {
  const map = new MapMessage();
  map.setInt('qty', 3);
  map.setLong('big', MAX_LONG);
  assert.equal(
    encodeBody(map).toString('utf8'),
    '{"qty":{"type":"int","value":3},"big":{"type":"long","value":"9223372036854775807"}}',
  );
  const decoded = decodeBody('map', encodeBody(map)) as MapMessage;
  assert.equal(decoded.getLong('big'), MAX_LONG);
  const stream = new StreamMessage();
  stream.writeString('a');
  stream.writeDouble(2.5);
  assert.equal(
    encodeBody(stream).toString('utf8'),
    '[{"type":"string","value":"a"},{"type":"double","value":2.5}]',
  );
  const proto = decodeBody('map', Buffer.from('{"__proto__":{"type":"int","value":1}}')) as MapMessage;
  assert.deepEqual(proto.getMapNames(), ['__proto__']);
  assert.throws(() => decodeBody('map', Buffer.from('not json')), MessageFormatError);
  assert.throws(() => decodeBody('map', Buffer.from('[]')), MessageFormatError);
  assert.throws(() => decodeBody('stream', Buffer.from('{}')), MessageFormatError);
  assert.throws(() => decodeBody('stream', Buffer.from('[{"type":"int","value":"x"}]')), /stream item 0/);
  assert.throws(() => decodeBody('empty', Buffer.from('x')), MessageFormatError);
});

test('message codec - body types map to content types and foreign content types to body types', () => {
  for (const bodyType of ALL_BODY_TYPES)
    assert.equal(bodyTypeOfContentType(contentTypeOf(bodyType)), bodyType);
  assert.equal(contentTypeOf('text'), 'text/plain; charset=utf-8');
  assert.equal(contentTypeOf('map'), 'application/x-jms-map+json');
  assert.equal(bodyTypeOfContentType('text/xml; charset=iso-8859-1'), 'xml');
  assert.equal(bodyTypeOfContentType('application/atom+xml'), 'xml');
  assert.equal(bodyTypeOfContentType('text/csv'), 'text');
  assert.equal(bodyTypeOfContentType('application/json'), 'text');
  assert.equal(bodyTypeOfContentType('image/png'), 'bytes');
  assert.equal(bodyTypeOfContentType(undefined), 'bytes');
  assert.equal(bodyTypeOfContentType(undefined, 'text'), 'text');
});

test('message codec - carried headers leave out defaults and round-trip through strings (MSG-1, BRG-6)', () => {
  const plain = new TextMessage('x');
  assert.deepEqual(readHeaders(plain), { JMSPriority: 4, JMSDeliveryMode: 'PERSISTENT' });
  const message = sampleMessage('text');
  const headers = readHeaders(message);
  assert.deepEqual(headers, {
    JMSMessageID: 'ID:sample-text-1',
    JMSTimestamp: 1_700_000_000_123,
    JMSCorrelationID: 'corr-ü-42',
    JMSReplyTo: 'queue://replies',
    JMSType: 'order.created',
    JMSExpiration: 1_700_003_600_123,
    JMSPriority: 7,
    JMSDeliveryMode: 'NON_PERSISTENT',
    JMSDeliveryTime: 1_700_000_000_128,
  });
  const strings = headersToStrings(headers);
  assert.equal(strings.JMSTimestamp, '1700000000123');
  assert.deepEqual(headersFromStrings({ ...strings, other: 'ignored' }), headers);
  const copy = new Message();
  writeHeaders(copy, headersFromStrings(strings));
  assert.deepEqual(readHeaders(copy), headers);
  assert.ok(copy.getJMSReplyTo() instanceof Queue);
  writeHeaders(copy, { JMSReplyTo: 'topic://prices' });
  assert.ok(copy.getJMSReplyTo() instanceof Topic);
  assert.deepEqual(headersFromStrings({ JMSDeliveryMode: '2' }), { JMSDeliveryMode: 'PERSISTENT' });
  assert.throws(() => headersFromStrings({ JMSPriority: '10' }), /JMSPriority/);
  assert.throws(() => headersFromStrings({ JMSTimestamp: 'noon' }), /JMSTimestamp/);
  assert.throws(() => headersFromStrings({ JMSDeliveryMode: 'maybe' }), /JMSDeliveryMode/);
  assert.throws(() => writeHeaders(copy, { JMSReplyTo: 'replies' }), MessageFormatError);
  assert.throws(() => writeHeaders(copy, { JMSPriority: 12 }), MessageFormatError);
});

test('message codec - carried properties skip JMSXDeliveryCount; foreign names that cannot be properties are refused (MSG-2)', () => {
  const message = new TextMessage('x');
  message.setIntProperty('qty', 1);
  message.deliveryCount = 3;
  assert.deepEqual(message.getPropertyNames().sort(), ['JMSXDeliveryCount', 'qty']);
  assert.deepEqual(carriedProperties(message), [['qty', { type: 'int', value: 1 }]]);

  const received = new Message();
  const value: TypedValue = { type: 'string', value: 'v' };
  assert.equal(setCarriedProperty(received, 'plain', value), true);
  assert.equal(setCarriedProperty(received, 'JMSXUserID', value), true);
  assert.equal(setCarriedProperty(received, 'JMSXGroupID', value), true);
  assert.equal(setCarriedProperty(received, 'JMS_Vendor', value), true);
  assert.equal(setCarriedProperty(received, 'x-death', value), false);
  assert.equal(setCarriedProperty(received, 'JMSMessageID', value), false);
  assert.equal(setCarriedProperty(received, 'JMSXDeliveryCount', { type: 'int', value: 9 }), false);
  assert.equal(setCarriedProperty(received, 'AND', value), false);
  assert.equal(setCarriedProperty(received, 'c', { type: 'char', value: 'c' }), false);
  assert.deepEqual(received.getPropertyNames().sort(), ['JMSXGroupID', 'JMSXUserID', 'JMS_Vendor', 'plain']);
});

test('message codec - the envelope carries every body type, header and typed property identically (BRG-6)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleMessage(bodyType);
    const payload = encodeEnvelope(message);
    assert.ok(isEnvelope(payload));
    const decoded = decodeEnvelope(payload);
    assert.equal(decoded.constructor, message.constructor, bodyType);
    assert.deepEqual(messageSnapshot(decoded), messageSnapshot(message), bodyType);
  }
});

test('message codec - the envelope is readable JSON with natural header values', () => {
  const message = new TextMessage('hello');
  message.setJMSMessageID('ID:1');
  message.setJMSTimestamp(1_700_000_000_000);
  message.setIntProperty('qty', 3);
  message.setLongProperty('big', MAX_LONG);
  assert.deepEqual(JSON.parse(encodeEnvelope(message).toString('utf8')), {
    jmsEnvelope: 1,
    headers: {
      JMSMessageID: 'ID:1',
      JMSTimestamp: 1_700_000_000_000,
      JMSPriority: 4,
      JMSDeliveryMode: 'PERSISTENT',
    },
    properties: { qty: { type: 'int', value: 3 }, big: { type: 'long', value: '9223372036854775807' } },
    bodyType: 'text',
    encoding: 'utf8',
    body: 'hello',
  });
  const nullText = decodeEnvelope(encodeEnvelope(new TextMessage(null))) as TextMessage;
  assert.equal(nullText.getText(), null);
});

test('message codec - payloads that are not envelopes are told apart and refused', () => {
  for (const payload of ['hello', '{"temp": 21}', '[1,2]', '', '{"jmsEnvelope":', '42']) {
    assert.equal(isEnvelope(Buffer.from(payload)), false, payload);
  }
  assert.throws(() => decodeEnvelope(Buffer.from('{"temp": 21}')), /not a version 1 envelope/);
  assert.throws(() => decodeEnvelope(Buffer.from('{"jmsEnvelope":2,"bodyType":"text"}')), /version 1/);
  assert.throws(
    () => decodeEnvelope(Buffer.from('{"jmsEnvelope":1,"bodyType":"video"}')),
    /bodyType 'video'/,
  );
  assert.throws(
    () => decodeEnvelope(Buffer.from('{"jmsEnvelope":1,"bodyType":"text","headers":{"JMSPriority":"high"}}')),
    /JMSPriority/,
  );
  assert.throws(
    () => decodeEnvelope(Buffer.from('{"jmsEnvelope":1,"bodyType":"bytes","body":"%%%"}')),
    /base64/,
  );
});

test('message codec - a snapshot tells messages apart by header, property type and body', () => {
  const a = sampleMessage('map');
  const b = sampleMessage('map');
  assert.deepEqual(messageSnapshot(a), messageSnapshot(b));
  b.setJMSPriority(1);
  assert.notDeepEqual(messageSnapshot(a), messageSnapshot(b));
  const c = sampleMessage('map');
  c.clearProperties();
  c.setLongProperty('qty', 42);
  const d = sampleMessage('map');
  d.clearProperties();
  d.setIntProperty('qty', 42);
  assert.notDeepEqual(messageSnapshot(c), messageSnapshot(d));
  assert.notDeepEqual(messageSnapshot(new TextMessage('')), messageSnapshot(new XMLMessage('')));
});
