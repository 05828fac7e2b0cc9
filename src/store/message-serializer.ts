/**
 * The file store's message codec: a message becomes four column values (body type, headers,
 * properties, body) and comes back identical — every header (MSG-1), every property with its
 * exact type, provider properties (JMSX…, JMS_…) included (MSG-2, MSG-3), and every body type
 * with typed map entries and stream items (MSG-4).
 *
 * Headers and properties are JSON text; typed values are `[type, value]` pairs whose value is the
 * JSON value of the one typed-value codec (`src/jms/message/typed-value-codec.ts`): a long is a
 * decimal string (64-bit exact), bytes are base64, a float its shortest decimal, and floating
 * values JSON cannot carry (NaN, ±Infinity, -0) are strings. (Versions before that codec wrote a
 * float as its full double expansion, `0.10000000149011612`; it reads back as the same float.) Text and XML bodies are stored as SQLite TEXT, bytes as a
 * BLOB, map and stream bodies as JSON text. A text body that is not well-formed UTF-16 (a lone
 * surrogate, which UTF-8 cannot carry) is stored as a UTF-16LE BLOB instead, so it too is lossless.
 */
import { type Queue, type Topic, parseDestination } from '../jms/destination/destination.js';
import { BytesMessage } from '../jms/message/bytes-message.js';
import { MapMessage } from '../jms/message/map-message.js';
import { type BodyType, type DeliveryModeValue, Message } from '../jms/message/message.js';
import { StreamMessage } from '../jms/message/stream-message.js';
import { TextMessage } from '../jms/message/text-message.js';
import type { TypedValue } from '../jms/message/typed-value.js';
import { isValueType, typedFromJsonValue, typedToJsonValue } from '../jms/message/typed-value-codec.js';
import type { SenderRecord, StoreOperation } from '../jms/store-port.js';
import { XMLMessage } from '../jms/message/xml-message.js';

/** A message as the store's columns hold it. */
export interface SerializedMessage {
  bodyType: BodyType;
  /** JSON of {@link StoredHeaders}. */
  headers: string;
  /** JSON of `[name, type, value, name, type, value, ...]`, or null when there are none. */
  properties: string | null;
  /** TEXT (text, xml, map, stream), BLOB (bytes, or text that is not well-formed), or null. */
  body: string | Buffer | null;
}

/** The JSON shape of the headers column; absent keys are null, false or 0. */
interface StoredHeaders {
  id?: string;
  ts?: number;
  cid?: string;
  rt?: string;
  dst?: string;
  dm: number;
  rd?: true;
  ty?: string;
  exp?: number;
  pri: number;
  dt?: number;
  /** JMSXDeliveryCount of the message object (the store keeps the per-backlog count apart). */
  dc?: number;
  /** The sender's redelivery limit, when it set one (not a message header: see SenderRecord). */
  lim?: number;
  /** The sender's client id, when it had one. */
  scl?: string;
}

/** Raised when a stored row cannot be read back: the store is damaged or was written by something else. */
export class MessageDecodeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MessageDecodeError';
  }
}

const BODY_TYPES: ReadonlySet<string> = new Set<BodyType>(['empty', 'text', 'xml', 'bytes', 'map', 'stream']);

/** Encodes a message, and what the engine keeps of its sender, for the store. */
export function serializeMessage(message: Message, sender?: SenderRecord): SerializedMessage {
  const headers = headersOf(message);
  if (sender && sender.redeliveryLimit !== -1) headers.lim = sender.redeliveryLimit;
  if (sender?.clientId != null) headers.scl = sender.clientId;
  return {
    bodyType: message.bodyType,
    headers: JSON.stringify(headers),
    properties: propertiesOf(message),
    body: bodyOf(message),
  };
}

/**
 * Decodes what {@link serializeMessage} produced; throws {@link MessageDecodeError} on anything
 * else. Pass the same `destinations` map for many messages (recovery) so that they share one
 * handle per destination instead of one each.
 */
export function deserializeMessage(
  row: SerializedMessage,
  destinations: Map<string, Queue | Topic> = new Map(),
): Message {
  return deserializeStoredMessage(row, destinations).message;
}

