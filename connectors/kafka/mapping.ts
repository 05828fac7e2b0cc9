/**
 * JMS message <-> Kafka record (BRG-6). The table, with the reasons, is in the Kafka section of
 * the mapping docs (`docs/mapping-kafka.md` until `docs/mapping.md` exists); in short:
 *
 * | JMS                          | Kafka record                                                   |
 * | ---------------------------- | -------------------------------------------------------------- |
 * | body                         | value: the codec's bytes for the body type; a null text = null  |
 * | body type                    | header `jms.bodyType` (`text`, `xml`, `bytes`, `map`, ...)     |
 * | JMSTimestamp                 | record timestamp, and header `JMSTimestamp`                    |
 * | other carried JMS headers    | header of the same name, natural string (`JMSPriority: 4`)     |
 * | property `p` (typed)         | header `p`, natural string (`9223372036854775807`, `true`)     |
 * | property types               | header `jms.types`: `qty:int,big:long` (strings left out)      |
 * | key (sink configuration)     | record key: a header, a property, or an XPath on an XML body   |
 * | (transactional sink)         | header `jms.forwardedBy`: the producer's transactional id      |
 *
 * A record without `jms.bodyType` was written by someone else (a "foreign" record): its value is
 * a bytes (or, configured, text) body, its headers become string properties where their names are
 * property names, JMS header names are read as JMS headers, its timestamp is JMSTimestamp, and
 * its JMSMessageID is `ID:kafka:<topic>:<partition>:<offset>`, the same on every read, so
 * duplicate detection by message id works for it too.
 */
import type { IHeaders, Message as KafkaJSMessage } from 'kafkajs';
import {
  CARRIED_HEADERS,
  MessageFormatError,
  TextMessage,
  XMLMessage,
  BytesMessage,
  Message,
  carriedProperties,
  decodeBody,
  decodeTypeTags,
  encodeBody,
  encodeTypeTags,
  headersFromStrings,
  headersToStrings,
  readHeaders,
  setCarriedProperty,
  typedFromString,
  typedToString,
  writeHeaders,
} from '../../src/spi/index.js';
import type { BodyType, TypedValue, XPathEvaluator } from '../../src/spi/index.js';
import type { KafkaForeignBody, KafkaKeyConfig } from './spec.js';

/** Header with the JMS body type; its presence marks a record the gateway wrote. */
export const BODY_TYPE_HEADER = 'jms.bodyType';
/** Header with the types of the non-string properties (the codec's type tag). */
export const TYPES_HEADER = 'jms.types';
/**
 * Header naming the transactional producer that forwarded a record (its transactional id): how an
 * exactly-once bridge finds its own records when it rebuilds its duplicate window.
 */
export const FORWARDED_BY_HEADER = 'jms.forwardedBy';
/** Provider property set on a record whose gateway headers could not be read. */
export const MAPPING_ERROR_PROPERTY = 'JMS_Kafka_MappingError';

const BODY_TYPES: readonly BodyType[] = ['empty', 'text', 'bytes', 'map', 'stream', 'xml'];
const CARRIED = new Set<string>(CARRIED_HEADERS);
/** Headers of the gateway's own, not properties. */
const GATEWAY_HEADERS = new Set<string>([BODY_TYPE_HEADER, TYPES_HEADER, FORWARDED_BY_HEADER]);

/** A record as the source reads it (kafkajs's KafkaMessage plus where it came from). */
export interface KafkaRecordIn {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly timestamp: string;
  readonly headers?: IHeaders;
}

/** What the source's mapping needs from its configuration. */
export interface RecordToMessageOptions {
  /** Body type of foreign records. Default bytes. */
  readonly foreignBody?: KafkaForeignBody;
  /** Property that receives the record key (a string), unless the record carries that property. */
  readonly keyProperty?: string;
  /** Told when a gateway record's headers are malformed and it is read as a foreign record instead. */
  readonly onMappingError?: (error: Error) => void;
}

/** What the sink's mapping needs from its configuration. */
export interface MessageToRecordOptions {
  readonly key: KafkaKeyConfig;
  /** Needed for `key.from: xpath`. */
  readonly evaluateXPath?: XPathEvaluator;
  readonly partition?: number;
}

// --- JMS -> Kafka ---

/** The record for a message: value, key, timestamp, headers (see the module comment). */
export function messageToRecord(message: Message, options: MessageToRecordOptions): KafkaJSMessage {
  const headers: Record<string, string> = { [BODY_TYPE_HEADER]: message.bodyType };
  for (const [name, value] of Object.entries(headersToStrings(readHeaders(message)))) headers[name] = value;
  const properties = carriedProperties(message);
  for (const [name, typed] of properties) headers[name] = typedToString(typed);
  const types = encodeTypeTags(properties);
  if (types !== '') headers[TYPES_HEADER] = types;
  const record: KafkaJSMessage = {
    key: recordKey(message, options),
    value: recordValue(message),
    headers,
  };
  if (message.getJMSTimestamp() > 0) record.timestamp = String(message.getJMSTimestamp());
  if (options.partition !== undefined) record.partition = options.partition;
  return record;
}

