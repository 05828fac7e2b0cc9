/**
 * JMS <-> MQTT (BRG-6). `docs/mapping.md` has the tables; keep the two in step.
 *
 * MQTT 5 carries the message in the payload plus PUBLISH properties:
 *
 * | JMS               | MQTT 5                                                                        |
 * | ----------------- | ----------------------------------------------------------------------------- |
 * | body type         | `contentType` (the codec's content types) + `payloadFormatIndicator` (UTF-8)  |
 * | JMSCorrelationID  | `correlationData` (UTF-8 bytes)                                               |
 * | JMSReplyTo        | `responseTopic`: a topic as its name, a queue as `queue://name`               |
 * | JMSExpiration     | `messageExpiryInterval` (relative seconds) + user property `JMSExpiration`    |
 * | other headers     | user properties named after the header, natural string values                |
 * | typed properties  | user properties with natural string values + `x-jms-types` type tag          |
 * | JMSRedelivered    | the PUBLISH `dup` flag (not sent); JMSXDeliveryCount 2 if set, else 1         |
 *
 * MQTT 3.1.1 has no properties: `envelope` sends the codec's JSON envelope (lossless), `body`
 * sends the body bytes only (headers and properties are dropped).
 */
import {
  BytesMessage,
  CARRIED_HEADERS,
  DeliveryMode,
  Topic,
  bodyTypeOfContentType,
  carriedProperties,
  contentTypeOf,
  decodeBody,
  decodeEnvelope,
  decodeTypeTags,
  encodeBody,
  encodeEnvelope,
  encodeTypeTags,
  headersFromStrings,
  headersToStrings,
  isEnvelope,
  parseDestination,
  readHeaders,
  setCarriedProperty,
  typedFromString,
  typedToString,
  writeHeaders,
  type BodyType,
  type CarriedHeader,
  type Destination,
  type Message,
} from '../../src/spi/index.js';

/** The user property that carries the type tag of the typed properties. */
export const TYPES_PROPERTY = 'x-jms-types';

/** How MQTT 3.1.1 messages are written: the lossless JSON envelope, or the body alone. */
export type Mqtt311Format = 'envelope' | 'body';

/** The body types a payload that says nothing about itself may be read as. */
export type PlainBodyType = 'bytes' | 'text';

/** MQTT 5 user properties as mqtt.js gives them: a repeated name has several values. */
export type UserProperties = Record<string, string | string[]>;

/** The MQTT 5 PUBLISH properties this mapping reads and writes. */
export interface Mqtt5Properties {
  contentType?: string;
  payloadFormatIndicator?: boolean;
  correlationData?: Buffer;
  responseTopic?: string;
  messageExpiryInterval?: number;
  userProperties?: UserProperties;
}

/** What a subscriber receives, reduced to what the mapping reads (mqtt.js's `IPublishPacket` fits). */
export interface MqttIncoming {
  readonly payload: Buffer | string;
  readonly qos: number;
  readonly dup: boolean;
  readonly properties?: Readonly<Mqtt5Properties> | undefined;
}

/** A decoded message and what could not be taken over exactly (for a warning in the log). */
export interface MqttDecoded {
  readonly message: Message;
  readonly warnings: string[];
}

const UTF8_BODIES: ReadonlySet<BodyType> = new Set(['text', 'xml', 'map', 'stream']);
/** Headers with an MQTT 5 property of their own; the rest travel as user properties. */
const NATIVE_HEADERS: ReadonlySet<CarriedHeader> = new Set(['JMSCorrelationID', 'JMSReplyTo']);
const HEADER_NAMES: ReadonlySet<string> = new Set(CARRIED_HEADERS);

function payloadBuffer(payload: Buffer | string): Buffer {
  return typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
}

// --- reply-to ---

/** JMSReplyTo as a response topic: a topic by its name (what MQTT requesters expect), a queue as `queue://name`. */
export function responseTopicOf(destination: Destination): string {
  return destination.kind === 'topic' ? destination.name : destination.toString();
}

