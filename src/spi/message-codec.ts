/**
 * Protocol-neutral pieces of the lossless JMS mapping (BRG-6), shared by every connector:
 *
 * - bodies to bytes and back, per body type ({@link encodeBody}, {@link decodeBody});
 * - typed values: the codec of `src/jms/message/typed-value-codec.ts` (natural strings and typed
 *   JSON), the one the JSON form and the store use too; here, the compact type tags of a set of
 *   properties ({@link encodeTypeTags}, {@link decodeTypeTags});
 * - the JMS headers that travel ({@link CARRIED_HEADERS}, {@link readHeaders}, {@link writeHeaders});
 * - the body type as a MIME content type ({@link contentTypeOf}, {@link bodyTypeOfContentType});
 * - the JSON envelope for protocols without metadata, MQTT 3.1.1 ({@link encodeEnvelope},
 *   {@link decodeEnvelope}).
 *
 * `docs/mapping.md` documents every format here; keep the two in step.
 */
import { MessageFormatError } from '../jms/errors.js';
import { Message, DeliveryMode, checkPropertyName, type BodyType } from '../jms/message/message.js';
import { TextMessage } from '../jms/message/text-message.js';
import { XMLMessage } from '../jms/message/xml-message.js';
import { BytesMessage } from '../jms/message/bytes-message.js';
import { MapMessage } from '../jms/message/map-message.js';
import { StreamMessage } from '../jms/message/stream-message.js';
import { parseDestination } from '../jms/destination/destination.js';
import type { TypedValue, ValueType } from '../jms/message/typed-value.js';
import {
  BASE64_TEXT,
  isValueType,
  typedFromJson,
  typedToJson,
  typedToString,
  type JsonTypedValue,
} from '../jms/message/typed-value-codec.js';

// --- property types ---

/**
 * The compact type tag of a set of properties: `qty:int,big:long,flag:boolean`. Strings are the
 * default and are left out, so a message with only string properties has an empty tag. Property
 * names are identifiers, which contain neither `:` nor `,`.
 */
export function encodeTypeTags(properties: Iterable<readonly [string, TypedValue]>): string {
  const tags: string[] = [];
  for (const [name, typed] of properties) if (typed.type !== 'string') tags.push(`${name}:${typed.type}`);
  return tags.join(',');
}

/** Reads a tag of {@link encodeTypeTags}; malformed parts and unknown types are skipped (they read as strings). */
export function decodeTypeTags(text: string | undefined): Map<string, ValueType> {
  const types = new Map<string, ValueType>();
  if (!text) return types;
  for (const part of text.split(',')) {
    const colon = part.lastIndexOf(':');
    const type = part.slice(colon + 1).trim();
    if (colon > 0 && isValueType(type)) types.set(part.slice(0, colon).trim(), type);
  }
  return types;
}

/**
 * The properties that travel with a message: every property but JMSXDeliveryCount, which is
 * per delivery and owned by whoever delivers it (the runtime counts redeliveries itself).
 */
export function carriedProperties(message: Message): Array<[string, TypedValue]> {
  const carried: Array<[string, TypedValue]> = [];
  for (const name of message.getPropertyNames()) {
    if (name === 'JMSXDeliveryCount') continue;
    const typed = message.getTypedProperty(name);
    if (typed !== undefined) carried.push([name, typed]);
  }
  return carried;
}

/**
 * Sets a property read from a broker. Provider properties (`JMSX...`, `JMS_...`, say JMSXUserID)
 * are set as such; other names must be valid property names. Returns false, setting nothing,
 * for a name that cannot be a JMS property (`x-death`, `JMSMessageID`) or for JMSXDeliveryCount,
 * which the receiving side counts itself, or for a char or bytes value (not allowed in properties).
 */
export function setCarriedProperty(message: Message, name: string, typed: TypedValue): boolean {
  if (name === 'JMSXDeliveryCount' || typed.type === 'char' || typed.type === 'bytes') return false;
  if (
    (name.startsWith('JMSX') || name.startsWith('JMS_')) &&
    name !== 'JMSXGroupID' &&
    name !== 'JMSXGroupSeq'
  ) {
    if (!/^JMS[X_][\p{L}\p{N}_$]*$/u.test(name)) return false;
    message.setProviderProperty(name, typed);
    return true;
  }
  try {
    checkPropertyName(name);
  } catch {
    return false;
  }
  message.setObjectProperty(name, typed);
  return true;
}

// --- headers ---

