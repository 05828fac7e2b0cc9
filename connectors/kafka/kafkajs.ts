/**
 * kafkajs, loaded for the connector with changes to how it encodes records that take most of the
 * CPU off encoding record batches, and a tenth of what a gateway forwarding to Kafka allocates.
 * What kafkajs sends stays the same, byte for byte (test/unit/connectors/kafka/kafkajs.test.ts and
 * crc32c.test.ts compare them with kafkajs's own); measured on 100 records of 1 KB with JMS headers:
 *
 * - Buffers: kafkajs's Encoder zero-fills every buffer it allocates (the 512-byte one each record
 *   is written into, and each doubled one an encoder grows into, a new ArrayBuffer each time), yet
 *   only ever exposes the bytes it wrote (`buffer` is the slice up to its write offset, and every
 *   write goes at that offset). Here they are allocated uninitialised with `Buffer.allocUnsafe`,
 *   which also takes small ones from Node's shared pool: 14 µs of CPU a record instead of 27-33.
 * - Varints and varlongs are written in place rather than through a buffer made for each (see
 *   `writeVarintsInPlace`): 8 µs a record instead of 11-13.
 * - A record is written in one pass into one encoder of its size (see `recordsInOnePass`): 6-9 µs
 *   a record against 13-15 for kafkajs's record encoder, measured side by side.
 * - A batch's CRC-32C is crc32c.ts's, three times as fast as kafkajs's.
 *
 * The records' encoders are made by kafkajs's own modules, which take the Encoder class, the
 * record encoder and the checksum when they are first loaded: those changes replace the modules
 * they load, so they take effect only if this module loads kafkajs first in the process. The
 * connector loads kafkajs only through here; if something else loaded it before, only the growth
 * of encoders and the varints change (methods of the class its modules already hold). kafkajs is
 * pinned (2.2.4, no longer released), and its CommonJS modules are stable within it.
 */
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import type * as KafkaJS from 'kafkajs';
import { crc32c } from './crc32c.js';

export interface KafkaEncoder {
  /** What was written: the buffer up to the write offset. */
  readonly buffer: Buffer;
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeInt8(value: number): KafkaEncoder;
  writeVarInt(value: number): KafkaEncoder;
  writeVarIntString(value: string): KafkaEncoder;
  writeVarIntBytes(value: Buffer | string | null | undefined): KafkaEncoder;
  writeUVarInt(value: number): KafkaEncoder;
  writeVarLong: (this: KafkaEncoder, value: unknown) => KafkaEncoder;
}
/** What kafkajs's encoder counts without writing: record-chunks.ts sizes requests with it. */
export interface EncoderSizes {
  sizeOfVarInt(value: number): number;
  sizeOfVarLong(value: number): number;
  sizeOfVarIntBytes(value: Buffer | string | null | undefined): number;
}
interface EncoderClass extends EncoderSizes {
  new (initialSize?: number): KafkaEncoder;
  readonly prototype: KafkaEncoder;
  nextPowerOfTwo(value: number): number;
  encodeZigZag(value: number): number;
}

const require = createRequire(import.meta.url);

// Asked before the encoder is loaded: it loads a kafkajs module of its own.
const loadedBefore = Object.keys(require.cache).some((module) => module.includes(`${sep}kafkajs${sep}`));
const encoderPath = require.resolve('kafkajs/src/protocol/encoder.js');
const OriginalEncoder = require(encoderPath) as EncoderClass;

/** How much of the change took effect: `all`, or `growth` when kafkajs was loaded before this module. */
export const encoderBuffers: 'all' | 'growth' = useUninitialisedBuffers();
writeVarintsInPlace();
/**
 * The record encoder kafkajs's produce request uses, one pass (`recordsInOnePass`) unless kafkajs
 * was loaded before this module, and kafkajs's own beside it (for the test that compares them).
 */
export const recordEncoders: { readonly used: RecordEncoder; readonly kafkajs: RecordEncoder } =
  recordsInOnePass(encoderBuffers === 'all');