/** A response topic back to a destination: `queue://x` and `topic://x` as written, a plain name as a topic. */
export function replyToOf(responseTopic: string): Destination {
  return /^(queue|topic):\/\/./.test(responseTopic)
    ? parseDestination(responseTopic)
    : new Topic(responseTopic);
}

function isTopicName(name: string): boolean {
  return name !== '' && !/[+#]/.test(name) && !name.includes('\0');
}

// --- MQTT 5 out ---

/** Options of the outgoing MQTT 5 mapping. */
export interface ToMqtt5Options {
  /** Set `messageExpiryInterval` from JMSExpiration, so the broker drops expired messages. */
  readonly ttl: boolean;
  /** Now, in epoch ms: JMSExpiration is absolute, the expiry interval relative seconds. */
  readonly now: number;
}

/** The MQTT 5 form of a message: payload and PUBLISH properties (see the module table). */
export function toMqtt5(
  message: Message,
  options: ToMqtt5Options,
): { payload: Buffer; properties: Mqtt5Properties } {
  const bodyType = message.bodyType;
  const properties: Mqtt5Properties = {
    contentType: contentTypeOf(bodyType),
    payloadFormatIndicator: UTF8_BODIES.has(bodyType),
  };
  const headers = readHeaders(message);
  const user: UserProperties = {};
  for (const [name, value] of Object.entries(headersToStrings(headers)) as Array<[CarriedHeader, string]>) {
    if (!NATIVE_HEADERS.has(name)) user[name] = value;
  }
  if (headers.JMSCorrelationID !== undefined)
    properties.correlationData = Buffer.from(headers.JMSCorrelationID, 'utf8');
  const replyTo = message.getJMSReplyTo();
  if (replyTo !== null) {
    const topic = responseTopicOf(replyTo);
    // A JMS topic name with MQTT wildcards is no valid response topic: keep it as a user property.
    if (isTopicName(topic)) properties.responseTopic = topic;
    else user['JMSReplyTo'] = replyTo.toString();
  }
  if (options.ttl && headers.JMSExpiration !== undefined) {
    properties.messageExpiryInterval = Math.max(1, Math.ceil((headers.JMSExpiration - options.now) / 1000));
  }
  const carried = carriedProperties(message);
  for (const [name, typed] of carried) user[name] = typedToString(typed);
  const tags = encodeTypeTags(carried);
  if (tags !== '') user[TYPES_PROPERTY] = tags;
  properties.userProperties = user;
  return { payload: encodeBody(message), properties };
}

// --- MQTT 5 in ---

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function plainMessage(incoming: MqttIncoming, bodyType: BodyType, warnings: string[]): Message {
  const payload = payloadBuffer(incoming.payload);
  try {
    return decodeBody(bodyType, payload);
  } catch (error) {
    warnings.push(`${(error as Error).message}; kept as a bytes body`);
    return new BytesMessage(payload);
  }
}

/** What a message without a JMSDeliveryMode of its own gets: QoS 0 is at-most-once, so non-persistent. */
function deliveryModeOfQos(qos: number): typeof DeliveryMode.PERSISTENT | typeof DeliveryMode.NON_PERSISTENT {
  return qos > 0 ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT;
}

function readUserHeaders(message: Message, user: UserProperties, warnings: string[]): void {
  for (const name of CARRIED_HEADERS) {
    const value = first(user[name]);
    if (value === undefined) continue;
    try {
      writeHeaders(message, headersFromStrings({ [name]: value }));
    } catch (error) {
      warnings.push(`${(error as Error).message}; header left out`);
    }
  }
}

function readUserProperties(message: Message, user: UserProperties, warnings: string[]): void {
  const types = decodeTypeTags(first(user[TYPES_PROPERTY]));
  for (const [name, values] of Object.entries(user)) {
    if (name === TYPES_PROPERTY || HEADER_NAMES.has(name)) continue;
    const value = first(values);
    if (value === undefined) continue;
    if (Array.isArray(values) && values.length > 1)
      warnings.push(`user property '${name}' is repeated; the first of its ${values.length} values is kept`);
    const type = types.get(name) ?? 'string';
    let typed;
    try {
      typed = typedFromString(type, value);
    } catch {
      warnings.push(`user property '${name}' does not hold its tagged type ${type}; read as a string`);
      typed = { type: 'string', value } as const;
    }
    if (!setCarriedProperty(message, name, typed))
      warnings.push(
        `user property '${name}' has no JMS property form (not an identifier, or reserved); left out`,
      );
  }
}

/**
 * The JMS message for an MQTT 5 PUBLISH. Never throws: what a foreign publisher wrote that has
 * no exact JMS form is read as closely as possible and reported in `warnings`. Without a content
 * type the payload is text when `payloadFormatIndicator` says UTF-8, a JSON envelope when it is
 * one (a 3.1.1 publisher in envelope format), else `plainBodyType`.
 */
export function fromMqtt5(incoming: MqttIncoming, now: number, plainBodyType: PlainBodyType): MqttDecoded {
  const properties = incoming.properties ?? {};
  const user = properties.userProperties ?? {};
  const warnings: string[] = [];
  const payload = payloadBuffer(incoming.payload);
  if (properties.contentType === undefined && Object.keys(user).length === 0 && isEnvelope(payload)) {
    return fromMqtt311(incoming, 'envelope', plainBodyType);
  }
  const fallback: BodyType = properties.payloadFormatIndicator ? 'text' : plainBodyType;
  const message = plainMessage(incoming, bodyTypeOfContentType(properties.contentType, fallback), warnings);
  message.setJMSDeliveryMode(deliveryModeOfQos(incoming.qos));
  if (properties.correlationData !== undefined)
    message.setJMSCorrelationID(payloadBuffer(properties.correlationData).toString('utf8'));
  if (properties.responseTopic !== undefined && properties.responseTopic !== '')
    message.setJMSReplyTo(replyToOf(properties.responseTopic));
  if (properties.messageExpiryInterval !== undefined)
    message.setJMSExpiration(now + properties.messageExpiryInterval * 1000);
  readUserHeaders(message, user, warnings);
  readUserProperties(message, user, warnings);
  message.setJMSRedelivered(incoming.dup);
  message.deliveryCount = incoming.dup ? 2 : 1;
  return { message, warnings };
}

// --- MQTT 3.1.1 ---

/** The MQTT 3.1.1 payload of a message: the envelope, or the body alone. */
export function toMqtt311(message: Message, format: Mqtt311Format): Buffer {
  return format === 'envelope' ? encodeEnvelope(message) : encodeBody(message);
}

/**
 * The JMS message for an MQTT 3.1.1 PUBLISH. In `envelope` format an envelope is decoded; any
 * other payload (a foreign publisher's) is read as in `body` format: a message of
 * `plainBodyType` with that payload, non-persistent for QoS 0 and persistent otherwise.
 */
export function fromMqtt311(
  incoming: MqttIncoming,
  format: Mqtt311Format,
  plainBodyType: PlainBodyType,
): MqttDecoded {
  const warnings: string[] = [];
  const payload = payloadBuffer(incoming.payload);
  let message: Message | undefined;
  if (format === 'envelope' && isEnvelope(payload)) {
    try {
      message = decodeEnvelope(payload);
    } catch (error) {
      warnings.push(`${(error as Error).message}; the envelope is kept as the body`);
    }
  }
  if (message === undefined) {
    message = plainMessage(incoming, plainBodyType, warnings);
    message.setJMSDeliveryMode(deliveryModeOfQos(incoming.qos));
  }
  message.setJMSRedelivered(incoming.dup);
  message.deliveryCount = incoming.dup ? 2 : 1;
  return { message, warnings };
}
