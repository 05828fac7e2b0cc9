import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  BytesMessage,
  DeliveryMode,
  MapMessage,
  Message,
  Queue,
  StreamMessage,
  TextMessage,
  Topic,
  XMLMessage,
} from '../../../src/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import {
  MessageDecodeError,
  deserializeMessage,
  deserializeStoredMessage,
  serializeMessage,
} from '../../../src/store/message-serializer.js';

/** Everything observable about a message, in plain values, so two messages compare with deepEqual. */
function describe(message: Message): Record<string, unknown> {
  const properties = Object.fromEntries(
    message.getPropertyNames().map((name) => [name, message.getTypedProperty(name)]),
  );
  let body: unknown;
  if (message instanceof MapMessage)
    body = [...message.getTypedEntries()].map(([name, value]) => [name, value.type, value.value]);
  else if (message instanceof StreamMessage) body = message.getTypedItems().map((v) => [v.type, v.value]);
  else if (message instanceof BytesMessage) body = [...message.getBodyBytes()];
  else body = message.getBody();
  return {
    class: message.constructor.name,
    bodyType: message.bodyType,
    id: message.getJMSMessageID(),
    timestamp: message.getJMSTimestamp(),
    correlationId: message.getJMSCorrelationID(),
    replyTo: message.getJMSReplyTo()?.toString() ?? null,
    replyToClass: message.getJMSReplyTo()?.constructor.name ?? null,
    destination: message.getJMSDestination()?.toString() ?? null,
    deliveryMode: message.getJMSDeliveryMode(),
    redelivered: message.getJMSRedelivered(),
    type: message.getJMSType(),
    expiration: message.getJMSExpiration(),
    priority: message.getJMSPriority(),
    deliveryTime: message.getJMSDeliveryTime(),
    deliveryCount: message.deliveryCount,
    size: message.getSize(),
    properties,
    body,
  };
}

function roundTrip(message: Message): Message {
  return deserializeMessage(serializeMessage(message));
}

function withHeaders<T extends Message>(message: T): T {
  message.setJMSMessageID('ID:abc-1');
  message.setJMSTimestamp(1_767_225_600_123);
  message.setJMSCorrelationID('corr-7');
  message.setJMSReplyTo(new Topic('replies.prices'));
  message.setJMSDestination(new Queue('orders'));
  message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
  message.setJMSRedelivered(true);
  message.setJMSType('OrderCreated');
  message.setJMSExpiration(1_767_225_700_000);
  message.setJMSPriority(9);
  message.setJMSDeliveryTime(1_767_225_650_000);
  return message;
}

/** One of each body type, each with headers and a property, for the tests that go through a file. */
function oneOfEach(): Message[] {
  const map = new MapMessage();
  map.setLong('big', 9_223_372_036_854_775_807n);
  map.setChar('c', 'é');
  map.setBytes('raw', new Uint8Array([0, 255, 7]));
  const stream = new StreamMessage();
  stream.writeFloat(1.5);
  stream.writeString('');
  stream.writeBoolean(false);
  const messages = [
    new Message(),
    new TextMessage('hello'),
    new TextMessage('nul \u0000 inside, 😀 outside'),
    new TextMessage('lone \ud800 surrogate'),
    new TextMessage(null),
    new XMLMessage('<order id="1"/>'),
    new BytesMessage(new Uint8Array([1, 2, 3])),
    map,
    stream,
  ];
  return messages.map((message, i) => {
    withHeaders(message).setJMSMessageID(`ID:each-${i}`);
    message.setIntProperty('n', i);
    return message;
  });
}

test('file store - every header survives the round trip (PER-1)', () => {
  const original = withHeaders(new TextMessage('x'));
  original.setJMSReplyTo(new Queue('replies/with spaces and ü'));
  assert.deepEqual(describe(roundTrip(original)), describe(original));

  const defaults = new Message();
  const copy = roundTrip(defaults);
  assert.deepEqual(describe(copy), describe(defaults));
  assert.equal(copy.getJMSReplyTo(), null);
  assert.equal(copy.getJMSDeliveryMode(), DeliveryMode.PERSISTENT);
  assert.equal(copy.getJMSPriority(), 4);
});