/**
 * The JMS headers that travel with a message through a broker, in the order docs list them.
 * Not carried: JMSDestination (the receiving side sets where the message lands) and
 * JMSRedelivered (a fact of each delivery: the source sets it from the broker's redelivered
 * flag); JMSXDeliveryCount likewise (see {@link carriedProperties}).
 */
export const CARRIED_HEADERS = [
  'JMSMessageID',
  'JMSTimestamp',
  'JMSCorrelationID',
  'JMSReplyTo',
  'JMSType',
  'JMSExpiration',
  'JMSPriority',
  'JMSDeliveryMode',
  'JMSDeliveryTime',
] as const;

/** One of {@link CARRIED_HEADERS}. */
export type CarriedHeader = (typeof CARRIED_HEADERS)[number];

/** Delivery mode as it travels: the names selectors compare with (SEL-3). */
export type DeliveryModeName = 'PERSISTENT' | 'NON_PERSISTENT';

/**
 * The carried headers of a message in their natural JSON types. Times are epoch ms; JMSReplyTo
 * is `queue://name` or `topic://name`. A header at its JMS default (null, 0) is absent, except
 * JMSPriority and JMSDeliveryMode, which are always given.
 */
export interface JmsHeaders {
  JMSMessageID?: string;
  JMSTimestamp?: number;
  JMSCorrelationID?: string;
  JMSReplyTo?: string;
  JMSType?: string;
  JMSExpiration?: number;
  JMSPriority?: number;
  JMSDeliveryMode?: DeliveryModeName;
  JMSDeliveryTime?: number;
}

/** Reads the carried headers of a message (see {@link JmsHeaders} for which are left out). */
export function readHeaders(message: Message): JmsHeaders {
  const headers: JmsHeaders = {};
  const id = message.getJMSMessageID();
  if (id !== null) headers.JMSMessageID = id;
  if (message.getJMSTimestamp() !== 0) headers.JMSTimestamp = message.getJMSTimestamp();
  const correlationId = message.getJMSCorrelationID();
  if (correlationId !== null) headers.JMSCorrelationID = correlationId;
  const replyTo = message.getJMSReplyTo();
  if (replyTo !== null) headers.JMSReplyTo = replyTo.toString();
  const type = message.getJMSType();
  if (type !== null) headers.JMSType = type;
  if (message.getJMSExpiration() !== 0) headers.JMSExpiration = message.getJMSExpiration();
  headers.JMSPriority = message.getJMSPriority();
  headers.JMSDeliveryMode =
    message.getJMSDeliveryMode() === DeliveryMode.PERSISTENT ? 'PERSISTENT' : 'NON_PERSISTENT';
  if (message.getJMSDeliveryTime() !== 0) headers.JMSDeliveryTime = message.getJMSDeliveryTime();
  return headers;
}

/** Sets the headers given (absent ones are left as they are). Throws a MessageFormatError for an invalid value. */
export function writeHeaders(message: Message, headers: JmsHeaders): void {
  try {
    if (headers.JMSMessageID !== undefined) message.setJMSMessageID(headers.JMSMessageID);
    if (headers.JMSTimestamp !== undefined) message.setJMSTimestamp(headers.JMSTimestamp);
    if (headers.JMSCorrelationID !== undefined) message.setJMSCorrelationID(headers.JMSCorrelationID);
    if (headers.JMSReplyTo !== undefined) message.setJMSReplyTo(parseDestination(headers.JMSReplyTo));
    if (headers.JMSType !== undefined) message.setJMSType(headers.JMSType);
    if (headers.JMSExpiration !== undefined) message.setJMSExpiration(headers.JMSExpiration);
    if (headers.JMSPriority !== undefined) message.setJMSPriority(headers.JMSPriority);
    if (headers.JMSDeliveryMode !== undefined)
      message.setJMSDeliveryMode(
        headers.JMSDeliveryMode === 'PERSISTENT' ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT,
      );
    if (headers.JMSDeliveryTime !== undefined) message.setJMSDeliveryTime(headers.JMSDeliveryTime);
  } catch (error) {
    if (error instanceof MessageFormatError) throw error;
    throw new MessageFormatError(`invalid header: ${(error as Error).message}`, { cause: error });
  }
}

/** The carried headers as strings (for protocols whose metadata is text): numbers in decimal. */
export function headersToStrings(headers: JmsHeaders): Partial<Record<CarriedHeader, string>> {
  const strings: Partial<Record<CarriedHeader, string>> = {};
  for (const name of CARRIED_HEADERS) {
    const value = headers[name];
    if (value !== undefined) strings[name] = String(value);
  }
  return strings;
}

function headerTime(name: string, text: string): number {
  const value = Number(text);
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(value))
    throw new MessageFormatError(`header '${name}': '${text}' is not a time in ms`);
  return value;
}

