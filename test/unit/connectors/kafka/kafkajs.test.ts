import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
// First, so that it loads kafkajs in this process, as the connector does in the gateway's.
import { encoderBuffers, recordEncoders } from '../../../../connectors/kafka/kafkajs.js';

const require = createRequire(import.meta.url);

interface EncodedBatch {
  buffer: Buffer;
}
type RecordBatchEncoder = (batch: Record<string, unknown>) => Promise<EncodedBatch>;
type RecordEncoder = (record: Record<string, unknown>) => unknown;
interface DecodedRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, Buffer>;
}

const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch: RecordBatchEncoder;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as RecordEncoder;
const Long = require('kafkajs/src/utils/long.js') as { fromInt(value: number): unknown };
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;
const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (
  decoder: unknown,
) => Promise<{ records: DecodedRecord[] }>;

/** Records of every size class an encoder grows through: empty, small, around 512 B, 1 KB, 70 KB. */
function records(): { key: string | null; value: string | null; headers: Record<string, string> }[] {
  return [0, 1, 100, 500, 511, 512, 513, 1_024, 4_000, 70_000].map((size, index) => ({
    key: index % 3 === 0 ? null : `key-${index}`,
    value: size === 0 ? null : 'v'.repeat(size),
    headers: { 'jms.bodyType': 'text', JMSMessageID: `ID:m-${index}`, JMSPriority: String(index % 10) },
  }));
}

async function encode(): Promise<Buffer> {
  const batch = await RecordBatch({
    firstOffset: Long.fromInt(0),
    firstTimestamp: 1_700_000_000_000,
    maxTimestamp: 1_700_000_000_000,
    producerId: Long.fromInt(7),
    records: records().map((record, offsetDelta) => Record({ ...record, offsetDelta, timestampDelta: 0 })),
  });
  return Buffer.from(batch.buffer);
}

/** Fills what `Buffer.allocUnsafe` hands out next (Node's pool, and freed memory) with `byte`. */
function dirtyMemory(byte: number): void {
  for (let index = 0; index < 64; index++) Buffer.allocUnsafe(4_096).fill(byte);
  Buffer.allocUnsafe(256 * 1_024).fill(byte);
}

test('kafkajs - the connector loads it first, so every encoder it makes uses uninitialised buffers, and records go in one pass', () => {
  assert.equal(encoderBuffers, 'all');
  assert.notEqual(recordEncoders.used, recordEncoders.kafkajs);
  assert.equal(Record, recordEncoders.used, 'the produce request takes the one-pass encoder');
});

test('kafkajs - a record batch is the same bytes whatever the memory its buffers came from held, and decodes back', async () => {
  dirtyMemory(0xaa);
  const first = await encode();
  dirtyMemory(0x55);
  const second = await encode();
  assert.ok(first.equals(second), 'a byte left unwritten would differ between the two');
  const decoded = await decodeBatch(new Decoder(first));
  assert.deepEqual(
    decoded.records.map((record) => ({
      key: record.key?.toString() ?? null,
      value: record.value?.toString() ?? null,
      headers: Object.fromEntries(
        Object.entries(record.headers).map(([name, value]) => [name, value.toString()]),
      ),
    })),
    records(),
  );
});

interface VarintEncoder {
  writeVarInt(value: number): VarintEncoder;
  writeUVarInt(value: number): VarintEncoder;
  writeVarLong(value: unknown): VarintEncoder;
  buffer: Buffer;
}
const EncoderClass = require('kafkajs/src/protocol/encoder.js') as {
  new (): VarintEncoder;
  sizeOfVarInt(value: number): number;
  sizeOfVarLong(value: unknown): number;
};
const VarintDecoder = Decoder as new (buffer: Buffer) => {
  readVarInt(): number;
  readVarLong(): { toString(): string };
};

/** Zigzag then LEB128, as the Kafka protocol defines varints and varlongs, in BigInt arithmetic. */
function varintBytes(value: bigint, bits: 32 | 64): Buffer {
  let zigzag = BigInt.asUintN(bits, (value << 1n) ^ (value >> BigInt(bits - 1)));
  const bytes: number[] = [];
  while (zigzag >= 0x80n) {
    bytes.push(Number(zigzag & 0x7fn) | 0x80);
    zigzag >>= 7n;
  }
  bytes.push(Number(zigzag));
  return Buffer.from(bytes);
}