test('file store - what is kept of the sender comes back apart from the message, and only when set (DLV-2)', () => {
  const message = withHeaders(new TextMessage('x'));
  const kept = deserializeStoredMessage(
    serializeMessage(message, { redeliveryLimit: 3, clientId: 'billing' }),
  );
  assert.deepEqual(kept.sender, { redeliveryLimit: 3, clientId: 'billing' });
  assert.deepEqual(describe(kept.message), describe(message));
  assert.deepEqual(
    deserializeStoredMessage(serializeMessage(message, { redeliveryLimit: 0, clientId: null })).sender,
    {
      redeliveryLimit: 0,
      clientId: null,
    },
  );
  assert.equal(deserializeStoredMessage(serializeMessage(message)).sender, undefined);
  assert.equal(
    deserializeStoredMessage(serializeMessage(message, { redeliveryLimit: -1, clientId: null })).sender,
    undefined,
  );
  const bad = serializeMessage(message);
  bad.headers = bad.headers.replace('{', '{"lim":"many",');
  assert.throws(() => deserializeStoredMessage(bad), MessageDecodeError);
});

test('file store - reply-to and destination come back as queue or topic handles (PER-1)', () => {
  const message = withHeaders(new Message());
  message.setJMSReplyTo(new Queue('answers'));
  message.setJMSDestination(new Topic('news'));
  const copy = roundTrip(message);
  assert.ok(copy.getJMSReplyTo() instanceof Queue);
  assert.equal(copy.getJMSReplyTo()!.toString(), 'queue://answers');
  assert.ok(copy.getJMSDestination() instanceof Topic);
  assert.equal(copy.getJMSDestination()!.toString(), 'topic://news');
});

test('file store - typed properties keep their exact types, long to 64 bits (PER-1)', () => {
  const message = new Message();
  message.setBooleanProperty('flag', true);
  message.setByteProperty('b', -128);
  message.setShortProperty('s', 32767);
  message.setIntProperty('i', -2147483648);
  message.setLongProperty('maxLong', 9_223_372_036_854_775_807n);
  message.setLongProperty('minLong', -9_223_372_036_854_775_808n);
  message.setLongProperty('smallLong', 5);
  message.setFloatProperty('f', 0.1);
  message.setDoubleProperty('d', 0.1);
  message.setDoubleProperty('nan', Number.NaN);
  message.setDoubleProperty('inf', Number.POSITIVE_INFINITY);
  message.setFloatProperty('negInf', Number.NEGATIVE_INFINITY);
  message.setDoubleProperty('negZero', -0);
  message.setStringProperty('str', 'a "quoted" \u0000 ü 😀 string');
  message.setStringProperty('empty', '');
  message.setStringProperty('__proto__', 'not a prototype');
  const copy = roundTrip(message);
  assert.deepEqual(describe(copy), describe(message));
  assert.equal(copy.getTypedProperty('smallLong')?.type, 'long');
  assert.equal(copy.getLongProperty('maxLong'), 9_223_372_036_854_775_807n);
  assert.equal(copy.getTypedProperty('f')?.type, 'float');
  assert.equal(copy.getFloatProperty('f'), Math.fround(0.1));
  assert.ok(Object.is(copy.getDoubleProperty('negZero'), -0));
  assert.ok(Number.isNaN(copy.getDoubleProperty('nan')));
  assert.deepEqual(copy.getPropertyNames(), message.getPropertyNames());
});