/**
 * Reads headers written by {@link headersToStrings}; names that are not carried headers are
 * ignored. Throws a MessageFormatError naming the header for a malformed value.
 */
export function headersFromStrings(strings: Readonly<Record<string, string | undefined>>): JmsHeaders {
  const headers: JmsHeaders = {};
  const text = (name: CarriedHeader): string | undefined =>
    Object.hasOwn(strings, name) ? strings[name] : undefined;
  const id = text('JMSMessageID');
  if (id !== undefined) headers.JMSMessageID = id;
  const correlationId = text('JMSCorrelationID');
  if (correlationId !== undefined) headers.JMSCorrelationID = correlationId;
  const type = text('JMSType');
  if (type !== undefined) headers.JMSType = type;
  const replyTo = text('JMSReplyTo');
  if (replyTo !== undefined) headers.JMSReplyTo = replyTo;
  for (const name of ['JMSTimestamp', 'JMSExpiration', 'JMSDeliveryTime'] as const) {
    const value = text(name);
    if (value !== undefined) headers[name] = headerTime(name, value);
  }
  const priority = text('JMSPriority');
  if (priority !== undefined) {
    if (!/^\d$/.test(priority))
      throw new MessageFormatError(`header 'JMSPriority': '${priority}' is not a priority from 0 to 9`);
    headers.JMSPriority = Number(priority);
  }
  const mode = text('JMSDeliveryMode');
  if (mode !== undefined) headers.JMSDeliveryMode = deliveryModeName(mode);
  return headers;
}

function deliveryModeName(text: string): DeliveryModeName {
  if (text === 'PERSISTENT' || text === String(DeliveryMode.PERSISTENT)) return 'PERSISTENT';
  if (text === 'NON_PERSISTENT' || text === String(DeliveryMode.NON_PERSISTENT)) return 'NON_PERSISTENT';
  throw new MessageFormatError(
    `header 'JMSDeliveryMode': '${text}' is not PERSISTENT or NON_PERSISTENT (or 2 or 1)`,
  );
}

// --- bodies ---

/** The MIME content type each body type travels with where the protocol has one (AMQP, MQTT 5). */
export const BODY_CONTENT_TYPES: Readonly<Record<BodyType, string>> = {
  text: 'text/plain; charset=utf-8',
  xml: 'application/xml',
  bytes: 'application/octet-stream',
  map: 'application/x-jms-map+json',
  stream: 'application/x-jms-stream+json',
  empty: 'application/x-jms-empty',
};

/** The content type of a body type: see {@link BODY_CONTENT_TYPES}. */
export function contentTypeOf(bodyType: BodyType): string {
  return BODY_CONTENT_TYPES[bodyType];
}

/**
 * The body type for a content type, ours or a foreign publisher's: our own types map back
 * exactly; other XML types (`text/xml`, `*+xml`) read as xml; other `text/*` and JSON types as
 * text; anything else, or none, as `fallback` (bytes unless the caller knows better).
 */
export function bodyTypeOfContentType(
  contentType: string | undefined,
  fallback: BodyType = 'bytes',
): BodyType {
  if (contentType === undefined || contentType === '') return fallback;
  const mime = contentType.split(';')[0]!.trim().toLowerCase();
  switch (mime) {
    case 'application/x-jms-map+json':
      return 'map';
    case 'application/x-jms-stream+json':
      return 'stream';
    case 'application/x-jms-empty':
      return 'empty';
    case 'application/octet-stream':
      return 'bytes';
    case 'application/xml':
    case 'text/xml':
      return 'xml';
  }
  if (mime.endsWith('+xml')) return 'xml';
  if (mime.startsWith('text/') || mime === 'application/json' || mime.endsWith('+json')) return 'text';
  return fallback;
}

/** The typed JSON of a map body: `{"qty":{"type":"int","value":3}}`. */
export function mapBodyToJson(message: MapMessage): Record<string, JsonTypedValue> {
  return Object.fromEntries(
    [...message.getTypedEntries()].map(([name, typed]) => [name, typedToJson(typed)]),
  );
}

/** The typed JSON of a stream body: `[{"type":"int","value":3}, ...]`. */
export function streamBodyToJson(message: StreamMessage): JsonTypedValue[] {
  return message.getTypedItems().map(typedToJson);
}

function mapFromJson(json: unknown): MapMessage {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new MessageFormatError('a map body must be a JSON object of {"type", "value"} entries');
  const message = new MapMessage();
  for (const [name, entry] of Object.entries(json)) {
    message.setTypedEntry(name, typedFromJson(entry, `map entry '${name}'`));
  }
  return message;
}

