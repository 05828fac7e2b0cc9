import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { IHeaders, Message as KafkaJSMessage } from 'kafkajs';
import type { Message } from '../../../../src/spi/index.js';
import { BytesMessage, TextMessage, XMLMessage, messageSnapshot } from '../../../../src/spi/index.js';
import {
  BODY_TYPE_HEADER,
  MAPPING_ERROR_PROPERTY,
  TYPES_HEADER,
  messageToRecord,
  recordKey,
  recordToMessage,
} from '../../../../connectors/kafka/mapping.js';
import type { KafkaRecordIn } from '../../../../connectors/kafka/mapping.js';
import { decorate, everyBodyType } from './messages.js';

const NO_KEY = { key: { from: 'none' } } as const;

/** What a consumer gets back for a produced record: bytes everywhere, as kafkajs hands them out. */
function asFetched(record: KafkaJSMessage, offset = '0'): KafkaRecordIn {
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    headers[name] = Buffer.from(String(value), 'utf8');
  }
  const toBuffer = (value: Buffer | string | null | undefined): Buffer | null =>
    value === null || value === undefined ? null : Buffer.from(value);
  return {
    topic: 't',
    partition: 0,
    offset,
    key: toBuffer(record.key),
    value: toBuffer(record.value),
    timestamp: record.timestamp ?? '1',
    headers,
  };
}

function headerText(record: KafkaJSMessage, name: string): string | undefined {
  const value = record.headers?.[name];
  return value === undefined ? undefined : String(value);
}

test('kafka connector - every body type, header and typed property survives the record round trip (BRG-6)', () => {
  for (const [name, sent] of everyBodyType('unit')) {
    const back = recordToMessage(asFetched(messageToRecord(sent, NO_KEY)));
    assert.equal(back.constructor, sent.constructor, name);
    assert.deepEqual(messageSnapshot(back), messageSnapshot(sent), name);
    assert.equal(back.getJMSRedelivered(), false, name);
  }
});

test('kafka connector - longs keep 64 bits and property types stay exact (BRG-6, MSG-3)', () => {
  const sent = decorate(new TextMessage('x'), 'ID:long');
  const back = recordToMessage(asFetched(messageToRecord(sent, NO_KEY)));
  assert.equal(back.getLongProperty('maxLong'), 9223372036854775807n);
  assert.equal(back.getLongProperty('nearMax'), 9223372036854775806n);
  assert.equal(back.getLongProperty('minLong'), -9223372036854775808n);
  assert.deepEqual(back.getTypedProperty('looksLikeInt'), { type: 'string', value: '42' });
  assert.deepEqual(back.getTypedProperty('b'), { type: 'byte', value: -128 });
  assert.deepEqual(back.getTypedProperty('f'), { type: 'float', value: Math.fround(0.1) });
  assert.ok(Object.is(back.getDoubleProperty('negZero'), -0));
  assert.ok(Number.isNaN(back.getDoubleProperty('nan')));
  assert.equal(back.getStringProperty('JMSXAppID'), 'app');
});

test('kafka connector - headers carry natural strings a foreign consumer can read (BRG-6)', () => {
  const record = messageToRecord(decorate(new TextMessage('x'), 'ID:natural'), NO_KEY);
  assert.equal(headerText(record, 'JMSMessageID'), 'ID:natural');
  assert.equal(headerText(record, 'JMSPriority'), '7');
  assert.equal(headerText(record, 'JMSDeliveryMode'), 'NON_PERSISTENT');
  assert.equal(headerText(record, 'JMSReplyTo'), 'queue://replies');
  assert.equal(headerText(record, 'maxLong'), '9223372036854775807');
  assert.equal(headerText(record, 'f'), '0.1');
  assert.equal(headerText(record, 'flag'), 'true');
  assert.equal(headerText(record, 'str'), 'a:b,c=d ünï 😀');
  assert.equal(headerText(record, BODY_TYPE_HEADER), 'text');
  assert.match(headerText(record, TYPES_HEADER) ?? '', /(^|,)maxLong:long(,|$)/);
  assert.doesNotMatch(headerText(record, TYPES_HEADER) ?? '', /str:/, 'strings are the default type');
  assert.equal(record.timestamp, '1700000000123', 'the record timestamp is JMSTimestamp');
  assert.equal(record.value?.toString(), 'x');
});