/** Which CRC-32C checksums record batches: crc32c.ts's unless kafkajs was loaded before this module. */
export const batchChecksum: 'crc32c.ts' | "kafkajs's" =
  encoderBuffers === 'all' ? checksumsFromCrc32c() : "kafkajs's";

/** kafkajs's encoder, for its size functions (kafkajs does not export it). */
export const Encoder: EncoderSizes = OriginalEncoder;

// Named here: kafkajs is CommonJS, and the ESM loader does not see these exports by name.
export const { Kafka, logLevel, CompressionTypes, Partitioners, ConfigResourceTypes } =
  require('kafkajs') as typeof KafkaJS;
/** A client, as the class's instances are typed. */
export type Kafka = KafkaJS.Kafka;

function useUninitialisedBuffers(): 'all' | 'growth' {
  OriginalEncoder.prototype.ensureAvailable = function (this: KafkaEncoder, length: number): void {
    if (this.offset + length <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(OriginalEncoder.nextPowerOfTwo(this.offset + length));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
  // Loaded already: kafkajs's modules hold the original class, so only its method could change.
  if (loadedBefore) return 'growth';
  class UninitialisedEncoder extends OriginalEncoder {
    constructor(initialSize = 511) {
      // The original allocates nextPowerOfTwo(0) = 1 byte here, zero-filled: nothing to speak of.
      super(0);
      this.buf = Buffer.allocUnsafe(OriginalEncoder.nextPowerOfTwo(initialSize));
    }
  }
  installAsModule(encoderPath, UninitialisedEncoder);
  return 'all';
}

/**
 * kafkajs writes every varint (a record's length and offset delta, each header's key and value
 * length: about 20 a record with JMS headers) by pushing its bytes into an array and copying a
 * `Buffer.from` of it, and every varlong (a record's timestamp delta) and its size through Long
 * objects: a tenth of everything a gateway allocated forwarding to Kafka. These write the same
 * bytes straight into the encoder's buffer; a varlong that fits in 32 bits (a timestamp delta
 * within a batch) takes the varint path, whose bytes are the same for such a value, and any
 * other goes to kafkajs's own. Methods of the class, so they hold however kafkajs was loaded.
 */
function writeVarintsInPlace(): void {
  const prototype = OriginalEncoder.prototype;
  const writeLongVarLong = prototype.writeVarLong;
  const sizeOfLongVarLong = OriginalEncoder.sizeOfVarLong.bind(OriginalEncoder);
  prototype.writeUVarInt = function (this: KafkaEncoder, value: number): KafkaEncoder {
    this.ensureAvailable(MAX_VARINT_BYTES);
    const buf = this.buf;
    let offset = this.offset;
    // As kafkajs's loop: 7 bits at a time, the high bit set on all but the last byte.
    while ((value & 0xffffff80) !== 0) {
      buf[offset++] = (value & 0x7f) | 0x80;
      value >>>= 7;
    }
    buf[offset++] = value & 0x7f;
    this.offset = offset;
    return this;
  };
  prototype.writeVarLong = function (this: KafkaEncoder, value: unknown): KafkaEncoder {
    return isInt32(value)
      ? this.writeUVarInt(OriginalEncoder.encodeZigZag(value))
      : writeLongVarLong.call(this, value);
  };
  OriginalEncoder.sizeOfVarLong = (value: number) =>
    isInt32(value) ? OriginalEncoder.sizeOfVarInt(value) : sizeOfLongVarLong(value);
}

/** The most bytes a 32-bit varint takes. */
const MAX_VARINT_BYTES = 5;

function isInt32(value: unknown): value is number {
  return typeof value === 'number' && (value | 0) === value;
}

/** A record as kafkajs's produce request hands it to its record encoder. */
export interface RecordFields {
  readonly offsetDelta?: number;
  readonly timestampDelta?: unknown;
  readonly key?: unknown;
  readonly value?: unknown;
  readonly headers?: Readonly<Record<string, unknown>>;
}
export type RecordEncoder = (record: RecordFields) => KafkaEncoder;

/**
 * kafkajs encodes a record in pieces: an encoder of 512 bytes grown (and copied) twice for a
 * record of 1 KB, an array of header objects, and an encoder for each header that is then copied
 * into the record's. This one counts the record's size first, as kafkajs does, and writes every
 * field, headers included, into one encoder of that size: the same bytes (kafkajs.test.ts checks
 * them against kafkajs's own encoder). A record with anything else than strings or buffers for
 * its key, value or header values (kafkajs's encoder throws on some of those) goes to kafkajs's
 * own. Installed as kafkajs's record module, which its produce request takes when loaded.
 */
function recordsInOnePass(install: boolean): { used: RecordEncoder; kafkajs: RecordEncoder } {
  const recordPath = require.resolve('kafkajs/src/protocol/recordBatch/record/v0/index.js');
  const kafkajsRecord = require(recordPath) as RecordEncoder;
  if (!install) return { used: kafkajsRecord, kafkajs: kafkajsRecord };
  const NewEncoder = require(encoderPath) as EncoderClass;
  const onePass: RecordEncoder = (record) => {
    const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = record;
    if (!isBytesOrNothing(key) || !isBytesOrNothing(value)) return kafkajsRecord(record);
    const names = Object.keys(headers);
    let headerCount = 0;
    let headerBytes = 0;
    const count = (name: string, one: unknown): boolean => {
      if (typeof one !== 'string' && !Buffer.isBuffer(one)) return false;
      headerCount++;
      headerBytes += NewEncoder.sizeOfVarIntBytes(name) + NewEncoder.sizeOfVarIntBytes(one);
      return true;
    };
    for (const name of names) {
      const header = headers[name];
      const counted = Array.isArray(header)
        ? (header as unknown[]).every((one) => count(name, one))
        : count(name, header);
      if (!counted) return kafkajsRecord(record);
    }
    const bodyBytes =
      1 + // attributes
      NewEncoder.sizeOfVarLong(timestampDelta as number) +
      NewEncoder.sizeOfVarInt(offsetDelta) +
      NewEncoder.sizeOfVarIntBytes(key) +
      NewEncoder.sizeOfVarIntBytes(value) +
      NewEncoder.sizeOfVarInt(headerCount) +
      headerBytes;
    const encoder = new NewEncoder(NewEncoder.sizeOfVarInt(bodyBytes) + bodyBytes)
      .writeVarInt(bodyBytes)
      .writeInt8(0) // no record attributes
      .writeVarLong(timestampDelta)
      .writeVarInt(offsetDelta)
      .writeVarIntBytes(key)
      .writeVarIntBytes(value)
      .writeVarInt(headerCount);
    for (const name of names) {
      const header = headers[name];
      if (!Array.isArray(header)) encoder.writeVarIntString(name).writeVarIntBytes(header as string | Buffer);
      else
        for (const one of header as (string | Buffer)[])
          encoder.writeVarIntString(name).writeVarIntBytes(one);
    }
    return encoder;
  };
  installAsModule(recordPath, onePass);
  return { used: onePass, kafkajs: kafkajsRecord };
}

function isBytesOrNothing(value: unknown): value is Buffer | string | null | undefined {
  return value === null || value === undefined || typeof value === 'string' || Buffer.isBuffer(value);
}

/** Installs crc32c.ts as kafkajs's CRC-32C module, which its record batch encoder takes when loaded. */
function checksumsFromCrc32c(): 'crc32c.ts' {
  installAsModule(require.resolve('kafkajs/src/protocol/recordBatch/crc32C/index.js'), crc32c);
  return 'crc32c.ts';
}

/**
 * Makes `exports` what the kafkajs module at `path` gives every module that requires it from now
 * on (modules that took it before keep what they had): the one way each change here reaches
 * kafkajs's own modules.
 */
function installAsModule(path: string, exports: unknown): void {
  require(path); // loaded, so that the cache holds its entry
  require.cache[path]!.exports = exports;
}