function streamFromJson(json: unknown): StreamMessage {
  if (!Array.isArray(json))
    throw new MessageFormatError('a stream body must be a JSON array of {"type", "value"} items');
  const message = new StreamMessage();
  json.forEach((item, index) => message.writeTyped(typedFromJson(item, `stream item ${index}`)));
  return message;
}

function parseJson(payload: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(Buffer.from(payload).toString('utf8')) as unknown;
  } catch (error) {
    throw new MessageFormatError(`${what} is not valid JSON`, { cause: error });
  }
}

/**
 * A body as bytes: text and xml as UTF-8 (a null text as zero bytes); bytes as they are; map
 * and stream as their typed JSON in UTF-8; empty as zero bytes.
 */
export function encodeBody(message: Message): Buffer {
  switch (message.bodyType) {
    case 'text':
    case 'xml':
      return Buffer.from((message as TextMessage).getText() ?? '', 'utf8');
    case 'bytes': {
      const bytes = (message as BytesMessage).getBodyBytes();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    case 'map':
      return Buffer.from(JSON.stringify(mapBodyToJson(message as MapMessage)), 'utf8');
    case 'stream':
      return Buffer.from(JSON.stringify(streamBodyToJson(message as StreamMessage)), 'utf8');
    case 'empty':
      return Buffer.alloc(0);
  }
}

/**
 * A new message of `bodyType` whose body is `payload` as {@link encodeBody} wrote it. Zero bytes
 * read as the empty string for text and xml. Throws a MessageFormatError for a map or stream
 * payload that is not their typed JSON, and for an empty body that is not empty.
 */
export function decodeBody(bodyType: BodyType, payload: Uint8Array): Message {
  switch (bodyType) {
    case 'text':
      return new TextMessage(Buffer.from(payload).toString('utf8'));
    case 'xml':
      return new XMLMessage(Buffer.from(payload).toString('utf8'));
    case 'bytes':
      return new BytesMessage(payload);
    case 'map':
      return mapFromJson(parseJson(payload, 'map body'));
    case 'stream':
      return streamFromJson(parseJson(payload, 'stream body'));
    case 'empty':
      if (payload.byteLength !== 0)
        throw new MessageFormatError(`an empty body has ${payload.byteLength} bytes (expected none)`);
      return new Message();
  }
}

// --- the envelope (MQTT 3.1.1) ---

/** The envelope format's version: the value of its `jmsEnvelope` field. */
export const ENVELOPE_VERSION = 1;

/**
 * One JSON document carrying a whole message, for protocols without metadata (MQTT 3.1.1):
 *
 * ```json
 * {"jmsEnvelope":1,
 *  "headers":{"JMSMessageID":"ID:1","JMSTimestamp":1700000000000,"JMSPriority":4,"JMSDeliveryMode":"PERSISTENT"},
 *  "properties":{"qty":{"type":"int","value":3}},
 *  "bodyType":"text","encoding":"utf8","body":"hello"}
 * ```
 *
 * `body` is the text for text and xml (`null` for a null text), base64 for bytes, the typed JSON
 * for map (object) and stream (array), and absent for empty; `encoding` says which
 * (`utf8`, `base64`, `json`).
 */
export interface Envelope {
  readonly jmsEnvelope: typeof ENVELOPE_VERSION;
  readonly headers: JmsHeaders;
  readonly properties: Record<string, JsonTypedValue>;
  readonly bodyType: BodyType;
  readonly encoding?: 'utf8' | 'base64' | 'json';
  readonly body?: string | null | Record<string, JsonTypedValue> | JsonTypedValue[];
}

function envelopeBody(message: Message): Pick<Envelope, 'encoding' | 'body'> {
  switch (message.bodyType) {
    case 'text':
    case 'xml':
      return { encoding: 'utf8', body: (message as TextMessage).getText() };
    case 'bytes':
      return { encoding: 'base64', body: encodeBody(message).toString('base64') };
    case 'map':
      return { encoding: 'json', body: mapBodyToJson(message as MapMessage) };
    case 'stream':
      return { encoding: 'json', body: streamBodyToJson(message as StreamMessage) };
    case 'empty':
      return {};
  }
}

/** The envelope of a message, as UTF-8 JSON (see {@link Envelope}). */
export function encodeEnvelope(message: Message): Buffer {
  const envelope: Envelope = {
    jmsEnvelope: ENVELOPE_VERSION,
    headers: readHeaders(message),
    properties: Object.fromEntries(
      carriedProperties(message).map(([name, typed]) => [name, typedToJson(typed)]),
    ),
    bodyType: message.bodyType,
    ...envelopeBody(message),
  };
  return Buffer.from(JSON.stringify(envelope), 'utf8');
}

/** True when `payload` looks like an envelope (a JSON object with `jmsEnvelope`), without decoding it. */
export function isEnvelope(payload: Uint8Array): boolean {
  if (payload.byteLength < 2 || payload[0] !== 0x7b /* { */) return false;
  try {
    const json = JSON.parse(Buffer.from(payload).toString('utf8')) as unknown;
    return typeof json === 'object' && json !== null && 'jmsEnvelope' in json;
  } catch {
    return false;
  }
}

const BODY_TYPES: readonly BodyType[] = ['empty', 'text', 'bytes', 'map', 'stream', 'xml'];

function bodyFromEnvelope(envelope: Record<string, unknown>): Message {
  const bodyType = envelope['bodyType'];
  if (typeof bodyType !== 'string' || !(BODY_TYPES as readonly string[]).includes(bodyType))
    throw new MessageFormatError(`envelope has an unknown bodyType '${String(bodyType)}'`);
  const body = envelope['body'];
  switch (bodyType as BodyType) {
    case 'text':
    case 'xml': {
      if (body !== null && body !== undefined && typeof body !== 'string')
        throw new MessageFormatError('envelope body of a text message must be a string or null');
      return bodyType === 'xml' ? new XMLMessage(body ?? null) : new TextMessage(body ?? null);
    }
    case 'bytes':
      if (typeof body !== 'string' || !BASE64_TEXT.test(body))
        throw new MessageFormatError('envelope body of a bytes message must be base64');
      return new BytesMessage(Buffer.from(body, 'base64'));
    case 'map':
      return mapFromJson(body);
    case 'stream':
      return streamFromJson(body);
    case 'empty':
      return new Message();
  }
}

/**
 * The message in an envelope. Throws a MessageFormatError when `payload` is not an envelope of a
 * version this code reads, or a part of it is malformed; {@link isEnvelope} tells the cases apart.
 */
export function decodeEnvelope(payload: Uint8Array): Message {
  const json = parseJson(payload, 'envelope');
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new MessageFormatError('envelope is not a JSON object');
  const envelope = json as Record<string, unknown>;
  if (envelope['jmsEnvelope'] !== ENVELOPE_VERSION)
    throw new MessageFormatError(
      `not a version ${ENVELOPE_VERSION} envelope (jmsEnvelope is ${JSON.stringify(envelope['jmsEnvelope'])})`,
    );
  const message = bodyFromEnvelope(envelope);
  const headers = envelope['headers'] ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new MessageFormatError('envelope headers must be an object');
  writeHeaders(message, checkHeaderTypes(headers as Record<string, unknown>));
  const properties = envelope['properties'] ?? {};
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties))
    throw new MessageFormatError('envelope properties must be an object');
  for (const [name, value] of Object.entries(properties)) {
    setCarriedProperty(message, name, typedFromJson(value, `envelope property '${name}'`));
  }
  return message;
}

