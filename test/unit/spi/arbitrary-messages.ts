/**
 * fast-check arbitraries of whole messages: every body type, random carried headers, and
 * properties, map entries and stream items of every value type with their edge values (-0, NaN,
 * ±Infinity, 64-bit longs, empty strings and bytes). The lossless round-trip properties of the
 * JSON form, the store and the wire mappings draw from them.
 */
import fc from 'fast-check';
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
  type TypedValue,
  type ValueType,
} from '../../../src/spi/index.js';
import { checkPropertyName } from '../../../src/jms/message/message.js';

/** A time well inside the range every protocol carries. */
export const ARBITRARY_NOW = 1_700_000_000_123;

const PROPERTY_TYPES = ['boolean', 'byte', 'short', 'int', 'long', 'float', 'double', 'string'] as const;
const ENTRY_TYPES: readonly ValueType[] = [...PROPERTY_TYPES, 'char', 'bytes'];

/** Text without lone surrogates (UTF-8, which every protocol uses, cannot carry them). */
const text = fc.string({ unit: 'binary', maxLength: 12 });

/** The floating values JSON numbers cannot hold, drawn as often as any other value. */
const floatingEdges = fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1);

/** A typed value of `type`, edge values included. */
export function typedValue(type: ValueType): fc.Arbitrary<TypedValue> {
  switch (type) {
    case 'boolean':
      return fc.boolean().map((value) => ({ type, value }));
    case 'byte':
      return fc.integer({ min: -128, max: 127 }).map((value) => ({ type, value }));
    case 'short':
      return fc.integer({ min: -32768, max: 32767 }).map((value) => ({ type, value }));
    case 'int':
      return fc.integer({ min: -2147483648, max: 2147483647 }).map((value) => ({ type, value }));
    case 'long':
      return fc
        .oneof(
          fc.constantFrom(-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n),
          fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
        )
        .map((value) => ({ type, value }));
    case 'float':
      return fc.oneof(floatingEdges, fc.float()).map((value) => ({ type, value }));
    case 'double':
      return fc.oneof(floatingEdges, fc.double()).map((value) => ({ type, value }));
    case 'char':
      return fc
        .string({ unit: 'binary', minLength: 1, maxLength: 1 })
        .filter((value) => value.length === 1)
        .map((value) => ({ type, value }));
    case 'string':
      return text.map((value) => ({ type, value }));
    case 'bytes':
      return fc.uint8Array({ maxLength: 8 }).map((value) => ({ type, value }));
  }
}

const anyTypedValue = (types: readonly ValueType[]): fc.Arbitrary<TypedValue> =>
  fc.constantFrom(...types).chain(typedValue);

function isPropertyName(name: string): boolean {
  try {
    checkPropertyName(name);
    return true;
  } catch {
    return false;
  }
}

const propertyName = fc.stringMatching(/^[a-z][A-Za-z0-9_]{0,7}$/).filter(isPropertyName);

const identifier = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,11}$/);

interface HeaderValues {
  messageId: string | null;
  timestamp: number;
  correlationId: string | null;
  replyTo: Queue | Topic | null;
  type: string | null;
  expiresIn: number;
  priority: number;
  persistent: boolean;
  deliveryIn: number;
}

const headers: fc.Arbitrary<HeaderValues> = fc.record({
  messageId: fc.option(identifier.map((id) => `ID:${id}`)),
  timestamp: fc.integer({ min: 1, max: ARBITRARY_NOW }),
  correlationId: fc.option(identifier),
  replyTo: fc.option(
    fc.oneof(
      identifier.map((name) => new Queue(name)),
      identifier.map((name) => new Topic(name)),
    ),
  ),
  type: fc.option(identifier),
  expiresIn: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 86_400_000 })),
  priority: fc.integer({ min: 0, max: 9 }),
  persistent: fc.boolean(),
  deliveryIn: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 86_400_000 })),
});

const body: fc.Arbitrary<Message> = fc.oneof(
  fc.option(text).map((value) => new TextMessage(value)),
  fc.option(text).map((value) => new XMLMessage(value)),
  fc.uint8Array({ maxLength: 16 }).map((value) => new BytesMessage(value)),
  fc
    .uniqueArray(fc.tuple(propertyName, anyTypedValue(ENTRY_TYPES)), {
      selector: ([name]) => name,
      maxLength: 6,
    })
    .map((entries) => {
      const map = new MapMessage();
      for (const [name, typed] of entries) map.setTypedEntry(name, typed);
      return map;
    }),
  fc.array(anyTypedValue(ENTRY_TYPES), { maxLength: 6 }).map((items) => {
    const stream = new StreamMessage();
    for (const typed of items) stream.writeTyped(typed);
    return stream;
  }),
  fc.constant(null).map(() => new Message()),
);

/**
 * A random message: a random body, headers and up to eight properties of the property types.
 * Times are relative to {@link ARBITRARY_NOW}, so expirations and delivery times lie ahead of it.
 */
export const arbitraryMessage: fc.Arbitrary<Message> = fc
  .tuple(
    body,
    headers,
    fc.uniqueArray(fc.tuple(propertyName, anyTypedValue(PROPERTY_TYPES)), {
      selector: ([name]) => name,
      maxLength: 8,
    }),
  )
  .map(([message, header, properties]) => {
    message.setJMSMessageID(header.messageId);
    message.setJMSTimestamp(header.timestamp);
    message.setJMSCorrelationID(header.correlationId);
    message.setJMSReplyTo(header.replyTo);
    message.setJMSType(header.type);
    message.setJMSExpiration(header.expiresIn === 0 ? 0 : ARBITRARY_NOW + header.expiresIn);
    message.setJMSPriority(header.priority);
    message.setJMSDeliveryMode(header.persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
    message.setJMSDeliveryTime(header.deliveryIn === 0 ? 0 : ARBITRARY_NOW + header.deliveryIn);
    for (const [name, typed] of properties) message.setObjectProperty(name, typed);
    return message;
  });

/** The seed every round-trip property runs with, so a failure reproduces. */
export const ROUND_TRIP_SEED = 20261202;
