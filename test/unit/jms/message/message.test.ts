import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BytesMessage,
  DeliveryMode,
  InvalidArgumentError,
  MapMessage,
  Message,
  MessageEOFError,
  MessageFormatError,
  MessageNotWriteableError,
  StreamMessage,
  TextMessage,
  XMLMessage,
} from '../../../../src/index.js';

test('message - headers have the JMS defaults and round-trip through their setters (MSG-1)', () => {
  const message = new TextMessage('hello');
  assert.equal(message.getJMSPriority(), 4);
  assert.equal(message.getJMSDeliveryMode(), DeliveryMode.PERSISTENT);
  assert.equal(message.getJMSExpiration(), 0);
  assert.equal(message.getJMSMessageID(), null);
  message.setJMSType('order');
  message.setJMSCorrelationID('c-1');
  message.setJMSPriority(9);
  message.setJMSTimestamp(1234);
  message.setJMSExpiration(5678);
  message.setJMSDeliveryTime(99);
  message.setJMSRedelivered(true);
  assert.deepEqual(
    [
      message.getJMSType(),
      message.getJMSCorrelationID(),
      message.getJMSPriority(),
      message.getJMSTimestamp(),
      message.getJMSExpiration(),
      message.getJMSDeliveryTime(),
      message.getJMSRedelivered(),
    ],
    ['order', 'c-1', 9, 1234, 5678, 99, true],
  );
});

test('message - priority outside 0-9 and an unknown delivery mode are refused (MSG-1)', () => {
  const message = new Message();
  assert.throws(() => message.setJMSPriority(10), InvalidArgumentError);
  assert.throws(() => message.setJMSPriority(-1), InvalidArgumentError);
  assert.throws(() => message.setJMSPriority(4.5), /priority 4.5 is out of range/);
  assert.throws(() => message.setJMSDeliveryMode(3 as never), /delivery mode 3 is not valid/);
});

test('message - widening conversions of the JMS table succeed (MSG-3)', () => {
  const m = new Message();
  m.setByteProperty('b', 7);
  m.setShortProperty('s', 300);
  m.setIntProperty('i', 70000);
  m.setFloatProperty('f', 1.5);
  m.setBooleanProperty('flag', true);
  m.setStringProperty('n', '42');
  m.setStringProperty('d', '2.5');
  m.setStringProperty('t', 'TRUE');
  assert.equal(m.getShortProperty('b'), 7);
  assert.equal(m.getIntProperty('s'), 300);
  assert.equal(m.getLongProperty('i'), 70000n);
  assert.equal(m.getDoubleProperty('f'), 1.5);
  assert.equal(m.getStringProperty('i'), '70000');
  assert.equal(m.getStringProperty('f'), '1.5');
  assert.equal(m.getStringProperty('flag'), 'true');
  assert.equal(m.getIntProperty('n'), 42);
  assert.equal(m.getLongProperty('n'), 42n);
  assert.equal(m.getDoubleProperty('d'), 2.5);
  assert.equal(m.getBooleanProperty('t'), true);
});

test('message - conversions the JMS table forbids throw MessageFormatError (MSG-3)', () => {
  const m = new Message();
  m.setFloatProperty('f', 1.5);
  m.setIntProperty('i', 1);
  m.setLongProperty('l', 1n);
  m.setBooleanProperty('flag', true);
  m.setStringProperty('word', 'five');
  assert.throws(() => m.getIntProperty('f'), /property 'f' is a float and cannot be read as a int/);
  assert.throws(() => m.getShortProperty('i'), MessageFormatError);
  assert.throws(() => m.getIntProperty('l'), MessageFormatError);
  assert.throws(() => m.getFloatProperty('i'), MessageFormatError);
  assert.throws(() => m.getIntProperty('flag'), MessageFormatError);
  assert.throws(() => m.getBooleanProperty('i'), MessageFormatError);
  assert.throws(() => m.getIntProperty('word'), /'five' is not a int/);
  assert.throws(() => m.getIntProperty('missing'), /property 'missing' does not exist/);
  assert.equal(m.getStringProperty('missing'), null);
  assert.equal(m.getBooleanProperty('missing'), false);
});

