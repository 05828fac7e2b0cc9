/**
 * Splits the records of a `sendBatch` into produce requests: each request carries at most
 * `maxRequestBytes` of records (as the Java producer's `max.request.size`), each of its record
 * batches stays within the topic's `max.message.bytes`, and the whole request stays under the
 * brokers' `socket.request.max.bytes`. Sizes are counted with kafkajs's own encoder, the one that
 * writes the records, so the estimate matches what goes on the wire (a little over, never under:
 * offset and timestamp deltas are counted at their largest).
 *
 * A record too large for a request of its own is not this module's business: size-limits.ts
 * refuses it before it gets here. A lone record over `maxRequestBytes` (but within the topic's
 * limit) goes in a request of its own.
 */
import type { Message as KafkaMessage } from 'kafkajs';
import { Encoder } from './kafkajs.js';
import type { KafkaSizeLimits, RequestEnvelope } from './size-limits.js';
import { produceRequestBytes } from './size-limits.js';

/** Bytes of a v2 record batch header (base offset and length included), as Kafka counts them. */
const RECORD_BATCH_OVERHEAD = 61;
/** Per partition in a produce request: its index and the record set's length. */
const PARTITION_OVERHEAD = 4 + 4;
/**
 * The timestamp delta counted for every record: kafkajs stamps the records of one request when it
 * builds it, so the real deltas are a few milliseconds; this one (about 17 minutes) is safely over.
 */
const TIMESTAMP_DELTA_BOUND = 2 ** 20;

/** Bytes of `record` inside a record batch, at position `offsetDelta`, as kafkajs encodes it. */
export function recordBytes(record: KafkaMessage, offsetDelta: number): number {
  let headers = 0;
  let count = 0;
  for (const [name, value] of Object.entries(record.headers ?? {})) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      count++;
      headers += Encoder.sizeOfVarIntBytes(name) + Encoder.sizeOfVarIntBytes(one);
    }
  }
  const body =
    1 + // attributes
    Encoder.sizeOfVarLong(TIMESTAMP_DELTA_BOUND) +
    Encoder.sizeOfVarInt(offsetDelta) +
    Encoder.sizeOfVarIntBytes(record.key ?? null) +
    Encoder.sizeOfVarIntBytes(record.value) +
    Encoder.sizeOfVarInt(count) +
    headers;
  return Encoder.sizeOfVarInt(body) + body;
}

/** What one produce request may hold. */
export interface ChunkLimits {
  /** Bytes of records per request (the sink's `maxRequestBytes`). */
  readonly maxRequestBytes: number;
  /** The topic's and the brokers' limits read at connect (size-limits.ts). */
  readonly sizeLimits: KafkaSizeLimits;
  readonly envelope: RequestEnvelope;
}

/** One produce request: records `start` to `end` (exclusive) of the input, in order. */
export interface RecordChunk {
  readonly start: number;
  readonly end: number;
}

/**
 * Cuts `records` (in send order) into consecutive chunks within `limits`. `partitionOf(i)` names
 * the partition of record `i` when known (a record batch per partition, each with its header);
 * unknown, every record counts as its own partition, which overestimates.
 */
export function chunkRecords(
  records: readonly KafkaMessage[],
  limits: ChunkLimits,
  partitionOf: (index: number) => number | undefined = () => undefined,
): RecordChunk[] {
  const chunks: RecordChunk[] = [];
  const batchLimit = limits.sizeLimits.batch?.bytes;
  const requestLimit = limits.sizeLimits.request?.bytes;
  let start = 0;
  let recordsBytes = 0;
  let partitions = new Set<number | string>();
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    const partition = partitionOf(i) ?? `unknown-${i}`;
    const bytes = recordBytes(record, i - start);
    const addsPartition = !partitions.has(partition);
    const nextRecords = recordsBytes + bytes;
    const nextPartitions = partitions.size + (addsPartition ? 1 : 0);
    const nextBatch = RECORD_BATCH_OVERHEAD + nextRecords;
    const nextRequest =
      produceRequestBytes(nextBatch, limits.envelope) +
      (nextPartitions - 1) * (RECORD_BATCH_OVERHEAD + PARTITION_OVERHEAD);
    const fits =
      nextRecords <= limits.maxRequestBytes &&
      (batchLimit === undefined || nextBatch <= batchLimit) &&
      (requestLimit === undefined || nextRequest <= requestLimit);
    if (i > start && !fits) {
      chunks.push({ start, end: i });
      start = i;
      partitions = new Set([partition]);
      recordsBytes = recordBytes(record, 0);
      continue;
    }
    if (addsPartition) partitions.add(partition);
    recordsBytes = nextRecords;
  }
  if (start < records.length) chunks.push({ start, end: records.length });
  return chunks;
}