function checkHeaderTypes(headers: Record<string, unknown>): JmsHeaders {
  const strings: Record<string, string> = {};
  for (const name of CARRIED_HEADERS) {
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' && typeof value !== 'number')
      throw new MessageFormatError(`envelope header '${name}' must be a string or a number`);
    strings[name] = String(value);
  }
  return headersFromStrings(strings);
}

// --- comparing ---

/**
 * Everything about a message that a lossless mapping must keep, as plain comparable data:
 * carried headers, properties (sorted by name, each `[name, type, natural string]`), body type and
 * body (text as is, bytes as base64, map entries sorted by name). Two messages are the same for
 * BRG-6 when their snapshots are deep-equal; tests compare them, logs may print them at debug.
 */
export function messageSnapshot(message: Message): {
  headers: JmsHeaders;
  properties: Array<[string, ValueType, string]>;
  bodyType: BodyType;
  body: unknown;
} {
  const properties = carriedProperties(message)
    .map(([name, typed]): [string, ValueType, string] => [name, typed.type, typedToString(typed)])
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let body: unknown;
  switch (message.bodyType) {
    case 'text':
    case 'xml':
      body = (message as TextMessage).getText();
      break;
    case 'bytes':
      body = encodeBody(message).toString('base64');
      break;
    case 'map':
      body = Object.entries(mapBodyToJson(message as MapMessage)).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      break;
    case 'stream':
      body = streamBodyToJson(message as StreamMessage);
      break;
    case 'empty':
      body = null;
  }
  return { headers: readHeaders(message), properties, bodyType: message.bodyType, body };
}
