/**
 * Messages that use every header, every property type (longs at the 64-bit edges, float and
 * double edge values) and every body type, for the Kafka mapping's round-trip tests (BRG-6).
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
} from '../../../../src/spi/index.js';

/** Sets every carried header and every property type on `message`. */
export function decorate<M extends Message>(message: M, id: string): M {
  message.setJMSMessageID(id);
  message.setJMSTimestamp(1_700_000_000_123);
  message.setJMSCorrelationID('corr-é-1');
  message.setJMSReplyTo(new Queue('replies'));
  message.setJMSType('order.created');
  message.setJMSExpiration(1_800_000_000_000);
  message.setJMSPriority(7);
  message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
  message.setJMSDeliveryTime(1_700_000_000_500);
  message.setBooleanProperty('flag', true);
  message.setBooleanProperty('off', false);
  message.setByteProperty('b', -128);
  message.setShortProperty('s', 32767);
  message.setIntProperty('i', -2147483648);
  message.setLongProperty('maxLong', 9223372036854775807n);
  message.setLongProperty('minLong', -9223372036854775808n);
  message.setLongProperty('nearMax', 9223372036854775806n);
  message.setFloatProperty('f', 0.1);
  message.setDoubleProperty('d', Math.PI);
  message.setDoubleProperty('negZero', -0);
  message.setDoubleProperty('nan', Number.NaN);
  message.setDoubleProperty('inf', Number.NEGATIVE_INFINITY);
  message.setStringProperty('str', 'a:b,c=d ünï 😀');
  message.setStringProperty('empty', '');
  message.setStringProperty('looksLikeInt', '42');
  message.setStringProperty('JMSXGroupID', 'group-1');
  message.setIntProperty('JMSXGroupSeq', 3);
  message.setProviderProperty('JMSXAppID', { type: 'string', value: 'app' });
  return message;
}

/** One decorated message of every body type, named by what it tests. */
export function everyBodyType(idPrefix: string): Array<[string, Message]> {
  const map = new MapMessage();
  map.setBoolean('bool', true);
  map.setByte('byte', 1);
  map.setShort('short', 2);
  map.setChar('char', 'x');
  map.setInt('int', 3);
  map.setLong('long', -9223372036854775808n);
  map.setFloat('float', 1.5);
  map.setDouble('double', -0);
  map.setString('string', 'text');
  map.setBytes('bytes', new Uint8Array([0, 255, 7]));
  const stream = new StreamMessage();
  stream.writeBoolean(false);
  stream.writeLong(9223372036854775807n);
  stream.writeChar('é');
  stream.writeFloat(Number.NaN);
  stream.writeDouble(2.5);
  stream.writeString('');
  stream.writeBytes(new Uint8Array([1, 2]));
  const cases: Array<[string, Message]> = [
    ['text', new TextMessage('héllo\nwörld')],
    ['empty text', new TextMessage('')],
    ['null text', new TextMessage(null)],
    ['xml', new XMLMessage('<order id="1"><customer>ACME</customer></order>')],
    ['bytes', new BytesMessage(new Uint8Array([0, 1, 2, 253, 254, 255]))],
    ['no bytes', new BytesMessage(new Uint8Array(0))],
    ['map', map],
    ['stream', stream],
    ['empty body', new Message()],
  ];
  return cases.map(([name, message], index) => [name, decorate(message, `ID:${idPrefix}-${index}`)]);
}