const INT32_EDGES = [
  0,
  1,
  -1,
  63,
  -64,
  64,
  -65,
  8_191,
  8_192,
  -8_193,
  2 ** 20,
  -(2 ** 27),
  2 ** 31 - 1,
  -(2 ** 31),
];
const LONGER = [2 ** 31, -(2 ** 31) - 1, 2 ** 40, -(2 ** 40), 1_700_000_000_123, Number.MAX_SAFE_INTEGER];

test('kafkajs - varints and varlongs are the bytes the Kafka protocol defines, written in place, and read back', () => {
  for (const value of INT32_EDGES) {
    const written = new EncoderClass().writeVarInt(value).writeVarLong(value).buffer;
    const expected = Buffer.concat([varintBytes(BigInt(value), 32), varintBytes(BigInt(value), 64)]);
    assert.deepEqual(written, expected, String(value));
    assert.equal(EncoderClass.sizeOfVarLong(value), varintBytes(BigInt(value), 64).length, String(value));
    const decoder = new VarintDecoder(written);
    assert.equal(decoder.readVarInt(), value);
    assert.equal(decoder.readVarLong().toString(), String(value));
  }
  // Beyond 32 bits, kafkajs's own varlong code writes and counts them.
  for (const value of LONGER) {
    const written = new EncoderClass().writeVarLong(value).buffer;
    assert.deepEqual(written, varintBytes(BigInt(value), 64), String(value));
    assert.equal(EncoderClass.sizeOfVarLong(value), written.length, String(value));
    assert.equal(new VarintDecoder(written).readVarLong().toString(), String(value));
  }
  // Many in one encoder: each goes at the offset the last left, across the buffer's growth.
  const encoder = new EncoderClass();
  const values = Array.from({ length: 2_000 }, (_, index) =>
    index % 2 === 0 ? index * 104_729 : -index * 7,
  );
  for (const value of values) encoder.writeVarInt(value);
  const decoder = new VarintDecoder(encoder.buffer);
  assert.deepEqual(
    values.map(() => decoder.readVarInt()),
    values,
  );
});

test('kafkajs - a record written in one pass is the bytes kafkajs writes, and kafkajs writes what it cannot take', () => {
  const long = 'é'.repeat(3_000);
  const records: Record<string, unknown>[] = [
    {},
    { key: null, value: null },
    { key: 'k', value: 'v', offsetDelta: 3, timestampDelta: 17 },
    {
      key: Buffer.from([0, 1, 2]),
      value: Buffer.alloc(70_000, 7),
      offsetDelta: 499,
      timestampDelta: 2 ** 33,
    },
    { key: 'ключ', value: long, headers: { 'jms.bodyType': 'text', JMSPriority: '4', 'ü-name': 'wert ✓' } },
    { value: 'x', headers: { repeated: ['a', Buffer.from('b'), ''], empty: '', bytes: Buffer.alloc(0) } },
    {
      value: 'x'.repeat(1_000),
      headers: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`h${i}`, `v${i}`])),
    },
    { value: 'x', offsetDelta: -1, timestampDelta: -5 },
  ];
  for (const record of records) {
    const ours = recordEncoders.used(record).buffer;
    const theirs = recordEncoders.kafkajs(record).buffer;
    assert.ok(ours.equals(theirs), JSON.stringify(record).slice(0, 120));
  }
  // What kafkajs's encoder throws on, or writes its own way, goes to it, with the same outcome.
  for (const odd of [
    { value: 42 },
    { key: 7, value: 'x' },
    { value: 'x', headers: { h: undefined } },
    { value: 'x', headers: { h: null } },
  ]) {
    const outcome = (encode: (record: Record<string, unknown>) => { buffer: Buffer }) => {
      try {
        return encode(odd).buffer.toString('hex');
      } catch (error) {
        return (error as Error).constructor.name;
      }
    };
    assert.equal(outcome(recordEncoders.used), outcome(recordEncoders.kafkajs), JSON.stringify(odd));
  }
});
