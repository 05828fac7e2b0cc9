/**
 * CRC-32C (Castagnoli), as Kafka checksums a record batch, eight bytes a step ("slicing by 8").
 * kafkajs computes it a byte at a time from one table, which took 2-3% of a gateway's CPU
 * forwarding 1 KB records to Kafka; eight tables let one step fold in eight bytes, about three
 * times as fast, with the same result (crc32c.test.ts compares it with kafkajs's).
 */

/** The reflected CRC-32C polynomial. */
const POLYNOMIAL = 0x82f63b78;

/** Table k (at k * 256) gives the CRC of a byte followed by k zero bytes. */
const TABLES = makeTables();

function makeTables(): Int32Array {
  const tables = new Int32Array(8 * 256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ POLYNOMIAL : crc >>> 1;
    tables[byte] = crc;
  }
  for (let table = 1; table < 8; table++) {
    for (let byte = 0; byte < 256; byte++) {
      const previous = tables[(table - 1) * 256 + byte]!;
      tables[table * 256 + byte] = (previous >>> 8) ^ tables[previous & 0xff]!;
    }
  }
  return tables;
}

/** The CRC-32C of `bytes`, as an unsigned 32-bit number. */
export function crc32c(bytes: Uint8Array): number {
  const t = TABLES;
  let crc = ~0;
  let i = 0;
  for (const whole = bytes.length - 7; i < whole; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    const high = bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24);
    crc =
      t[1792 + (low & 0xff)]! ^
      t[1536 + ((low >>> 8) & 0xff)]! ^
      t[1280 + ((low >>> 16) & 0xff)]! ^
      t[1024 + (low >>> 24)]! ^
      t[768 + (high & 0xff)]! ^
      t[512 + ((high >>> 8) & 0xff)]! ^
      t[256 + ((high >>> 16) & 0xff)]! ^
      t[high >>> 24]!;
  }
  for (; i < bytes.length; i++) crc = t[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return ~crc >>> 0;
}
