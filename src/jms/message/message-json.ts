/**
 * The JSON form of a message, for the CLI (`jms-gateway selector eval --message msg.json`) and
 * the admin API. It is lossless: `messageFromJson(messageToJson(m))` has the same headers, typed
 * properties and body as `m`.
 *
 * ```json
 * {
 *   "type": "text",
 *   "headers": { "JMSType": "order", "JMSPriority": 4, "JMSDeliveryMode": "PERSISTENT", "JMSCorrelationID": "c-1" },
 *   "properties": { "color": "red", "weight": 12, "ratio": 0.5, "id": { "type": "long", "value": "9007199254740993" } },
 *   "body": "<order/>"
 * }
 * ```
 *
 * - `type`: `text`, `xml`, `bytes`, `map`, `stream` or `empty`. Optional: a string body means
 *   `text`, no body means `empty`.
 * - `headers` (all optional): JMSMessageID, JMSCorrelationID, JMSType (string or null),
 *   JMSTimestamp, JMSExpiration, JMSDeliveryTime (integer ms), JMSPriority (0-9),
 *   JMSDeliveryMode (`"PERSISTENT"` / `"NON_PERSISTENT"`, or 2 / 1), JMSRedelivered (boolean),
 *   JMSDestination and JMSReplyTo (`"queue://name"` / `"topic://name"` or null).
 * - `properties`: a plain JSON value is typed as `setObjectProperty` types it (a boolean, a
 *   string, an int for an integer in int range, else a double); `{ "type": T, "value": V }`
 *   chooses the type: boolean, byte, short, int, long, float, double, string. Long values are
 *   strings (`"9223372036854775807"`) so 64 bits survive JSON; float and double accept `"NaN"`,
 *   `"Infinity"`, `"-Infinity"` and `"-0"`. `JMSXDeliveryCount` sets the delivery count; other `JMSX`
 *   and `JMS_` names are set as provider properties.
 * - `body`: text and xml: a string (or null); bytes: base64; map: an object of entries; stream:
 *   an array of items. Entries and items take the same plain or typed values as properties, plus
 *   `char` (a one-character string) and `bytes` (base64).
 *
 * A malformed document throws MessageFormatError naming the path: `properties.count: expected ...`.
 */
import { parseDestination, type Destination } from '../destination/destination.js';
import { MessageFormatError } from '../errors.js';
import { BytesMessage } from './bytes-message.js';
import { MapMessage } from './map-message.js';
import { DeliveryMode, Message, checkPropertyName, type BodyType } from './message.js';
import { StreamMessage } from './stream-message.js';
import { TextMessage } from './text-message.js';
import { fromObject, integerValue, longValue, type TypedValue } from './typed-value.js';
import { typedFromJsonValue, typedToJsonValue } from './typed-value-codec.js';
import { XMLMessage } from './xml-message.js';

/** A typed value in JSON: `{ "type": "long", "value": "123" }`. */
export interface TypedJson {
  type: string;
  value: boolean | number | string;
}

/** A property, map entry or stream item in JSON. */
export type ValueJson = boolean | number | string | TypedJson;

/** The JSON form {@link messageToJson} produces and {@link messageFromJson} reads. */
export interface MessageJson {
  type: BodyType;
  headers: Record<string, string | number | boolean | null>;
  properties: Record<string, ValueJson>;
  body?: string | null | Record<string, ValueJson> | ValueJson[];
}

const BODY_TYPES: readonly BodyType[] = ['text', 'xml', 'bytes', 'map', 'stream', 'empty'];
const TOP_LEVEL = new Set(['type', 'headers', 'properties', 'body']);
const PROPERTY_TYPES = ['boolean', 'byte', 'short', 'int', 'long', 'float', 'double', 'string'] as const;
const ENTRY_TYPES = [...PROPERTY_TYPES, 'char', 'bytes'] as const;