test('kafka connector - a null text is a null value, an empty text an empty one (BRG-6)', () => {
  assert.equal(messageToRecord(new TextMessage(null), NO_KEY).value, null);
  assert.equal(messageToRecord(new XMLMessage(null), NO_KEY).value, null);
  assert.deepEqual(messageToRecord(new TextMessage(''), NO_KEY).value, Buffer.alloc(0));
  const back = recordToMessage(asFetched(messageToRecord(new XMLMessage(null), NO_KEY)));
  assert.ok(back instanceof XMLMessage);
  assert.equal(back.getText(), null);
});

test('kafka connector - a message without JMSTimestamp gets no record timestamp and comes back with 0 (BRG-6)', () => {
  const record = messageToRecord(new TextMessage('t'), NO_KEY);
  assert.equal(record.timestamp, undefined);
  const back = recordToMessage({ ...asFetched(record), timestamp: '1234' });
  assert.equal(back.getJMSTimestamp(), 0);
});

test('kafka connector - the key comes from a property, a header, an xpath evaluator, or nowhere (BRG-1)', () => {
  const message = decorate(new XMLMessage('<o><c>ACME</c></o>'), 'ID:key');
  message.setStringProperty('customer', 'c-9');
  assert.equal(recordKey(message, { key: { from: 'property', name: 'customer' } }), 'c-9');
  assert.equal(recordKey(message, { key: { from: 'property' } }), 'group-1', 'JMSXGroupID by default');
  assert.equal(recordKey(message, { key: { from: 'property', name: 'maxLong' } }), '9223372036854775807');
  assert.equal(recordKey(message, { key: { from: 'property', name: 'missing' } }), null);
  assert.equal(recordKey(message, { key: { from: 'header', name: 'JMSCorrelationID' } }), 'corr-é-1');
  assert.equal(recordKey(message, { key: { from: 'header', name: 'JMSPriority' } }), '7');
  assert.equal(recordKey(message, { key: { from: 'none' } }), null);
  const seen: string[] = [];
  const evaluateXPath = (m: Message, expression: string): string | null => {
    seen.push(expression);
    return m === message ? 'ACME' : null;
  };
  assert.equal(recordKey(message, { key: { from: 'xpath', expression: '/o/c' }, evaluateXPath }), 'ACME');
  assert.deepEqual(seen, ['/o/c']);
  assert.equal(
    recordKey(new TextMessage('<o/>'), { key: { from: 'xpath', expression: '/o' }, evaluateXPath }),
    null,
    'only XML bodies are evaluated',
  );
  assert.throws(() => recordKey(message, { key: { from: 'xpath', expression: '/o' } }), /XPath evaluator/);
  const record = messageToRecord(message, { key: { from: 'property', name: 'customer' }, partition: 2 });
  assert.equal(record.key, 'c-9');
  assert.equal(record.partition, 2);
});

