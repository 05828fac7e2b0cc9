/**
 * JMS <-> AMQP 0-9-1 (BRG-6): JMS headers to basic properties, typed properties to the typed
 * header table, the body type to the content type. A message that goes out through
 * {@link toAmqp} and comes back through {@link fromAmqp} is identical: carried headers, typed
 * properties, body and body type. `docs/mapping.md` has the table; keep the two in step.
 *
 * | JMS                | AMQP 0-9-1                                                                  |
 * | ------------------ | --------------------------------------------------------------------------- |
 * | JMSMessageID       | `messageId`                                                                 |
 * | JMSCorrelationID   | `correlationId`                                                             |
 * | JMSReplyTo         | `replyTo`: a queue as its bare name, a topic as `topic://name`             |
 * | JMSType            | `type`                                                                      |
 * | JMSTimestamp       | `timestamp` (seconds, AMQP's unit) + header `x-jms-timestamp` (exact ms)    |
 * | JMSExpiration      | `expiration` (TTL: relative ms, a string) + header `x-jms-expiration` (ms)  |
 * | JMSDeliveryTime    | header `x-jms-delivery-time` (ms)                                           |
 * | JMSPriority        | `priority`                                                                  |
 * | JMSDeliveryMode    | `deliveryMode` (1 non-persistent, 2 persistent)                             |
 * | JMSRedelivered     | from the delivery's `redelivered` flag (not sent)                           |
 * | JMSXDeliveryCount  | `x-delivery-count` + 1 (quorum queues), else 2 if redelivered, else 1       |
 * | JMSXUserID         | `userId` when it is the sink connection's user (RabbitMQ refuses any        |
 * |                    | other), else header `JMSXUserID`; in: `userId` (broker-checked) wins        |
 * | JMSXAppID          | `appId` (a header beyond 255 bytes)                                         |
 * | body type          | `contentType` (see BODY_CONTENT_TYPES in the codec)                         |
 * | typed properties   | headers, AMQP-typed (`t b s I l f d S`) + `x-jms-types` type tag;           |
 * |                    | NaN and infinities as strings (RabbitMQ refuses them as floats)             |
 *
 * AMQP's short strings hold 255 bytes; a longer id, correlation id, type or reply-to travels in
 * its `x-jms-...` header instead.
 */
import type { Message } from '../../src/spi/index.js';
import {
  BytesMessage,
  DeliveryMode,
  MessageFormatError,
  Queue,
  TextMessage,
  XMLMessage,
  bodyTypeOfContentType,
  carriedProperties,
  contentTypeOf,
  decodeBody,
  decodeTypeTags,
  encodeBody,
  encodeTypeTags,
  parseDestination,
  setCarriedProperty,
  typedFromJsonValue,
  typedFromString,
  typedToString,
  type BodyType,
  type Destination,
  type TypedValue,
  type ValueType,
} from '../../src/spi/index.js';

/** Headers of our own; JMS property names are identifiers and can never contain `-`. */
export const AMQP_HEADERS = {
  timestamp: 'x-jms-timestamp',
  expiration: 'x-jms-expiration',
  deliveryTime: 'x-jms-delivery-time',
  types: 'x-jms-types',
  exactLongs: 'x-jms-exact-longs',
  messageId: 'x-jms-message-id',
  correlationId: 'x-jms-correlation-id',
  type: 'x-jms-type',
  replyTo: 'x-jms-reply-to',
} as const;

const OWN_HEADER_PREFIX = 'x-jms-';
const SHORT_STRING_BYTES = 255;

/** How the sink sets `deliveryMode`: from JMSDeliveryMode, or forced. */
export type PersistentPolicy = 'message' | 'always' | 'never';

/** Options of the outgoing mapping. */
export interface ToAmqpOptions {
  /** `message`: JMSDeliveryMode decides; `always`/`never`: every message persistent / non-persistent. */
  readonly persistent: PersistentPolicy;
  /** Set the AMQP per-message TTL (`expiration`) from JMSExpiration, so the broker drops expired messages. */
  readonly ttl: boolean;
  /** Now, in epoch ms: JMSExpiration is absolute, AMQP's TTL relative. */
  readonly now: number;
  /**
   * The user the sink's connection authenticated as. RabbitMQ refuses a message whose `userId`
   * is not that user (it closes the channel), so JMSXUserID becomes `userId` only when it is
   * this user, and travels as a header otherwise. Default: none, always a header.
   */
  readonly user?: string;
}

/** A typed header value as amqplib encodes it: `{'!': 'int', value: 3}` picks the AMQP type. */
export type AmqpTypedValue = {
  '!': 'byte' | 'short' | 'int' | 'long' | 'float' | 'double';
  value: number | bigint;
};