/** Like {@link deserializeMessage}, with what was kept of the sender (absent when nothing was). */
export function deserializeStoredMessage(
  row: SerializedMessage,
  destinations: Map<string, Queue | Topic> = new Map(),
): { message: Message; sender: SenderRecord | undefined } {
  if (!BODY_TYPES.has(row.bodyType))
    throw new MessageDecodeError(`unknown body type '${String(row.bodyType)}'`);
  const message = messageWithBody(row.bodyType, row.body);
  const headers = parseJson(row.headers, 'headers') as StoredHeaders;
  applyHeaders(message, headers, destinations);
  if (row.properties !== null) {
    const flat = parseJson(row.properties, 'properties');
    if (!Array.isArray(flat) || flat.length % 3 !== 0)
      throw new MessageDecodeError('properties are malformed');
    for (let i = 0; i < flat.length; i += 3) {
      const name: unknown = flat[i];
      if (typeof name !== 'string') throw new MessageDecodeError('a property name is not a string');
      message.setProviderProperty(name, decodeValue(flat[i + 1], flat[i + 2], `property '${name}'`));
    }
  }
  return { message, sender: senderOf(headers) };
}

function senderOf(headers: StoredHeaders): SenderRecord | undefined {
  if (headers.lim === undefined && headers.scl === undefined) return undefined;
  if (headers.lim !== undefined && !Number.isInteger(headers.lim))
    throw new MessageDecodeError('the sender redelivery limit is not an integer');
  if (headers.scl !== undefined && typeof headers.scl !== 'string')
    throw new MessageDecodeError('the sender client id is not a string');
  return { redeliveryLimit: headers.lim ?? -1, clientId: headers.scl ?? null };
}

function headersOf(message: Message): StoredHeaders {
  const headers: StoredHeaders = { dm: message.getJMSDeliveryMode(), pri: message.getJMSPriority() };
  const id = message.getJMSMessageID();
  if (id !== null) headers.id = id;
  const timestamp = message.getJMSTimestamp();
  if (timestamp !== 0) headers.ts = timestamp;
  const correlationId = message.getJMSCorrelationID();
  if (correlationId !== null) headers.cid = correlationId;
  const replyTo = message.getJMSReplyTo();
  if (replyTo !== null) headers.rt = replyTo.toString();
  const destination = message.getJMSDestination();
  if (destination !== null) headers.dst = destination.toString();
  if (message.getJMSRedelivered()) headers.rd = true;
  const type = message.getJMSType();
  if (type !== null) headers.ty = type;
  const expiration = message.getJMSExpiration();
  if (expiration !== 0) headers.exp = expiration;
  const deliveryTime = message.getJMSDeliveryTime();
  if (deliveryTime !== 0) headers.dt = deliveryTime;
  if (message.deliveryCount !== 0) headers.dc = message.deliveryCount;
  return headers;
}

function applyHeaders(
  message: Message,
  headers: StoredHeaders,
  destinations: Map<string, Queue | Topic>,
): void {
  const destination = (text: string | undefined): Queue | Topic | null => {
    if (text === undefined) return null;
    let handle = destinations.get(text);
    if (!handle) destinations.set(text, (handle = parseDestination(text)));
    return handle;
  };
  if (typeof headers !== 'object' || headers === null) throw new MessageDecodeError('headers are malformed');
  try {
    message.setJMSMessageID(headers.id ?? null);
    message.setJMSTimestamp(headers.ts ?? 0);
    message.setJMSCorrelationID(headers.cid ?? null);
    message.setJMSReplyTo(destination(headers.rt));
    message.setJMSDestination(destination(headers.dst));
    message.setJMSDeliveryMode(headers.dm as DeliveryModeValue);
    message.setJMSRedelivered(headers.rd === true);
    message.setJMSType(headers.ty ?? null);
    message.setJMSExpiration(headers.exp ?? 0);
    message.setJMSPriority(headers.pri);
    message.setJMSDeliveryTime(headers.dt ?? 0);
    message.deliveryCount = headers.dc ?? 0;
  } catch (error) {
    throw new MessageDecodeError(`headers are malformed: ${(error as Error).message}`, { cause: error });
  }
}

