import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { Message as KafkaMessage } from 'kafkajs';
import { chunkRecords, recordBytes } from '../../../../connectors/kafka/record-chunks.js';
import { produceRequestBytes } from '../../../../connectors/kafka/size-limits.js';

// kafkajs's record encoder, as it writes a record into a batch.
const encodeRecord = createRequire(import.meta.url)(
  'kafkajs/src/protocol/recordBatch/record/v0/index.js',
) as (record: object) => { size(): number };

const envelope = { clientId: 'c', topic: 't' };

function record(bytes: number, extra: Partial<KafkaMessage> = {}): KafkaMessage {
  return { key: 'k', value: 'v'.repeat(bytes), headers: { JMSMessageID: 'ID:1', seq: '7' }, ...extra };
}

test('kafka record chunks - a record is never counted smaller than kafkajs encodes it', () => {
  for (const [size, offsetDelta, timestampDelta] of [
    [0, 0, 0],
    [10, 5, 3],
    [200, 127, 50],
    [5000, 128, 1000],
    [70_000, 20_000, 60_000],
  ] as const) {
    const one = record(size);
    const encoded = encodeRecord({ ...one, offsetDelta, timestampDelta }).size();
    const counted = recordBytes(one, offsetDelta);
    assert.ok(counted >= encoded, `${size} bytes at ${offsetDelta}: counted ${counted} < encoded ${encoded}`);
    assert.ok(
      counted - encoded <= 4,
      `${size} bytes at ${offsetDelta}: counted ${counted}, encoded ${encoded}`,
    );
  }
});

test('kafka record chunks - records are cut, in order, into requests of at most maxRequestBytes', () => {
  const records = Array.from({ length: 100 }, () => record(300));
  const chunks = chunkRecords(records, { maxRequestBytes: 2000, sizeLimits: {}, envelope });
  assert.ok(chunks.length > 1);
  let next = 0;
  for (const { start, end } of chunks) {
    assert.equal(start, next, 'consecutive, nothing skipped');
    assert.ok(end > start);
    let bytes = 0;
    for (let i = start; i < end; i++) bytes += recordBytes(records[i]!, i - start);
    assert.ok(bytes <= 2000, `chunk ${start}-${end} holds ${bytes} bytes`);
    next = end;
  }
  assert.equal(next, 100);
});

test("kafka record chunks - the topic's batch limit and the request limit cut too; a lone larger record goes alone", () => {
  const records = [record(100), record(100), record(3000), record(100)];
  const byBatch = chunkRecords(records, {
    maxRequestBytes: 1_000_000,
    sizeLimits: { batch: { bytes: 400, source: 'topic' } },
    envelope,
  });
  assert.deepEqual(byBatch, [
    { start: 0, end: 2 },
    { start: 2, end: 3 },
    { start: 3, end: 4 },
  ]);
  const twoRecords = 61 + recordBytes(records[0]!, 0) + recordBytes(records[1]!, 1);
  const byRequest = chunkRecords(records.slice(0, 2), {
    maxRequestBytes: 1_000_000,
    sizeLimits: { request: { bytes: produceRequestBytes(twoRecords, envelope) - 1, source: 'broker' } },
    envelope,
  });
  assert.deepEqual(byRequest, [
    { start: 0, end: 1 },
    { start: 1, end: 2 },
  ]);
});

test('kafka record chunks - every partition of a request counts its own batch header against the request limit', () => {
  const records = [record(10), record(10)];
  const onePartition = 61 + recordBytes(records[0]!, 0) + recordBytes(records[1]!, 1);
  const limits = {
    maxRequestBytes: 1_000_000,
    sizeLimits: { request: { bytes: produceRequestBytes(onePartition, envelope) + 10, source: 'broker' } },
    envelope,
  };
  assert.equal(chunkRecords(records, limits, () => 0).length, 1, 'one partition: one batch header');
  assert.equal(chunkRecords(records, limits, (i) => i).length, 2, 'two partitions: two headers do not fit');
});
