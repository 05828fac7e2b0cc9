import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Queue, Topic } from '../../../../src/jms/destination/destination.js';
import { MessageFormatError } from '../../../../src/jms/errors.js';
import { BytesMessage } from '../../../../src/jms/message/bytes-message.js';
import { MapMessage } from '../../../../src/jms/message/map-message.js';
import { DeliveryMode, Message } from '../../../../src/jms/message/message.js';
import { messageFromJson, messageToJson } from '../../../../src/jms/message/message-json.js';
import { StreamMessage } from '../../../../src/jms/message/stream-message.js';
import { TextMessage } from '../../../../src/jms/message/text-message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';

function rejects(json: unknown, pattern: RegExp): void {
  assert.throws(
    () => messageFromJson(json),
    (error: unknown) => {
      assert.ok(error instanceof MessageFormatError, String(error));
      assert.match(error.message, pattern);
      return true;
    },
  );
}

test('message json - headers, typed properties and a text body are read (MSG-1, MSG-3)', () => {
  const message = messageFromJson({
    type: 'text',
    headers: {
      JMSType: 'order',
      JMSPriority: 7,
      JMSCorrelationID: 'c-1',
      JMSDeliveryMode: 'NON_PERSISTENT',
      JMSMessageID: 'ID:1',
      JMSTimestamp: 1_700_000_000_000,
      JMSRedelivered: true,
      JMSExpiration: 0,
      JMSDeliveryTime: 5,
      JMSDestination: 'queue://orders',
      JMSReplyTo: null,
    },
    properties: {
      color: 'red',
      count: 3,
      ratio: 0.5,
      whole: 3.0,
      huge: 3_000_000_000,
      flag: false,
      id: { type: 'long', value: '9223372036854775807' },
      small: { type: 'byte', value: -3 },
      f: { type: 'float', value: 0.1 },
      d: { type: 'double', value: 'NaN' },
      s: { type: 'string', value: '5' },
    },
    body: 'hello',
  });
  assert.ok(message instanceof TextMessage);
  assert.equal(message.getText(), 'hello');
  assert.equal(message.getJMSType(), 'order');
  assert.equal(message.getJMSPriority(), 7);
  assert.equal(message.getJMSDeliveryMode(), DeliveryMode.NON_PERSISTENT);
  assert.equal(message.getJMSRedelivered(), true);
  assert.equal(message.getJMSDeliveryTime(), 5);
  assert.ok(message.getJMSDestination()?.equals(new Queue('orders')));
  assert.deepEqual(message.getTypedProperty('color'), { type: 'string', value: 'red' });
  assert.deepEqual(message.getTypedProperty('count'), { type: 'int', value: 3 });
  assert.deepEqual(message.getTypedProperty('ratio'), { type: 'double', value: 0.5 });
  assert.deepEqual(
    message.getTypedProperty('whole'),
    { type: 'int', value: 3 },
    'a JSON number has no ".0": 3.0 is 3',
  );
  assert.deepEqual(message.getTypedProperty('huge'), { type: 'double', value: 3_000_000_000 });
  assert.deepEqual(message.getTypedProperty('id'), { type: 'long', value: 9223372036854775807n });
  assert.deepEqual(message.getTypedProperty('small'), { type: 'byte', value: -3 });
  assert.deepEqual(message.getTypedProperty('f'), { type: 'float', value: Math.fround(0.1) });
  assert.ok(Number.isNaN(message.getTypedProperty('d')?.value));
  assert.deepEqual(message.getTypedProperty('s'), { type: 'string', value: '5' });
});

test('message json - the type is inferred from the body when absent (MSG-4)', () => {
  assert.ok(messageFromJson({ body: 'x' }) instanceof TextMessage);
  assert.equal(messageFromJson({}).bodyType, 'empty');
  assert.equal(messageFromJson({ properties: { a: 1 } }).bodyType, 'empty');
  rejects({ body: [1] }, /^type: missing/);
});

test('message json - every body type round-trips (MSG-4)', () => {
  const xml = new XMLMessage('<a/>');
  const bytes = new BytesMessage(new Uint8Array([0, 1, 254, 255]));
  const map = new MapMessage();
  map.setInt('i', 1);
  map.setLong('l', 2n ** 62n);
  map.setChar('c', 'x');
  map.setBytes('b', new Uint8Array([9]));
  map.setDouble('d', 2);
  map.setString('s', 'text');
  const stream = new StreamMessage();
  stream.writeBoolean(true);
  stream.writeShort(5);
  stream.writeFloat(1.5);
  stream.writeString('s');
  stream.writeBytes(new Uint8Array([1, 2]));
  for (const original of [
    new TextMessage('hi'),
    new TextMessage(null),
    xml,
    bytes,
    map,
    stream,
    new Message(),
  ]) {
    const json = messageToJson(original);
    const copy = messageFromJson(JSON.parse(JSON.stringify(json)));
    assert.equal(copy.bodyType, original.bodyType);
    assert.deepEqual(messageToJson(copy), json);
  }
  assert.equal(messageToJson(bytes).body, 'AAH+/w==');
  assert.deepEqual(messageToJson(map).body, {
    i: 1,
    l: { type: 'long', value: '4611686018427387904' },
    c: { type: 'char', value: 'x' },
    b: { type: 'bytes', value: 'CQ==' },
    d: { type: 'double', value: 2 },
    s: 'text',
  });
  assert.deepEqual(messageToJson(stream).body, [
    true,
    { type: 'short', value: 5 },
    { type: 'float', value: 1.5 },
    's',
    { type: 'bytes', value: 'AQI=' },
  ]);
  assert.equal('body' in messageToJson(new Message()), false);
});