function recordValue(message: Message): Buffer | null {
  // A null text has no bytes of its own; Kafka's null value keeps it apart from ''.
  if (
    (message.bodyType === 'text' || message.bodyType === 'xml') &&
    (message as TextMessage).getText() === null
  )
    return null;
  return encodeBody(message);
}

/** The record key the configuration asks for, or null when the message has no such value. */
export function recordKey(message: Message, options: MessageToRecordOptions): string | null {
  const { key } = options;
  switch (key.from) {
    case 'none':
      return null;
    case 'header': {
      const name = key.name ?? '';
      return CARRIED.has(name)
        ? ((headersToStrings(readHeaders(message)) as Record<string, string>)[name] ?? null)
        : null;
    }
    case 'property': {
      const typed = message.getTypedProperty(key.name ?? 'JMSXGroupID');
      return typed === undefined ? null : typedToString(typed);
    }
    case 'xpath': {
      if (options.evaluateXPath === undefined)
        throw new MessageFormatError("key.from 'xpath' needs an XPath evaluator from the bridge runtime");
      if (message.bodyType !== 'xml') return null;
      return options.evaluateXPath(message, key.expression ?? '');
    }
  }
}

// --- Kafka -> JMS ---

/** The last value of each header, as UTF-8 text (Kafka allows repeated headers; the last wins, as Java's `lastHeader`). */
export function headerStrings(headers: IHeaders | undefined): Map<string, string> {
  const strings = new Map<string, string>();
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    if (value === undefined) continue;
    strings.set(name, typeof value === 'string' ? value : value.toString('utf8'));
  }
  return strings;
}

/**
 * The message for a record. A gateway record comes back identical to the message that was sent;
 * one whose gateway headers are malformed is read as a foreign record, marked with the
 * `JMS_Kafka_MappingError` property, and reported through `onMappingError`.
 */
export function recordToMessage(record: KafkaRecordIn, options: RecordToMessageOptions = {}): Message {
  const headers = headerStrings(record.headers);
  const bodyType = headers.get(BODY_TYPE_HEADER);
  let message: Message;
  if (bodyType === undefined) {
    message = foreignMessage(record, headers, options.foreignBody ?? 'bytes');
  } else {
    try {
      message = gatewayMessage(record, headers, bodyType);
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error));
      options.onMappingError?.(reason);
      message = foreignMessage(record, headers, 'bytes');
      message.setProviderProperty(MAPPING_ERROR_PROPERTY, { type: 'string', value: reason.message });
    }
  }
  if (
    options.keyProperty !== undefined &&
    record.key !== null &&
    !message.propertyExists(options.keyProperty)
  ) {
    setCarriedProperty(message, options.keyProperty, { type: 'string', value: record.key.toString('utf8') });
  }
  return message;
}

function gatewayMessage(record: KafkaRecordIn, headers: Map<string, string>, bodyTypeText: string): Message {
  if (!(BODY_TYPES as readonly string[]).includes(bodyTypeText))
    throw new MessageFormatError(`header '${BODY_TYPE_HEADER}': unknown body type '${bodyTypeText}'`);
  const bodyType = bodyTypeText as BodyType;
  const message =
    record.value === null && (bodyType === 'text' || bodyType === 'xml')
      ? bodyType === 'xml'
        ? new XMLMessage(null)
        : new TextMessage(null)
      : decodeBody(bodyType, record.value ?? Buffer.alloc(0));
  writeHeaders(message, headersFromStrings(Object.fromEntries(headers)));
  const types = decodeTypeTags(headers.get(TYPES_HEADER));
  for (const [name, text] of headers) {
    if (CARRIED.has(name) || GATEWAY_HEADERS.has(name)) continue;
    const type = types.get(name) ?? 'string';
    let typed: TypedValue;
    try {
      typed = typedFromString(type, text);
    } catch (error) {
      throw new MessageFormatError(`header '${name}': ${(error as Error).message}`, { cause: error });
    }
    setCarriedProperty(message, name, typed);
  }
  return message;
}

function foreignMessage(
  record: KafkaRecordIn,
  headers: Map<string, string>,
  foreignBody: KafkaForeignBody,
): Message {
  let message: Message;
  if (record.value === null) message = new Message();
  else if (foreignBody === 'text') message = new TextMessage(record.value.toString('utf8'));
  else message = new BytesMessage(record.value);
  const jmsHeaders: Record<string, string> = {};
  for (const [name, text] of headers) {
    if (CARRIED.has(name)) jmsHeaders[name] = text;
    else setCarriedProperty(message, name, { type: 'string', value: text });
  }
  // Headers a foreign producer set with JMS names are taken where they are well-formed.
  for (const [name, text] of Object.entries(jmsHeaders)) {
    try {
      writeHeaders(message, headersFromStrings({ [name]: text }));
    } catch {
      // A malformed JMS header from a foreign producer is left out, like a header that is not a property name.
    }
  }
  if (message.getJMSMessageID() === null)
    message.setJMSMessageID(`ID:kafka:${record.topic}:${record.partition}:${record.offset}`);
  if (message.getJMSTimestamp() === 0) {
    const timestamp = Number(record.timestamp);
    if (Number.isSafeInteger(timestamp) && timestamp > 0) message.setJMSTimestamp(timestamp);
  }
  return message;
}