/** Builds a message from its JSON form; throws MessageFormatError with the path of the first problem. */
export function messageFromJson(json: unknown): Message {
  const document = expectObject(json, '(message)');
  for (const key of Object.keys(document)) {
    if (!TOP_LEVEL.has(key)) fail(key, `unknown field (expected ${[...TOP_LEVEL].join(', ')})`);
  }
  const message = createMessage(bodyTypeOf(document), document.body);
  if (document.headers !== undefined) readHeaders(message, expectObject(document.headers, 'headers'));
  if (document.properties !== undefined)
    readProperties(message, expectObject(document.properties, 'properties'));
  return message;
}

/** The JSON form of a message: every header, every property, the body. */
export function messageToJson(message: Message): MessageJson {
  const properties: Record<string, ValueJson> = {};
  for (const name of message.getPropertyNames()) {
    const value = message.getTypedProperty(name);
    if (value !== undefined) properties[name] = typedToJson(value);
  }
  const json: MessageJson = { type: message.bodyType, headers: headersToJson(message), properties };
  const body = bodyToJson(message);
  if (body !== undefined) json.body = body;
  return json;
}

// --- reading ---

function fail(path: string, problem: string): never {
  throw new MessageFormatError(`${path}: ${problem}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${String(value)}`;
  return `a ${typeof value}`;
}

function expectObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    fail(path, `expected an object but found ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

function pathOf(parent: string, name: string): string {
  return /^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)
    ? `${parent}.${name}`
    : `${parent}[${JSON.stringify(name)}]`;
}

function bodyTypeOf(document: Record<string, unknown>): BodyType {
  const type = document.type;
  if (type === undefined) {
    if (typeof document.body === 'string') return 'text';
    if (document.body === undefined || document.body === null) return 'empty';
    fail('type', `missing: say which body type this is (${BODY_TYPES.join(', ')})`);
  }
  if (typeof type !== 'string' || !BODY_TYPES.includes(type as BodyType)) {
    fail('type', `expected one of ${BODY_TYPES.join(', ')} but found ${describe(type)}`);
  }
  return type as BodyType;
}

function createMessage(type: BodyType, body: unknown): Message {
  switch (type) {
    case 'text':
    case 'xml': {
      if (body !== undefined && body !== null && typeof body !== 'string') {
        fail('body', `expected a string (the ${type} body) or null but found ${describe(body)}`);
      }
      const text = body ?? null;
      return type === 'xml' ? new XMLMessage(text) : new TextMessage(text);
    }
    case 'bytes':
      return new BytesMessage(body === undefined || body === null ? new Uint8Array() : base64(body, 'body'));
    case 'map': {
      const message = new MapMessage();
      if (body !== undefined && body !== null) {
        for (const [name, value] of Object.entries(expectObject(body, 'body'))) {
          message.setTypedEntry(name, readValue(value, pathOf('body', name), ENTRY_TYPES));
        }
      }
      return message;
    }
    case 'stream': {
      const message = new StreamMessage();
      if (body !== undefined && body !== null) {
        if (!Array.isArray(body))
          fail('body', `expected an array (the stream items) but found ${describe(body)}`);
        body.forEach((item, i) => message.writeTyped(readValue(item, `body[${i}]`, ENTRY_TYPES)));
      }
      return message;
    }
    case 'empty':
      if (body !== undefined && body !== null)
        fail('body', `an empty message has no body but found ${describe(body)}`);
      return new Message();
  }
}

function base64(value: unknown, path: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 === 1) {
    fail(path, `expected base64 text but found ${describe(value)}`);
  }
  return Buffer.from(value, 'base64');
}

type HeaderReader = (message: Message, value: unknown, path: string) => void;

function nullableString(set: (message: Message, value: string | null) => void): HeaderReader {
  return (message, value, path) => {
    if (value !== null && typeof value !== 'string')
      fail(path, `expected a string or null but found ${describe(value)}`);
    set(message, value);
  };
}

function time(set: (message: Message, value: number) => void): HeaderReader {
  return (message, value, path) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      fail(path, `expected a time in epoch milliseconds (an integer >= 0) but found ${describe(value)}`);
    }
    set(message, value);
  };
}

function destination(set: (message: Message, value: Destination | null) => void): HeaderReader {
  return (message, value, path) => {
    if (value === null) return set(message, null);
    if (typeof value !== 'string')
      fail(path, `expected 'queue://name', 'topic://name' or null but found ${describe(value)}`);
    try {
      set(message, parseDestination(value));
    } catch (error) {
      fail(path, (error as Error).message);
    }
  };
}

const HEADERS: Readonly<Record<string, HeaderReader>> = {
  JMSMessageID: nullableString((m, v) => m.setJMSMessageID(v)),
  JMSCorrelationID: nullableString((m, v) => m.setJMSCorrelationID(v)),
  JMSType: nullableString((m, v) => m.setJMSType(v)),
  JMSTimestamp: time((m, v) => m.setJMSTimestamp(v)),
  JMSExpiration: time((m, v) => m.setJMSExpiration(v)),
  JMSDeliveryTime: time((m, v) => m.setJMSDeliveryTime(v)),
  JMSDestination: destination((m, v) => m.setJMSDestination(v)),
  JMSReplyTo: destination((m, v) => m.setJMSReplyTo(v)),
  JMSPriority: (message, value, path) => {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 9) {
      fail(path, `expected an integer from 0 to 9 but found ${describe(value)}`);
    }
    message.setJMSPriority(value);
  },
  JMSDeliveryMode: (message, value, path) => {
    if (value === 'PERSISTENT' || value === DeliveryMode.PERSISTENT)
      message.setJMSDeliveryMode(DeliveryMode.PERSISTENT);
    else if (value === 'NON_PERSISTENT' || value === DeliveryMode.NON_PERSISTENT) {
      message.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
    } else fail(path, `expected "PERSISTENT" or "NON_PERSISTENT" but found ${describe(value)}`);
  },
  JMSRedelivered: (message, value, path) => {
    if (typeof value !== 'boolean') fail(path, `expected true or false but found ${describe(value)}`);
    message.setJMSRedelivered(value);
  },
};

function readHeaders(message: Message, headers: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(headers)) {
    const reader = HEADERS[name];
    const path = pathOf('headers', name);
    if (reader === undefined) fail(path, `unknown header (known: ${Object.keys(HEADERS).join(', ')})`);
    reader(message, value, path);
  }
}

function readProperties(message: Message, properties: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(properties)) {
    const path = pathOf('properties', name);
    const typed = readValue(value, path, PROPERTY_TYPES);
    if (name === 'JMSXDeliveryCount') {
      if (typed.type !== 'int' || typed.value < 1)
        fail(path, `expected an int >= 1 but found ${describe(value)}`);
      message.deliveryCount = typed.value;
    } else if (name.startsWith('JMS')) {
      // Provider-owned names (JMSX..., JMS_...) describe the message as the provider sees it.
      if (!/^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(name)) fail(path, 'is not a valid property name');
      message.setProviderProperty(name, typed);
    } else {
      try {
        checkPropertyName(name);
      } catch (error) {
        fail(path, (error as Error).message);
      }
      message.setObjectProperty(name, typed);
    }
  }
}

/** A plain or typed JSON value as a typed value of one of `allowed` types. */
function readValue(value: unknown, path: string, allowed: readonly string[]): TypedValue {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return readTyped(value as Record<string, unknown>, path, allowed);
  }
  if (typeof value === 'number' && !Number.isFinite(value)) fail(path, 'expected a finite number');
  if (typeof value === 'boolean' || typeof value === 'string' || typeof value === 'number') {
    return fromObject(value, path);
  }
  const types = allowed.join(', ');
  fail(
    path,
    `expected a boolean, number, string or { "type": ${types}, "value": ... } but found ${describe(value)}`,
  );
}

function readTyped(object: Record<string, unknown>, path: string, allowed: readonly string[]): TypedValue {
  const keys = Object.keys(object);
  const { type, value } = object;
  if (keys.length !== 2 || typeof type !== 'string' || !('value' in object)) {
    fail(
      path,
      `expected { "type": ..., "value": ... } but found an object with ${keys.map((key) => `"${key}"`).join(', ') || 'no fields'}`,
    );
  }
  if (!allowed.includes(type))
    fail(`${path}.type`, `expected one of ${allowed.join(', ')} but found ${describe(type)}`);
  const at = `${path}.value`;
  try {
    switch (type) {
      case 'boolean':
        if (typeof value !== 'boolean') fail(at, `expected true or false but found ${describe(value)}`);
        return { type, value };
      case 'byte':
      case 'short':
      case 'int':
        if (typeof value !== 'number') fail(at, `expected an integer but found ${describe(value)}`);
        return integerValue(type, value, at);
      case 'long':
        return readLong(value, at);
      case 'float':
      case 'double':
        if (typeof value !== 'number' && !isFloatingText(value))
          fail(
            at,
            `expected a number (or "NaN", "Infinity", "-Infinity", "-0") but found ${describe(value)}`,
          );
        return typedFromJsonValue(type, value);
      case 'string':
        if (typeof value !== 'string') fail(at, `expected a string but found ${describe(value)}`);
        return { type, value };
      case 'char':
        if (typeof value !== 'string' || value.length !== 1)
          fail(at, `expected a one-character string but found ${describe(value)}`);
        return { type, value };
      default:
        return { type: 'bytes', value: base64(value, at) };
    }
  } catch (error) {
    if (error instanceof MessageFormatError) throw error;
    fail(at, (error as Error).message);
  }
}

function readLong(value: unknown, path: string): TypedValue {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return longValue(BigInt(value), path);
  if (typeof value === 'number' && Number.isSafeInteger(value)) return longValue(value, path);
  fail(path, `expected a long as a decimal string ("123") or a safe integer but found ${describe(value)}`);
}

/** The floating values JSON numbers cannot hold, which the typed form writes as strings. */
function isFloatingText(value: unknown): boolean {
  return value === 'NaN' || value === 'Infinity' || value === '-Infinity' || value === '-0';
}

// --- writing ---

function headersToJson(message: Message): Record<string, string | number | boolean | null> {
  return {
    JMSMessageID: message.getJMSMessageID(),
    JMSTimestamp: message.getJMSTimestamp(),
    JMSCorrelationID: message.getJMSCorrelationID(),
    JMSReplyTo: message.getJMSReplyTo()?.toString() ?? null,
    JMSDestination: message.getJMSDestination()?.toString() ?? null,
    JMSDeliveryMode:
      message.getJMSDeliveryMode() === DeliveryMode.PERSISTENT ? 'PERSISTENT' : 'NON_PERSISTENT',
    JMSRedelivered: message.getJMSRedelivered(),
    JMSType: message.getJMSType(),
    JMSExpiration: message.getJMSExpiration(),
    JMSPriority: message.getJMSPriority(),
    JMSDeliveryTime: message.getJMSDeliveryTime(),
  };
}

/**
 * A typed value in JSON: plain where reading it back gives the same type (booleans, strings,
 * ints, and finite doubles that are not integral), otherwise typed with the codec's JSON value,
 * which keeps -0, NaN, ±Infinity and 64-bit longs.
 */
function typedToJson(value: TypedValue): ValueJson {
  switch (value.type) {
    case 'boolean':
    case 'string':
    case 'int':
      return value.value;
    case 'double':
      if (Number.isFinite(value.value) && !Number.isInteger(value.value)) return value.value;
      return { type: 'double', value: typedToJsonValue(value) };
    default:
      return { type: value.type, value: typedToJsonValue(value) };
  }
}

function bodyToJson(message: Message): MessageJson['body'] {
  if (message instanceof TextMessage) return message.getText();
  if (message instanceof BytesMessage) return Buffer.from(message.getBodyBytes()).toString('base64');
  if (message instanceof MapMessage) {
    const entries: Record<string, ValueJson> = {};
    for (const [name, value] of message.getTypedEntries()) entries[name] = typedToJson(value);
    return entries;
  }
  if (message instanceof StreamMessage) return message.getTypedItems().map(typedToJson);
  return undefined;
}