/** An AMQP header table value as this mapping writes it. */
export type AmqpHeaderValue = boolean | string | AmqpTypedValue | Record<string, string>;

/** The basic properties this mapping writes (a subset of amqplib's `Options.Publish`). */
export interface AmqpProperties {
  contentType: string;
  deliveryMode: 1 | 2;
  priority: number;
  headers: Record<string, AmqpHeaderValue>;
  messageId?: string;
  correlationId?: string;
  replyTo?: string;
  type?: string;
  timestamp?: number;
  expiration?: string;
  userId?: string;
  appId?: string;
}

/** A message ready for `channel.publish(exchange, routingKey, content, properties)`. */
export interface AmqpOutgoing {
  readonly content: Buffer;
  readonly properties: AmqpProperties;
}

/** What a consumer receives, reduced to what the mapping reads (amqplib's `ConsumeMessage` fits). */
export interface AmqpIncoming {
  readonly content: Buffer;
  readonly fields: { readonly redelivered: boolean };
  readonly properties: {
    readonly contentType?: unknown;
    readonly contentEncoding?: unknown;
    readonly headers?: Readonly<Record<string, unknown>> | undefined;
    readonly deliveryMode?: unknown;
    readonly priority?: unknown;
    readonly correlationId?: unknown;
    readonly replyTo?: unknown;
    readonly expiration?: unknown;
    readonly messageId?: unknown;
    readonly timestamp?: unknown;
    readonly type?: unknown;
    readonly userId?: unknown;
    readonly appId?: unknown;
  };
}

/** A decoded message and what could not be taken over exactly (for a warning in the log). */
export interface AmqpDecoded {
  readonly message: Message;
  readonly warnings: string[];
}

// --- out ---

/** JMSReplyTo as AMQP's `replyTo`: a queue by its bare name (what AMQP RPC expects), a topic as `topic://name`. */
export function replyToAmqp(destination: Destination): string {
  return destination.kind === 'queue' ? destination.name : destination.toString();
}

/** `replyTo` back to a destination: `queue://x` and `topic://x` as written, a bare name as a queue. */
export function replyToJms(replyTo: string): Destination {
  return /^(queue|topic):\/\/./.test(replyTo) ? parseDestination(replyTo) : new Queue(replyTo);
}

function amqpPropertyValue(typed: TypedValue): AmqpHeaderValue {
  switch (typed.type) {
    case 'boolean':
    case 'string':
      return typed.value;
    case 'float':
    case 'double':
      // RabbitMQ (Erlang) has no NaN or infinities: it closes the connection on such a float.
      if (!Number.isFinite(typed.value)) return typedToString(typed);
      return { '!': typed.type, value: typed.value };
    case 'byte':
    case 'short':
    case 'int':
      return { '!': typed.type, value: typed.value };
    case 'long':
      return { '!': 'long', value: typed.value };
    case 'char':
    case 'bytes':
      throw new MessageFormatError(`a ${typed.type} value cannot be a property`);
  }
}

function setShortString(
  properties: AmqpProperties,
  key: 'messageId' | 'correlationId' | 'type' | 'replyTo',
  value: string,
): void {
  if (Buffer.byteLength(value, 'utf8') <= SHORT_STRING_BYTES) properties[key] = value;
  else properties.headers[AMQP_HEADERS[key]] = value;
}

function deliveryMode(message: Message, persistent: PersistentPolicy): 1 | 2 {
  if (persistent === 'always') return 2;
  if (persistent === 'never') return 1;
  return message.getJMSDeliveryMode() === DeliveryMode.PERSISTENT ? 2 : 1;
}

