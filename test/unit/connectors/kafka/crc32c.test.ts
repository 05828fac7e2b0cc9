import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
// First, so that it loads kafkajs in this process, as the connector does in the gateway's.
import { batchChecksum } from '../../../../connectors/kafka/kafkajs.js';
import { crc32c } from '../../../../connectors/kafka/crc32c.js';

const require = createRequire(import.meta.url);
/** kafkajs's own CRC-32C, a byte at a time (the module the connector leaves alone). */
const kafkajsCrc32c = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (
  bytes: Buffer,
) => number;
/** The module kafkajs's record batch encoder takes its checksum from. */
const usedByKafkajs = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (
  bytes: Buffer,
) => number;

test('crc32c - the check values of CRC-32C (RFC 3720, B.4)', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.alloc(32, 0)), 0x8a9136aa);
  assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43);
  assert.equal(crc32c(Buffer.from(Array.from({ length: 32 }, (_, i) => i))), 0x46dd794e);
  assert.equal(crc32c(Buffer.alloc(0)), 0);
});

test("crc32c - the same as kafkajs's for every length around its eight-byte steps, and for a whole batch", () => {
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff) & 0xff;
  for (let length = 0; length < 70; length++) {
    const bytes = Buffer.from(Array.from({ length }, random));
    assert.equal(crc32c(bytes), kafkajsCrc32c(bytes), `length ${length}`);
    // At an offset in a larger buffer, as the encoder's slices are.
    const framed = Buffer.concat([Buffer.from([1, 2, 3]), bytes]).subarray(3);
    assert.equal(crc32c(framed), kafkajsCrc32c(bytes), `length ${length}, offset 3`);
  }
  const batch = Buffer.from(Array.from({ length: 130_003 }, random));
  assert.equal(crc32c(batch), kafkajsCrc32c(batch));
});

test("crc32c - kafkajs's record batch encoder checksums with it", () => {
  assert.equal(batchChecksum, 'crc32c.ts');
  assert.equal(usedByKafkajs, crc32c);
});
