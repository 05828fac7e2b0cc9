/**
 * Reads back what a transactional Kafka sink committed, to rebuild an exactly-once bridge's
 * duplicate window after a restart (BRG-2). The sink marks each record it sends in a transaction
 * with the header `jms.forwardedBy` (its transactional id) next to the JMSMessageID header, so
 * the tail of the topic says which messages reached it, whatever the gateway's own store recorded.
 *
 * How far back: per partition, the offsets of the last `maxEntries` messages (the window's size;
 * a message takes two offsets, its record and its transaction's commit marker), and not before
 * `notBefore` (the window's age, found with a timestamp lookup), up to the partition's last stable
 * offset as the broker reports it now (kafkajs lists offsets read_committed). Read with isolation
 * level read_committed: a record of an aborted or still-open transaction was never committed and
 * does not count; records behind another producer's transaction that is still open are not read. Call it after the sink's
 * producer has connected: initialising a transactional producer aborts the transaction its
 * predecessor left open, so nothing of this sink's is still pending.
 *
 * kafkajs has no manual partition assignment, so the read uses a consumer in a fresh group of its
 * own (no offsets committed; the group is deleted afterwards) and seeks each partition.
 */
import { randomUUID } from 'node:crypto';
import type { Admin, Consumer, EachBatchPayload } from 'kafkajs';
import { NotConnectedError } from '../../src/spi/index.js';
import type { ConnectorContext, ForwardedIdSeen, ForwardedIdsQuery } from '../../src/spi/index.js';
import { createAdmin, createConsumer, defaultClientId, disconnectFully } from './client.js';
import { classifyConnectionError } from './errors.js';
import { FORWARDED_BY_HEADER, headerStrings } from './mapping.js';
import type { KafkaConfig } from './spec.js';

/** Each message is its own transaction: its record and the commit marker after it. */
const OFFSETS_PER_MESSAGE = 2n;

/** A partition's offsets to read: [start, end). */
interface Range {
  readonly partition: number;
  readonly start: bigint;
  readonly end: bigint;
}

/** The records `forwardedBy` committed to the sink's topic within `query`'s bounds. */
export async function readForwardedIds(
  config: KafkaConfig,
  context: ConnectorContext,
  forwardedBy: string,
  query: ForwardedIdsQuery,
  signal: AbortSignal,
): Promise<ForwardedIdSeen[]> {
  const ranges = await tailRanges(config, context, query);
  if (ranges.length === 0) return [];
  const groupId = `${defaultClientId(context)}-window-${randomUUID()}`;
  const consumer = createConsumer(config, context, {
    groupId,
    readUncommitted: false,
    sessionTimeout: config.sessionTimeout,
    heartbeatInterval: config.heartbeatInterval,
    rebalanceTimeout: config.rebalanceTimeout,
    maxWaitTimeInMs: Math.min(config.fetchMaxWait, 100),
    retry: { retries: config.retries },
  });
  try {
    return await readRanges(consumer, config, ranges, forwardedBy, query, signal);
  } finally {
    await disconnectFully(consumer);
    await deleteGroup(config, context, groupId);
  }
}

/** Where each partition's tail starts and ends. */
async function tailRanges(
  config: KafkaConfig,
  context: ConnectorContext,
  query: ForwardedIdsQuery,
): Promise<Range[]> {
  const admin = createAdmin(config, context);
  try {
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(config.topic);
    const byTime =
      query.notBefore === undefined
        ? undefined
        : await admin.fetchTopicOffsetsByTimestamp(config.topic, query.notBefore);
    const ranges: Range[] = [];
    for (const { partition, high, low } of offsets) {
      const end = BigInt(high);
      let start = end - BigInt(query.maxEntries) * OFFSETS_PER_MESSAGE;
      if (start < BigInt(low)) start = BigInt(low);
      const fromTime = byTime?.find((entry) => entry.partition === partition)?.offset;
      if (fromTime !== undefined && BigInt(fromTime) > start) start = BigInt(fromTime);
      if (start < end) ranges.push({ partition, start, end });
    }
    return ranges;
  } catch (error) {
    throw classifyConnectionError(error, `reading the offsets of kafka topic '${config.topic}'`);
  } finally {
    await disconnectFully(admin);
  }
}

async function readRanges(
  consumer: Consumer,
  config: KafkaConfig,
  ranges: readonly Range[],
  forwardedBy: string,
  query: ForwardedIdsQuery,
  signal: AbortSignal,
): Promise<ForwardedIdSeen[]> {
  const next = new Map(ranges.map((range) => [range.partition, range.start]));
  const ends = new Map(ranges.map((range) => [range.partition, range.end]));
  const seen: ForwardedIdSeen[] = [];
  const timeoutMs = config.requestTimeout;
  let finish!: () => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  // Failing before it is awaited (while connecting) must not count as an unhandled rejection.
  done.catch(() => undefined);
  const onAbort = () => fail(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(
    () =>
      fail(
        new NotConnectedError(
          `reading the tail of kafka topic '${config.topic}' to rebuild the duplicate window did not finish in ${timeoutMs} ms`,
        ),
      ),
    timeoutMs,
  );
  const eachBatch = ({ batch }: EachBatchPayload): Promise<void> => {
    const expected = next.get(batch.partition);
    const end = ends.get(batch.partition);
    // A fetch from before the seek took effect (the group's start position) is not the tail.
    if (expected === undefined || end === undefined || expected >= end) return Promise.resolve();
    if (fetchedOffset(batch) !== expected) return Promise.resolve();
    for (const record of batch.messages) {
      if (BigInt(record.offset) >= end) break;
      const headers = headerStrings(record.headers);
      const id = headers.get('JMSMessageID');
      const at = Number(record.timestamp);
      if (headers.get(FORWARDED_BY_HEADER) !== forwardedBy || id === undefined) continue;
      if (query.notBefore !== undefined && at < query.notBefore) continue;
      seen.push({ id, at });
    }
    // The last offset includes transaction markers and aborted records, which are never handed out.
    next.set(batch.partition, BigInt(batch.lastOffset()) + 1n);
    if (ranges.every((range) => next.get(range.partition)! >= range.end)) finish();
    return Promise.resolve();
  };
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [config.topic], fromBeginning: false });
    await consumer.run({ autoCommit: false, eachBatch });
    for (const range of ranges)
      consumer.seek({ topic: config.topic, partition: range.partition, offset: range.start.toString() });
    await done;
    return seen;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw error instanceof NotConnectedError
      ? error
      : classifyConnectionError(error, `reading the tail of kafka topic '${config.topic}'`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The offset a batch was fetched from. kafkajs keeps it on the batch without declaring it in its
 * types; the first record's offset stands in should it ever be missing.
 */
function fetchedOffset(batch: EachBatchPayload['batch']): bigint | undefined {
  const fetched = (batch as { fetchedOffset?: unknown }).fetchedOffset;
  if (typeof fetched === 'string' || typeof fetched === 'number') return BigInt(fetched);
  const first = batch.firstOffset();
  return first === null ? undefined : BigInt(first);
}

/** The read's group holds no offsets, but would stay listed until the broker expires it. */
async function deleteGroup(config: KafkaConfig, context: ConnectorContext, groupId: string): Promise<void> {
  const admin: Admin = createAdmin(config, context);
  try {
    await admin.connect();
    await admin.deleteGroups([groupId]);
  } catch (error) {
    context.logger.debug(
      { groupId, err: (error as Error).message },
      'kafka sink: could not delete the group used to read the topic',
    );
  } finally {
    await disconnectFully(admin);
  }
}
