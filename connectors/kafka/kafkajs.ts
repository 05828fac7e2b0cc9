/**
 * kafkajs, loaded for the connector with two changes to its encoder that take about two thirds of
 * the CPU off encoding record batches, and a tenth of what a gateway forwarding to Kafka allocates.
 *
 * First, kafkajs's Encoder zero-fills every buffer it allocates: the 512-byte one each record is
 * written into and each doubled one an encoder grows into, a new
 * ArrayBuffer each time; yet it only ever exposes the bytes it wrote (`buffer` is the slice up to
 * its write offset, and every write goes at that offset). Here they are allocated uninitialised
 * with `Buffer.allocUnsafe`, which also takes small ones from Node's shared pool. What kafkajs
 * sends is the same, byte for byte (test/unit/connectors/kafka/kafkajs.test.ts); measured on 100
 * records of 1 KB with JMS headers, about 14 µs of CPU a record instead of 27-33.
 *
 * Second, varints and varlongs are written in place rather than through a buffer made for each
 * (see `writeVarintsInPlace`): on the same records, 8 µs a record instead of 11-13.
 *
 * The records' encoders are made by kafkajs's own modules, which take the Encoder class when they
 * are first loaded: the first change replaces the class they load, so it takes effect only if this
 * module loads kafkajs first in the process. The connector loads kafkajs only through here; if
 * something else loaded it before, only the growth of encoders is changed (a method of the class
 * they already hold), and the varints, also methods of that class. kafkajs is pinned (2.2.4, no longer released), and its CommonJS modules are
 * stable within it.
 */
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import type * as KafkaJS from 'kafkajs';

interface Encoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
  writeUVarInt(value: number): Encoder;
  writeVarLong: (this: Encoder, value: unknown) => Encoder;
}
/** What kafkajs's encoder counts without writing: record-chunks.ts sizes requests with it. */
export interface EncoderSizes {
  sizeOfVarInt(value: number): number;
  sizeOfVarLong(value: number): number;
  sizeOfVarIntBytes(value: Buffer | string | null | undefined): number;
}
interface EncoderClass extends EncoderSizes {
  new (initialSize?: number): Encoder;
  readonly prototype: Encoder;
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

/** kafkajs's encoder, for its size functions (kafkajs does not export it). */
export const Encoder: EncoderSizes = OriginalEncoder;

// Named here: kafkajs is CommonJS, and the ESM loader does not see these exports by name.
export const { Kafka, logLevel, CompressionTypes, Partitioners, ConfigResourceTypes } =
  require('kafkajs') as typeof KafkaJS;
/** A client, as the class's instances are typed. */
export type Kafka = KafkaJS.Kafka;

function useUninitialisedBuffers(): 'all' | 'growth' {
  OriginalEncoder.prototype.ensureAvailable = function (this: Encoder, length: number): void {
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
  require.cache[encoderPath]!.exports = UninitialisedEncoder;
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
  prototype.writeUVarInt = function (this: Encoder, value: number): Encoder {
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
  prototype.writeVarLong = function (this: Encoder, value: unknown): Encoder {
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