test('message json - headers and properties round-trip with their types (MSG-1, MSG-3)', () => {
  const original = new TextMessage('x');
  original.setJMSMessageID('ID:42');
  original.setJMSCorrelationID('corr');
  original.setJMSReplyTo(new Topic('replies'));
  original.setJMSPriority(9);
  original.setJMSType('t');
  original.setIntProperty('i', -5);
  original.setLongProperty('l', -(2n ** 63n));
  original.setFloatProperty('f', 0.25);
  original.setDoubleProperty('d', 1.0);
  original.setDoubleProperty('inf', Infinity);
  original.setShortProperty('s', 300);
  original.setBooleanProperty('b', true);
  original.setStringProperty('str', '');
  original.setStringProperty('JMSXGroupID', 'g');
  original.deliveryCount = 3;
  const json = messageToJson(original);
  assert.deepEqual(json.properties, {
    i: -5,
    l: { type: 'long', value: '-9223372036854775808' },
    f: { type: 'float', value: 0.25 },
    d: { type: 'double', value: 1 },
    inf: { type: 'double', value: 'Infinity' },
    s: { type: 'short', value: 300 },
    b: true,
    str: '',
    JMSXGroupID: 'g',
    JMSXDeliveryCount: 3,
  });
  assert.equal(json.headers.JMSReplyTo, 'topic://replies');
  assert.equal(json.headers.JMSDeliveryMode, 'PERSISTENT');
  const copy = messageFromJson(JSON.parse(JSON.stringify(json)));
  assert.deepEqual(messageToJson(copy), json);
  assert.equal(copy.deliveryCount, 3);
  assert.deepEqual(copy.getTypedProperty('d'), { type: 'double', value: 1 });
});

test('message json - bad shapes fail with the path of the problem (MSG-3)', () => {
  rejects(null, /^\(message\): expected an object but found null/);
  rejects([], /^\(message\): expected an object but found an array/);
  rejects({ typ: 'text' }, /^typ: unknown field/);
  rejects({ type: 'json' }, /^type: expected one of text, xml, bytes, map, stream, empty/);
  rejects({ type: 'text', body: 5 }, /^body: expected a string/);
  rejects({ type: 'empty', body: 'x' }, /^body: an empty message has no body/);
  rejects({ type: 'bytes', body: 'not base64!' }, /^body: expected base64/);
  rejects({ type: 'stream', body: {} }, /^body: expected an array/);
  rejects({ type: 'stream', body: [1, null] }, /^body\[1\]: expected a boolean, number, string/);
  rejects(
    { type: 'map', body: { a: { type: 'char', value: 'ab' } } },
    /^body\.a\.value: expected a one-character string/,
  );
  rejects({ headers: [] }, /^headers: expected an object/);
  rejects(
    { headers: { JMSPriority: 10 } },
    /^headers\.JMSPriority: expected an integer from 0 to 9 but found number 10/,
  );
  rejects(
    { headers: { JMSPriority: '4' } },
    /^headers\.JMSPriority: expected an integer from 0 to 9 but found the string "4"/,
  );
  rejects(
    { headers: { JMSDeliveryMode: 'persistent' } },
    /^headers\.JMSDeliveryMode: expected "PERSISTENT" or "NON_PERSISTENT"/,
  );
  rejects({ headers: { JMSTimestamp: -1 } }, /^headers\.JMSTimestamp: expected a time/);
  rejects({ headers: { JMSRedelivered: 'yes' } }, /^headers\.JMSRedelivered: expected true or false/);
  rejects(
    { headers: { JMSDestination: 'orders' } },
    /^headers\.JMSDestination: 'orders' is not a destination/,
  );
  rejects({ headers: { JMSFoo: 1 } }, /^headers\.JMSFoo: unknown header \(known: /);
  rejects(
    { properties: { count: [1] } },
    /^properties\.count: expected a boolean, number, string or \{ "type": boolean, byte/,
  );
  rejects({ properties: { count: null } }, /^properties\.count: expected .* but found null/);
  rejects(
    { properties: { count: { type: 'long' } } },
    /^properties\.count: expected \{ "type": \.\.\., "value": \.\.\. \}/,
  );
  rejects(
    { properties: { count: { type: 'long', value: 1.5 } } },
    /^properties\.count\.value: expected a long as a decimal string/,
  );
  rejects(
    { properties: { count: { type: 'long', value: '99999999999999999999' } } },
    /^properties\.count\.value: .*does not fit in a 64-bit long/,
  );
  rejects(
    { properties: { count: { type: 'int', value: 3_000_000_000 } } },
    /^properties\.count\.value: 3000000000 is not a int/,
  );
  rejects(
    { properties: { count: { type: 'char', value: 'x' } } },
    /^properties\.count\.type: expected one of boolean, byte, short, int, long, float, double, string/,
  );
  rejects(
    { properties: { count: { type: 'float', value: 'lots' } } },
    /^properties\.count\.value: expected a number/,
  );
  rejects(
    { properties: { 'bad name': 1 } },
    /^properties\["bad name"\]: property name 'bad name' is not a valid identifier/,
  );
  rejects({ properties: { AND: 1 } }, /^properties\.AND: property name 'AND' is a selector keyword/);
  rejects({ properties: { JMSXDeliveryCount: 0 } }, /^properties\.JMSXDeliveryCount: expected an int >= 1/);
});

test('message json - provider-owned JMSX and JMS_ properties are accepted (MSG-2)', () => {
  const message = messageFromJson({
    properties: { JMSXUserID: 'alice', JMS_vendor: 1, JMSXDeliveryCount: 2 },
  });
  assert.equal(message.getStringProperty('JMSXUserID'), 'alice');
  assert.equal(message.getIntProperty('JMS_vendor'), 1);
  assert.equal(message.getIntProperty('JMSXDeliveryCount'), 2);
});