test('kafka connector - a foreign record reads as bytes with string properties, its timestamp and a stable id (BRG-6)', () => {
  const record: KafkaRecordIn = {
    topic: 'orders',
    partition: 3,
    offset: '42',
    key: Buffer.from('k1'),
    value: Buffer.from([1, 2, 3]),
    timestamp: '1700000000999',
    headers: {
      traceId: Buffer.from('abc'),
      'content-type': Buffer.from('application/json'),
      JMSCorrelationID: Buffer.from('c-1'),
      JMSPriority: Buffer.from('high'),
      repeated: [Buffer.from('first'), Buffer.from('last')],
    },
  };
  const message = recordToMessage(record, { keyProperty: 'kafkaKey' });
  assert.ok(message instanceof BytesMessage);
  assert.deepEqual([...message.getBodyBytes()], [1, 2, 3]);
  assert.equal(message.getJMSMessageID(), 'ID:kafka:orders:3:42');
  assert.equal(message.getJMSTimestamp(), 1700000000999);
  assert.equal(message.getJMSCorrelationID(), 'c-1');
  assert.equal(message.getJMSPriority(), 4, 'a malformed JMS header from a foreign producer is left out');
  assert.deepEqual(message.getTypedProperty('traceId'), { type: 'string', value: 'abc' });
  assert.equal(message.propertyExists('content-type'), false, 'not a property name');
  assert.equal(message.getStringProperty('repeated'), 'last');
  assert.equal(message.getStringProperty('kafkaKey'), 'k1');
  assert.equal(
    recordToMessage(record).getJMSMessageID(),
    'ID:kafka:orders:3:42',
    'the same id on every read',
  );
  const text = recordToMessage(record, { foreignBody: 'text' });
  assert.ok(text instanceof TextMessage);
  const tombstone = recordToMessage({ ...record, value: null });
  assert.equal(tombstone.bodyType, 'empty');
});

test('kafka connector - the key property never overrides a carried property (BRG-6)', () => {
  const sent = decorate(new TextMessage('x'), 'ID:k');
  const record = asFetched(messageToRecord(sent, { key: { from: 'property', name: 'str' } }));
  const back = recordToMessage(record, { keyProperty: 'str' });
  assert.deepEqual(messageSnapshot(back), messageSnapshot(sent));
  const withNewProperty = recordToMessage(record, { keyProperty: 'kafkaKey' });
  assert.equal(withNewProperty.getStringProperty('kafkaKey'), 'a:b,c=d ünï 😀');
});

test('kafka connector - a gateway record with malformed headers is delivered as a foreign record, marked (BRG-6, DLV-9)', () => {
  const record = asFetched(messageToRecord(decorate(new TextMessage('x'), 'ID:bad'), NO_KEY));
  const headers = { ...record.headers, i: Buffer.from('not a number') };
  const errors: Error[] = [];
  const message = recordToMessage({ ...record, headers }, { onMappingError: (error) => errors.push(error) });
  assert.equal(errors.length, 1);
  assert.match(errors[0]!.message, /header 'i'/);
  assert.ok(message instanceof BytesMessage);
  assert.match(message.getStringProperty(MAPPING_ERROR_PROPERTY) ?? '', /header 'i'/);
  assert.equal(message.getStringProperty('i'), 'not a number');
  const unknownType = recordToMessage({
    ...record,
    headers: { ...record.headers, [BODY_TYPE_HEADER]: 'object' },
  });
  assert.match(unknownType.getStringProperty(MAPPING_ERROR_PROPERTY) ?? '', /unknown body type 'object'/);
});

test('kafka connector - JMSXUserID and JMSXAppID travel as record headers of those names, from gateway and foreign records alike (MSG-2, BRG-6)', () => {
  const sent = new TextMessage('order');
  sent.setProviderProperty('JMSXUserID', { type: 'string', value: 'alice' });
  sent.setProviderProperty('JMSXAppID', { type: 'string', value: 'order-entry' });
  const record = messageToRecord(sent, NO_KEY);
  assert.equal(headerText(record, 'JMSXUserID'), 'alice');
  assert.equal(headerText(record, 'JMSXAppID'), 'order-entry');
  const back = recordToMessage(asFetched(record));
  assert.equal(back.getStringProperty('JMSXUserID'), 'alice');
  assert.equal(back.getStringProperty('JMSXAppID'), 'order-entry');

  const foreign = recordToMessage({
    topic: 'orders',
    partition: 0,
    offset: '1',
    key: null,
    value: Buffer.from('x'),
    timestamp: '1',
    headers: { JMSXUserID: Buffer.from('svc-billing'), JMSXAppID: Buffer.from('billing') },
  });
  assert.equal(foreign.getStringProperty('JMSXUserID'), 'svc-billing');
  assert.equal(foreign.getStringProperty('JMSXAppID'), 'billing');
});