test('file store - provider properties JMSX and JMS_ survive (PER-1)', () => {
  const message = new TextMessage('moved');
  message.setStringProperty('JMSXGroupID', 'g-1');
  message.setIntProperty('JMSXGroupSeq', 3);
  message.setProviderProperty('JMSXUserID', { type: 'string', value: 'alice' });
  message.setProviderProperty('JMS_ErrorOrigin', { type: 'string', value: 'queue://orders' });
  message.setProviderProperty('JMS_ErrorDeliveryCount', { type: 'int', value: 4 });
  message.deliveryCount = 2;
  const copy = roundTrip(message);
  assert.deepEqual(describe(copy), describe(message));
  assert.equal(copy.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(copy.getStringProperty('JMS_ErrorOrigin'), 'queue://orders');
});

test('file store - text and xml bodies survive, null, empty, NUL and lone surrogates included (PER-1)', () => {
  for (const text of [
    null,
    '',
    'plain',
    'nul \u0000 inside',
    'emoji 😀 and ü',
    'lone \ud800 surrogate',
    'x'.repeat(100_000),
  ]) {
    for (const message of [new TextMessage(text), new XMLMessage(text)]) {
      const copy = roundTrip(message);
      assert.deepEqual(describe(copy), describe(message), `text ${JSON.stringify(text?.slice(0, 20))}`);
      assert.equal((copy as TextMessage).getText(), text);
    }
  }
  assert.ok(roundTrip(new XMLMessage('<a/>')) instanceof XMLMessage);
});

test('file store - bytes bodies survive byte for byte (PER-1)', () => {
  const all = new Uint8Array(256).map((_, i) => i);
  for (const bytes of [new Uint8Array(0), all]) {
    const message = new BytesMessage(bytes);
    assert.deepEqual(describe(roundTrip(message)), describe(message));
  }
  const written = new BytesMessage();
  written.writeInt(42);
  written.writeUTF('hé');
  written.writeLong(-1n);
  const copy = roundTrip(written) as BytesMessage;
  assert.deepEqual(describe(copy), describe(written));
  copy.reset();
  assert.equal(copy.readInt(), 42);
  assert.equal(copy.readUTF(), 'hé');
  assert.equal(copy.readLong(), -1n);
});

test('file store - map bodies keep every entry with its type (PER-1)', () => {
  const message = new MapMessage();
  message.setBoolean('bool', false);
  message.setByte('byte', 127);
  message.setShort('short', -32768);
  message.setChar('char', '\u0000');
  message.setInt('int', 7);
  message.setLong('long', -9_223_372_036_854_775_808n);
  message.setFloat('float', 3.4028234663852886e38);
  message.setDouble('double', Number.NaN);
  message.setDouble('negZero', -0);
  message.setString('string', 'ü');
  message.setBytes('bytes', new Uint8Array([0, 1, 254, 255]));
  message.setBytes('noBytes', new Uint8Array(0));
  const copy = roundTrip(message) as MapMessage;
  assert.deepEqual(describe(copy), describe(message));
  assert.equal(copy.getString('int'), '7');
  assert.equal(copy.getChar('char'), '\u0000');
  assert.ok(Object.is(copy.getDouble('negZero'), -0));
  assert.deepEqual(roundTrip(new MapMessage()).bodyType, 'map');
});

test('file store - stream bodies keep every item in order with its type (PER-1)', () => {
  const message = new StreamMessage();
  message.writeBoolean(true);
  message.writeByte(-1);
  message.writeShort(2);
  message.writeChar('z');
  message.writeInt(3);
  message.writeLong(1n << 62n);
  message.writeFloat(-0.5);
  message.writeDouble(Number.NEGATIVE_INFINITY);
  message.writeString('s');
  message.writeBytes(new Uint8Array([9, 8]));
  const copy = roundTrip(message) as StreamMessage;
  assert.deepEqual(describe(copy), describe(message));
  copy.reset();
  assert.equal(copy.readBoolean(), true);
  assert.equal(copy.readByte(), -1);
  assert.equal(copy.readShort(), 2);
  assert.equal(copy.readChar(), 'z');
  assert.equal(copy.readLong(), 3n);
  assert.equal(copy.readLong(), 1n << 62n);
});

test('file store - an empty body stays empty (PER-1)', () => {
  const message = withHeaders(new Message());
  const copy = roundTrip(message);
  assert.equal(copy.bodyType, 'empty');
  assert.equal(copy.constructor, Message);
  assert.deepEqual(describe(copy), describe(message));
});

test('file store - every body type survives a write to disk and a reopen (PER-1)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'file-store-'));
  try {
    const messages = oneOfEach();
    const store = await FileStore.open({ path: dir });
    await store.recover();
    await store.commit(
      messages.flatMap((message, seq) => [
        { op: 'addMessage' as const, id: message.getJMSMessageID()!, seq: seq + 1, message },
        {
          op: 'addRef' as const,
          backlog: 'queue://q',
          id: message.getJMSMessageID()!,
          seq: seq + 1,
          deliveryCount: 0,
          notBefore: 0,
        },
      ]),
    );
    await store.close();
    const reopened = await FileStore.open({ path: dir });
    // References are read lazily: read them out before the store closes.
    const refs = [...(await reopened.recover()).refs];
    await reopened.close();
    assert.deepEqual(
      refs.map((ref) => describe(ref.message)),
      messages.map(describe),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('file store - a damaged record is reported, not guessed at (PER-1)', () => {
  const good = serializeMessage(new TextMessage('x'));
  assert.throws(() => deserializeMessage({ ...good, bodyType: 'video' as never }), MessageDecodeError);
  assert.throws(() => deserializeMessage({ ...good, headers: '{"dm":2' }), MessageDecodeError);
  assert.throws(() => deserializeMessage({ ...good, headers: '{"dm":3,"pri":4}' }), MessageDecodeError);
  assert.throws(() => deserializeMessage({ ...good, properties: '["a","long","1.5"]' }), MessageDecodeError);
  assert.throws(() => deserializeMessage({ ...good, properties: '["a","int"]' }), MessageDecodeError);
  assert.throws(
    () => deserializeMessage({ bodyType: 'bytes', headers: good.headers, properties: null, body: 'text' }),
    MessageDecodeError,
  );
});