/** The AMQP form of a message: body, basic properties and header table (see the module table). */
export function toAmqp(message: Message, options: ToAmqpOptions): AmqpOutgoing {
  const properties: AmqpProperties = {
    contentType: contentTypeOf(message.bodyType),
    deliveryMode: deliveryMode(message, options.persistent),
    priority: message.getJMSPriority(),
    headers: {},
  };
  const id = message.getJMSMessageID();
  if (id !== null) setShortString(properties, 'messageId', id);
  const correlationId = message.getJMSCorrelationID();
  if (correlationId !== null) setShortString(properties, 'correlationId', correlationId);
  const replyTo = message.getJMSReplyTo();
  if (replyTo !== null) setShortString(properties, 'replyTo', replyToAmqp(replyTo));
  const type = message.getJMSType();
  if (type !== null) setShortString(properties, 'type', type);
  const timestamp = message.getJMSTimestamp();
  if (timestamp !== 0) {
    properties.timestamp = Math.floor(timestamp / 1000);
    properties.headers[AMQP_HEADERS.timestamp] = { '!': 'long', value: timestamp };
  }
  const expiration = message.getJMSExpiration();
  if (expiration !== 0) {
    if (options.ttl) properties.expiration = String(Math.max(0, Math.ceil(expiration - options.now)));
    properties.headers[AMQP_HEADERS.expiration] = { '!': 'long', value: expiration };
  }
  const deliveryTime = message.getJMSDeliveryTime();
  if (deliveryTime !== 0)
    properties.headers[AMQP_HEADERS.deliveryTime] = { '!': 'long', value: deliveryTime };

  const carried = carriedProperties(message);
  const exactLongs: Record<string, string> = {};
  for (const [name, typed] of carried) {
    if (typed.type === 'string' && setIdentityProperty(properties, name, typed.value, options.user)) continue;
    properties.headers[name] = amqpPropertyValue(typed);
    // amqplib (like most JS clients) decodes an AMQP long into a double; keep the exact digits.
    if (typed.type === 'long' && !Number.isSafeInteger(Number(typed.value)))
      exactLongs[name] = typed.value.toString();
  }
  const tags = encodeTypeTags(carried);
  if (tags !== '') properties.headers[AMQP_HEADERS.types] = tags;
  if (Object.keys(exactLongs).length > 0) properties.headers[AMQP_HEADERS.exactLongs] = exactLongs;
  return { content: encodeBody(message), properties };
}

/**
 * JMSXUserID and JMSXAppID in AMQP's own `userId` and `appId`, where they fit: the user only when
 * it is the connection's own (the broker checks it), the application id within a short string.
 * Returns false when the property stays a header.
 */
function setIdentityProperty(
  properties: AmqpProperties,
  name: string,
  value: string,
  connectionUser: string | undefined,
): boolean {
  if (name === 'JMSXUserID' && value === connectionUser) {
    properties.userId = value;
    return true;
  }
  if (name === 'JMSXAppID' && Buffer.byteLength(value, 'utf8') <= SHORT_STRING_BYTES) {
    properties.appId = value;
    return true;
  }
  return false;
}

// --- in ---

function text(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

function wholeNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'object' && value !== null && '!' in value && 'value' in value) {
    return wholeNumber((value as { value: unknown }).value);
  }
  return undefined;
}

/** Infers the type of an untagged header value, as a foreign publisher wrote it. */
function inferTyped(raw: unknown): TypedValue | undefined {
  switch (typeof raw) {
    case 'boolean':
      return { type: 'boolean', value: raw };
    case 'string':
      return { type: 'string', value: raw };
    case 'number':
      if (Number.isInteger(raw))
        return raw >= -2147483648 && raw <= 2147483647
          ? { type: 'int', value: raw }
          : { type: 'long', value: BigInt(raw) };
      return { type: 'double', value: raw };
    default: {
      const timestamp = wholeNumber(raw);
      if (timestamp !== undefined) return { type: 'long', value: BigInt(timestamp) };
      return undefined;
    }
  }
}

/** A header value read back with its tagged type; undefined when it does not fit that type. */
function taggedTyped(raw: unknown, type: ValueType, exact: string | undefined): TypedValue | undefined {
  try {
    if (type === 'long' && exact !== undefined) return typedFromString('long', exact);
    if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'string')
      return typedFromJsonValue(type, raw);
  } catch {
    return undefined;
  }
  return undefined;
}

function readProperties(
  message: Message,
  headers: Readonly<Record<string, unknown>>,
  warnings: string[],
): void {
  const types = decodeTypeTags(text(headers[AMQP_HEADERS.types]));
  const exactTable = headers[AMQP_HEADERS.exactLongs];
  const exact =
    typeof exactTable === 'object' && exactTable !== null ? (exactTable as Record<string, unknown>) : {};
  for (const [name, raw] of Object.entries(headers)) {
    if (name.startsWith(OWN_HEADER_PREFIX) || raw === undefined || raw === null) continue;
    const type = types.get(name);
    let typed = type === undefined ? undefined : taggedTyped(raw, type, text(exact[name]));
    if (typed === undefined) {
      if (type !== undefined)
        warnings.push(`header '${name}' does not hold its tagged type ${type}; read as it came`);
      typed = inferTyped(raw);
    }
    if (typed === undefined) continue; // tables, arrays, byte arrays, decimals: no JMS property type
    setCarriedProperty(message, name, typed);
  }
}

const LATIN1 = new Set(['iso-8859-1', 'latin1', 'iso_8859-1']);
const UTF8 = new Set(['utf-8', 'utf8', 'us-ascii', 'ascii']);

function charsetOf(contentType: string): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
}