test('message - long properties keep exact 64-bit values (MSG-3)', () => {
  const m = new Message();
  m.setLongProperty('max', 9223372036854775807n);
  m.setLongProperty('min', -9223372036854775808n);
  assert.equal(m.getLongProperty('max'), 9223372036854775807n);
  assert.equal(m.getStringProperty('min'), '-9223372036854775808');
  assert.throws(() => m.setLongProperty('over', 9223372036854775808n), /does not fit in a 64-bit long/);
  assert.throws(() => m.setLongProperty('unsafe', 2 ** 60), /not a safe integer/);
  assert.throws(() => m.setIntProperty('big', 2 ** 31), /is not a int/);
  assert.throws(() => m.setByteProperty('b', 128), MessageFormatError);
});

test('message - property names must be identifiers, not keywords, not reserved (MSG-2)', () => {
  const m = new Message();
  assert.throws(() => m.setStringProperty('1abc', 'x'), /not a valid identifier/);
  assert.throws(() => m.setStringProperty('has space', 'x'), InvalidArgumentError);
  assert.throws(() => m.setStringProperty('', 'x'), InvalidArgumentError);
  assert.throws(() => m.setStringProperty('AND', 'x'), /selector keyword/);
  assert.throws(() => m.setStringProperty('null', 'x'), /selector keyword/);
  assert.throws(() => m.setIntProperty('JMSXDeliveryCount', 1), /reserved/);
  assert.throws(() => m.setStringProperty('JMS_BEA_x', 'x'), /reserved/);
  m.setStringProperty('JMSXGroupID', 'g');
  m.setIntProperty('JMSXGroupSeq', 1);
  m.setStringProperty('Order_$1', 'ok');
  assert.deepEqual(m.getPropertyNames().sort(), ['JMSXGroupID', 'JMSXGroupSeq', 'Order_$1']);
});

test('message - setObjectProperty types plain values and clearProperties removes them (MSG-3)', () => {
  const m = new Message();
  m.setObjectProperty('i', 5);
  m.setObjectProperty('d', 5.5);
  m.setObjectProperty('l', 5n);
  m.setObjectProperty('s', 'x');
  m.setObjectProperty('typed', { type: 'short', value: 3 });
  assert.deepEqual(
    ['i', 'd', 'l', 's', 'typed'].map((name) => m.getTypedProperty(name)?.type),
    ['int', 'double', 'long', 'string', 'short'],
  );
  assert.throws(() => m.setObjectProperty('o', { a: 1 }), /a object is not a valid value/);
  m.setObjectProperty('f', { type: 'float', value: 0.1 });
  assert.equal(m.getFloatProperty('f'), Math.fround(0.1), 'a typed float is rounded to 32 bits');
  assert.throws(() => m.setObjectProperty('bad', { type: 'int', value: 2.5 }), /2.5 is not a int/);
  assert.throws(
    () => m.setObjectProperty('bad', { type: 'long', value: 'x' }),
    /x is not a valid long value/,
  );
  assert.equal(m.propertyExists('i'), true);
  m.clearProperties();
  assert.equal(m.propertyExists('i'), false);
  assert.deepEqual(m.getPropertyNames(), []);
});

test('message - a copy marked read-only refuses writes until cleared, and does not see the sender change (MSG-3)', () => {
  const sent = new TextMessage('body');
  sent.setStringProperty('a', '1');
  const received = sent.copy();
  received.markReadOnly();
  sent.setStringProperty('a', '2');
  assert.equal(received.getStringProperty('a'), '1');
  assert.throws(() => received.setStringProperty('b', 'x'), MessageNotWriteableError);
  assert.throws(() => received.setText('new'), MessageNotWriteableError);
  received.clearProperties();
  received.setStringProperty('b', 'x');
  received.clearBody();
  received.setText('new');
  assert.equal(received.getText(), 'new');
  assert.equal(sent.getText(), 'body');
});

test('message - bytes message writes and reads typed values in order and ends with EOF (MSG-4)', () => {
  const m = new BytesMessage();
  m.writeInt(42);
  m.writeUTF('héllo');
  m.writeLong(-5n);
  m.writeDouble(1.25);
  m.writeBoolean(true);
  m.reset();
  assert.equal(m.readInt(), 42);
  assert.equal(m.readUTF(), 'héllo');
  assert.equal(m.readLong(), -5n);
  assert.equal(m.readDouble(), 1.25);
  assert.equal(m.readBoolean(), true);
  assert.throws(() => m.readByte(), MessageEOFError);
  assert.equal(new BytesMessage(Buffer.from('abc')).getBodyLength(), 3);
});

