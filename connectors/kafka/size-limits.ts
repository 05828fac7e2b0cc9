/**
 * How large a record the Kafka sink may send, and how large a record is on the wire. Kafka
 * refuses a record batch over the topic's `max.message.bytes` with MESSAGE_TOO_LARGE, but a
 * request over the broker's `socket.request.max.bytes` (100 MB by default) it answers by closing
 * the connection, which looks like a broker outage. So the sink reads both limits at connect and
 * refuses a record over either before sending it, as poison (DLV-9).
 */
import type { Admin, Message as KafkaMessage } from 'kafkajs';
import { MessageTooLargeError } from '../../src/spi/index.js';
import { ConfigResourceTypes } from './kafkajs.js';

/** One limit the sink checks, and where it comes from (for the poison reason). */
export interface SizeLimit {
  readonly bytes: number;
  readonly source: string;
}

/** The limits of one sink: the record batch (one record) and the produce request carrying it. */
export interface KafkaSizeLimits {
  readonly batch?: SizeLimit;
  readonly request?: SizeLimit;
}

/** What the produce request carries besides the record batch. */
export interface RequestEnvelope {
  readonly clientId: string;
  readonly topic: string;
  readonly transactionalId?: string;
}

/** Bytes of a v2 record batch header (base offset and length included), as Kafka counts them. */
const RECORD_BATCH_OVERHEAD = 61;

/**
 * Reads the topic's `max.message.bytes` (the broker's `message.max.bytes` when the topic does not
 * exist yet) and the smallest `socket.request.max.bytes` of the brokers. A limit the client may
 * not read (no DescribeConfigs permission) is left out and reported through `unknown`; the
 * broker still answers a record over the topic limit with MESSAGE_TOO_LARGE.
 */
export async function readSizeLimits(
  admin: Admin,
  topic: string,
  unknown: (what: string, error: unknown) => void,
): Promise<KafkaSizeLimits> {
  let brokerMessageMax: number | undefined;
  let request: SizeLimit | undefined;
  try {
    const { brokers } = await admin.describeCluster();
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: brokers.map((broker) => ({
        type: ConfigResourceTypes.BROKER,
        name: String(broker.nodeId),
        configNames: ['message.max.bytes', 'socket.request.max.bytes'],
      })),
    });
    for (const resource of resources) {
      const messageMax = entryValue(resource.configEntries, 'message.max.bytes');
      const requestMax = entryValue(resource.configEntries, 'socket.request.max.bytes');
      if (messageMax !== undefined) brokerMessageMax = Math.min(brokerMessageMax ?? messageMax, messageMax);
      if (requestMax !== undefined && (request === undefined || requestMax < request.bytes))
        request = {
          bytes: requestMax,
          source: `kafka broker ${resource.resourceName} (socket.request.max.bytes)`,
        };
    }
  } catch (error) {
    unknown('the message.max.bytes and socket.request.max.bytes of the brokers', error);
  }
  let batch: SizeLimit | undefined;
  try {
    const { resources } = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['max.message.bytes'] }],
    });
    const bytes = entryValue(resources[0]?.configEntries ?? [], 'max.message.bytes');
    if (bytes !== undefined) batch = { bytes, source: `kafka topic '${topic}' (max.message.bytes)` };
  } catch (error) {
    if (brokerMessageMax === undefined) unknown(`the max.message.bytes of topic '${topic}'`, error);
  }
  batch ??=
    brokerMessageMax === undefined
      ? undefined
      : { bytes: brokerMessageMax, source: `the kafka brokers (message.max.bytes)` };
  return { ...(batch ? { batch } : {}), ...(request ? { request } : {}) };
}

function entryValue(
  entries: ReadonlyArray<{ configName: string; configValue: string }>,
  name: string,
): number | undefined {
  const value = Number(entries.find((entry) => entry.configName === name)?.configValue);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/** Bytes of a record batch holding only `record`, uncompressed, as the broker compares it to `max.message.bytes`. */
export function recordBatchBytes(record: KafkaMessage): number {
  let body = 1 + varIntBytes(0) + varIntBytes(0); // attributes, timestamp delta, offset delta
  body += bytesField(record.key ?? null) + bytesField(record.value);
  let headers = 0;
  let count = 0;
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      count++;
      headers += bytesField(name) + bytesField(one);
    }
  }
  body += varIntBytes(count) + headers;
  return RECORD_BATCH_OVERHEAD + varIntBytes(body) + body;
}

/**
 * Bytes of the produce request for one batch, as the broker compares it to
 * `socket.request.max.bytes` (everything after the request's own length field).
 */
export function produceRequestBytes(batchBytes: number, envelope: RequestEnvelope): number {
  const header = 2 + 2 + 4 + 2 + Buffer.byteLength(envelope.clientId); // api key, version, correlation id, client id
  const body =
    2 +
    Buffer.byteLength(envelope.transactionalId ?? '') + // transactional id
    2 + // acks
    4 + // timeout
    4 + // topics
    2 +
    Buffer.byteLength(envelope.topic) +
    4 + // partitions
    4 + // partition
    4; // record set size
  return header + body + batchBytes;
}

/** Throws {@link MessageTooLargeError} when `record` is over one of `limits`. */
export function checkRecordSize(
  record: KafkaMessage,
  messageId: string | null,
  limits: KafkaSizeLimits,
  envelope: RequestEnvelope,
): void {
  if (limits.batch === undefined && limits.request === undefined) return;
  const batch = recordBatchBytes(record);
  if (limits.batch !== undefined && batch > limits.batch.bytes)
    throw new MessageTooLargeError(messageId, batch, limits.batch.bytes, limits.batch.source);
  const request = produceRequestBytes(batch, envelope);
  if (limits.request !== undefined && request > limits.request.bytes)
    throw new MessageTooLargeError(messageId, request, limits.request.bytes, limits.request.source);
}

function bytesField(value: Buffer | string | null): number {
  if (value === null) return varIntBytes(-1);
  const length = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
  return varIntBytes(length) + length;
}

/** Bytes of a zigzag varint, as Kafka writes lengths in records. */
function varIntBytes(value: number): number {
  let zigzag = value >= 0 ? value * 2 : -value * 2 - 1;
  let bytes = 1;
  while (zigzag >= 0x80) {
    zigzag = Math.floor(zigzag / 0x80);
    bytes++;
  }
  return bytes;
}