function propertiesOf(message: Message): string | null {
  const flat: unknown[] = [];
  for (const name of message.getPropertyNames()) {
    // JMSXDeliveryCount is derived from the message's delivery count, kept with the headers.
    if (name === 'JMSXDeliveryCount') continue;
    const value = message.getTypedProperty(name)!;
    flat.push(name, value.type, typedToJsonValue(value));
  }
  return flat.length === 0 ? null : JSON.stringify(flat);
}

function bodyOf(message: Message): string | Buffer | null {
  switch (message.bodyType) {
    case 'text':
    case 'xml': {
      const text = (message as TextMessage).getText();
      if (text === null) return null;
      return isWellFormed(text) ? text : Buffer.from(text, 'utf16le');
    }
    case 'bytes': {
      const bytes = (message as BytesMessage).getBodyBytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    case 'map': {
      const flat: unknown[] = [];
      for (const [name, value] of (message as MapMessage).getTypedEntries())
        flat.push(name, value.type, typedToJsonValue(value));
      return JSON.stringify(flat);
    }
    case 'stream': {
      const flat: unknown[] = [];
      for (const value of (message as StreamMessage).getTypedItems())
        flat.push(value.type, typedToJsonValue(value));
      return JSON.stringify(flat);
    }
    case 'empty':
      return null;
  }
}

function messageWithBody(bodyType: BodyType, body: string | Buffer | null): Message {
  switch (bodyType) {
    case 'text':
      return new TextMessage(textOf(body));
    case 'xml':
      return new XMLMessage(textOf(body));
    case 'bytes':
      if (!Buffer.isBuffer(body)) throw new MessageDecodeError('bytes body is not a blob');
      return new BytesMessage(body);
    case 'map': {
      const flat = parseFlat(body, 3, 'map body');
      const message = new MapMessage();
      for (let i = 0; i < flat.length; i += 3) {
        const name: unknown = flat[i];
        if (typeof name !== 'string') throw new MessageDecodeError('a map entry name is not a string');
        message.setTypedEntry(name, decodeValue(flat[i + 1], flat[i + 2], `map entry '${name}'`));
      }
      return message;
    }
    case 'stream': {
      const flat = parseFlat(body, 2, 'stream body');
      const message = new StreamMessage();
      for (let i = 0; i < flat.length; i += 2)
        message.writeTyped(decodeValue(flat[i], flat[i + 1], `stream item ${i / 2}`));
      return message;
    }
    case 'empty':
      return new Message();
  }
}

function textOf(body: string | Buffer | null): string | null {
  if (body === null || typeof body === 'string') return body;
  return body.toString('utf16le');
}

function parseFlat(body: string | Buffer | null, stride: number, what: string): unknown[] {
  if (typeof body !== 'string') throw new MessageDecodeError(`${what} is not text`);
  const flat = parseJson(body, what);
  if (!Array.isArray(flat) || flat.length % stride !== 0)
    throw new MessageDecodeError(`${what} is malformed`);
  return flat;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new MessageDecodeError(`${what} are not valid JSON`, { cause: error });
  }
}

function decodeValue(type: unknown, value: unknown, what: string): TypedValue {
  if (!isValueType(type)) throw new MessageDecodeError(`${what} has an unknown type`);
  try {
    return typedFromJsonValue(type, value);
  } catch (error) {
    throw new MessageDecodeError(`${what}: the stored ${type} value is malformed`, { cause: error });
  }
}

/** `String.prototype.isWellFormed` (Node 20) is not in the ES2023 lib typings. */
function isWellFormed(text: string): boolean {
  return (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

/** A store operation ready to write: its message serialized, as both stores take it at `commit`. */
export type EncodedOperation =
  | Exclude<StoreOperation, { op: 'addMessage' }>
  | { op: 'addMessage'; id: string; seq: number; row: SerializedMessage };

/** Serializes an `addMessage` operation's message; every other operation is written as it is. */
export function encodeOperation(operation: StoreOperation): EncodedOperation {
  if (operation.op !== 'addMessage') return operation;
  return {
    op: 'addMessage',
    id: operation.id,
    seq: operation.seq,
    row: serializeMessage(operation.message, operation.sender),
  };
}