function readBody(incoming: AmqpIncoming, warnings: string[]): Message {
  const contentType = text(incoming.properties.contentType);
  const encoding = text(incoming.properties.contentEncoding);
  let bodyType: BodyType = bodyTypeOfContentType(contentType);
  if (encoding !== undefined && encoding !== '' && encoding.toLowerCase() !== 'identity') bodyType = 'bytes';
  if (bodyType === 'text' || bodyType === 'xml') {
    const charset = contentType === undefined ? undefined : charsetOf(contentType);
    if (charset !== undefined && LATIN1.has(charset)) {
      const body = incoming.content.toString('latin1');
      return bodyType === 'xml' ? new XMLMessage(body) : new TextMessage(body);
    }
    if (charset !== undefined && !UTF8.has(charset)) bodyType = 'bytes';
  }
  try {
    return decodeBody(bodyType, incoming.content);
  } catch (error) {
    warnings.push(`${(error as Error).message}; kept as a bytes body`);
    return new BytesMessage(incoming.content);
  }
}

function ownOrProperty(
  headers: Readonly<Record<string, unknown>>,
  header: string,
  property: unknown,
): string | undefined {
  return text(headers[header]) ?? text(property);
}

function readHeaders(message: Message, incoming: AmqpIncoming, now: number, warnings: string[]): void {
  const { properties } = incoming;
  const headers = properties.headers ?? {};
  const id = ownOrProperty(headers, AMQP_HEADERS.messageId, properties.messageId);
  if (id !== undefined) message.setJMSMessageID(id);
  const correlationId = ownOrProperty(headers, AMQP_HEADERS.correlationId, properties.correlationId);
  if (correlationId !== undefined) message.setJMSCorrelationID(correlationId);
  const type = ownOrProperty(headers, AMQP_HEADERS.type, properties.type);
  if (type !== undefined) message.setJMSType(type);
  const replyTo = ownOrProperty(headers, AMQP_HEADERS.replyTo, properties.replyTo);
  if (replyTo !== undefined && replyTo !== '') message.setJMSReplyTo(replyToJms(replyTo));

  const timestamp = wholeNumber(headers[AMQP_HEADERS.timestamp]) ?? wholeNumber(properties.timestamp);
  if (timestamp !== undefined)
    message.setJMSTimestamp(headers[AMQP_HEADERS.timestamp] !== undefined ? timestamp : timestamp * 1000);
  const expiration = wholeNumber(headers[AMQP_HEADERS.expiration]);
  const ttl = text(properties.expiration);
  if (expiration !== undefined) message.setJMSExpiration(expiration);
  else if (ttl !== undefined && /^\d+$/.test(ttl)) message.setJMSExpiration(now + Number(ttl));
  const deliveryTime = wholeNumber(headers[AMQP_HEADERS.deliveryTime]);
  if (deliveryTime !== undefined) message.setJMSDeliveryTime(deliveryTime);

  const priority = wholeNumber(properties.priority);
  if (priority !== undefined) {
    if (priority > 9) warnings.push(`AMQP priority ${priority} is above JMS's 9; read as 9`);
    message.setJMSPriority(Math.min(9, Math.max(0, priority)));
  }
  message.setJMSDeliveryMode(
    wholeNumber(properties.deliveryMode) === 2 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT,
  );
  message.setJMSRedelivered(incoming.fields.redelivered);
  // JMSXDeliveryCount as far as the broker knows it: quorum queues count returns in
  // x-delivery-count; classic queues only say whether it was delivered before.
  const returns = wholeNumber(headers['x-delivery-count']);
  message.deliveryCount = returns !== undefined ? returns + 1 : incoming.fields.redelivered ? 2 : 1;
}

/**
 * The JMS message for an AMQP delivery. Never throws: what a foreign publisher wrote that has no
 * exact JMS form (a map body that is not our JSON, a header that is not its tagged type, a
 * priority above 9) is read as closely as possible and reported in `warnings`.
 *
 * `userId` becomes JMSXUserID, over a `JMSXUserID` header: RabbitMQ lets a publisher set it only
 * to the user it authenticated as, so it is the one a consumer can trust, while a header is
 * whatever the publisher wrote. `appId` becomes JMSXAppID unless a `JMSXAppID` header carries it.
 */
export function fromAmqp(incoming: AmqpIncoming, now: number): AmqpDecoded {
  const warnings: string[] = [];
  const message = readBody(incoming, warnings);
  readHeaders(message, incoming, now, warnings);
  readProperties(message, incoming.properties.headers ?? {}, warnings);
  const userId = text(incoming.properties.userId);
  if (userId !== undefined) message.setProviderProperty('JMSXUserID', { type: 'string', value: userId });
  const appId = text(incoming.properties.appId);
  if (appId !== undefined && !message.propertyExists('JMSXAppID'))
    message.setProviderProperty('JMSXAppID', { type: 'string', value: appId });
  return { message, warnings };
}