test('message - a bytes message written value by value grows past any size, and a value out of range leaves the body as it was (MSG-4)', () => {
  const m = new BytesMessage();
  // Each kind of write crosses the point where the body grows, many times over.
  for (let i = 0; i < 500; i++) {
    m.writeInt(i);
    m.writeLong(BigInt(i) * 1_000_000_007n);
    m.writeShort(i - 250);
    m.writeByte(i % 100);
    m.writeDouble(i / 3);
    m.writeFloat(0.5);
    m.writeChar('ü');
    m.writeBoolean(i % 2 === 0);
  }
  m.writeUTF('é'.repeat(1_000));
  const length = m.getBodyLength();
  assert.equal(length, 500 * (4 + 8 + 2 + 1 + 8 + 4 + 2 + 1) + 2 + 2_000);
  assert.throws(() => m.writeByte(1_000), RangeError);
  assert.throws(() => m.writeInt(2 ** 40), RangeError);
  assert.equal(m.getBodyLength(), length, 'the failed writes added nothing');
  m.reset();
  for (let i = 0; i < 500; i++) {
    assert.equal(m.readInt(), i);
    assert.equal(m.readLong(), BigInt(i) * 1_000_000_007n);
    assert.equal(m.readShort(), i - 250);
    assert.equal(m.readByte(), i % 100);
    assert.equal(m.readDouble(), i / 3);
    assert.equal(m.readFloat(), 0.5);
    assert.equal(m.readChar(), 'ü');
    assert.equal(m.readBoolean(), i % 2 === 0);
  }
  assert.equal(m.readUTF(), 'é'.repeat(1_000));
  assert.throws(() => m.readByte(), MessageEOFError);
  // A copy starts from the original's body and grows a buffer of its own when written.
  const copy = m.copy();
  copy.clearBody();
  copy.writeInt(7);
  assert.equal(copy.getBodyLength(), 4);
  assert.equal(m.getBodyLength(), length);
});

test('message - map message follows the conversion table for its entries (MSG-4)', () => {
  const m = new MapMessage();
  m.setInt('qty', 3);
  m.setString('sku', 'A-1');
  m.setBytes('raw', Buffer.from([1, 2]));
  m.setLong('big', 2n ** 62n);
  assert.equal(m.getLong('qty'), 3n);
  assert.equal(m.getString('qty'), '3');
  assert.deepEqual([...m.getBytes('raw')!], [1, 2]);
  assert.throws(() => m.getInt('sku'), /'A-1' is not a int/);
  assert.throws(() => m.getString('raw'), MessageFormatError);
  assert.equal(m.getString('absent'), null);
  assert.deepEqual(m.getMapNames().sort(), ['big', 'qty', 'raw', 'sku']);
});

test('message - stream message reads back what was written, converting as JMS allows (MSG-4)', () => {
  const m = new StreamMessage();
  m.writeShort(12);
  m.writeString('7');
  m.writeFloat(0.5);
  m.reset();
  assert.equal(m.readLong(), 12n);
  assert.equal(m.readInt(), 7);
  assert.throws(() => m.readInt(), MessageFormatError);
  assert.equal(m.readDouble(), 0.5);
  assert.throws(() => m.readObject(), MessageEOFError);
});

test('message - size counts properties and body; XML messages are text with their own type (MSG-4)', () => {
  const m = new XMLMessage('<order id="1"/>');
  assert.equal(m.bodyType, 'xml');
  const before = m.getSize();
  assert.equal(before, Buffer.byteLength('<order id="1"/>'));
  m.setIntProperty('n', 1);
  assert.equal(m.getSize(), before + 1 + 4);
  assert.equal(new TextMessage('é').getBodySize(), 2);
});

test("message - properties are each message's own: new messages, copies and cleared messages never share writes (MSG-2)", () => {
  const first = new TextMessage('a');
  first.setStringProperty('region', 'eu');
  assert.equal(new TextMessage('b').getStringProperty('region'), null, 'a new message starts with none');

  const copy = first.copy();
  copy.setStringProperty('region', 'us');
  copy.setIntProperty('n', 1);
  assert.equal(first.getStringProperty('region'), 'eu', 'a copy writes its own');
  assert.equal(first.propertyExists('n'), false);

  first.clearProperties();
  first.setStringProperty('after', 'clear');
  assert.deepEqual(copy.getPropertyNames().sort(), ['n', 'region']);
  assert.deepEqual(new TextMessage('c').getPropertyNames(), []);
});
