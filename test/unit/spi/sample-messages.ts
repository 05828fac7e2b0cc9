/**
 * Messages that exercise every part of the lossless mapping (BRG-6): every body type, every
 * carried header set to a non-default value, and a property of every property type with edge
 * values. Shared by the codec's unit tests and the connectors' unit and integration tests.
 */
import {
  BytesMessage,
  DeliveryMode,
  MapMessage,
  Message,
  Queue,
  StreamMessage,
  TextMessage,
  XMLMessage,
  type BodyType,
} from '../../../src/spi/index.js';

/** Every body type, in the order tests report them. */
export const ALL_BODY_TYPES: readonly BodyType[] = ['text', 'xml', 'bytes', 'map', 'stream', 'empty'];

/** 2^63 - 1: a long no double can hold exactly. */
export const MAX_LONG = 9223372036854775807n;

/** A message of `bodyType` with a body that uses every value type its body can hold. */
export function sampleBody(bodyType: BodyType): Message {
  switch (bodyType) {
    case 'text':
      return new TextMessage('héllo wörld ✓ — "quotes" \n and newlines');
    case 'xml':
      return new XMLMessage('<?xml version="1.0"?><order id="7"><item qty="3">widget</item></order>');
    case 'bytes':
      return new BytesMessage(Uint8Array.from([0, 1, 2, 127, 128, 254, 255, 0x7b, 0x22]));
    case 'map': {
      const map = new MapMessage();
      map.setBoolean('flag', true);
      map.setByte('b', -128);
      map.setShort('s', 32767);
      map.setChar('c', 'ü');
      map.setInt('qty', 3);
      map.setLong('big', MAX_LONG - 1n);
      map.setLong('small', -9223372036854775808n);
      map.setFloat('f', 0.1);
      map.setDouble('d', -1.5e300);
      map.setDouble('nan', Number.NaN);
      map.setDouble('negZero', -0);
      map.setString('name', 'wïdget');
      map.setString('1', 'an integer-like name');
      map.setBytes('raw', Uint8Array.from([1, 2, 3, 255]));
      return map;
    }
    case 'stream': {
      const stream = new StreamMessage();
      stream.writeBoolean(false);
      stream.writeByte(127);
      stream.writeShort(-32768);
      stream.writeChar('x');
      stream.writeInt(-2147483648);
      stream.writeLong(MAX_LONG);
      stream.writeFloat(Number.POSITIVE_INFINITY);
      stream.writeDouble(Math.PI);
      stream.writeString('');
      stream.writeBytes(new Uint8Array(0));
      return stream;
    }
    case 'empty':
      return new Message();
  }
}

/** {@link sampleBody} with every carried header and a property of every type. */
export function sampleMessage(bodyType: BodyType, now = 1_700_000_000_123): Message {
  const message = sampleBody(bodyType);
  message.setJMSMessageID(`ID:sample-${bodyType}-1`);
  message.setJMSTimestamp(now);
  message.setJMSCorrelationID('corr-ü-42');
  message.setJMSReplyTo(new Queue('replies'));
  message.setJMSType('order.created');
  message.setJMSExpiration(now + 3_600_000);
  message.setJMSPriority(7);
  message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
  message.setJMSDeliveryTime(now + 5);
  message.setBooleanProperty('flag', true);
  message.setByteProperty('tiny', -7);
  message.setShortProperty('shortish', 1234);
  message.setIntProperty('qty', 42);
  message.setLongProperty('big', MAX_LONG);
  message.setLongProperty('negBig', -9223372036854775807n);
  message.setFloatProperty('ratio', 1.5);
  message.setFloatProperty('tenth', 0.1);
  message.setDoubleProperty('price', 19.99);
  message.setDoubleProperty('notANumber', Number.NaN);
  message.setStringProperty('name', 'wïdget, "quoted": yes');
  message.setStringProperty('numeric', '42');
  message.setStringProperty('emptyString', '');
  message.setStringProperty('JMSXGroupID', 'group-1');
  message.setIntProperty('JMSXGroupSeq', 3);
  return message;
}
