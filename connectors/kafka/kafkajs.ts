/**
 * kafkajs, loaded for the connector with one change to its encoder that takes about half the CPU
 * off encoding record batches. kafkajs's Encoder zero-fills every buffer it allocates: the
 * 512-byte one each record is written into and each doubled one an encoder grows into, a new
 * ArrayBuffer each time; yet it only ever exposes the bytes it wrote (`buffer` is the slice up to
 * its write offset, and every write goes at that offset). Here they are allocated uninitialised
 * with `Buffer.allocUnsafe`, which also takes small ones from Node's shared pool. What kafkajs
 * sends is the same, byte for byte (test/unit/connectors/kafka/kafkajs.test.ts); measured on 100
 * records of 1 KB with JMS headers, about 14 µs of CPU a record instead of 27-33.
 *
 * The records' encoders are made by kafkajs's own modules, which take the Encoder class when they
 * are first loaded: the change replaces the class they load, so it takes effect only if this
 * module loads kafkajs first in the process. The connector loads kafkajs only through here; if
 * something else loaded it before, only the growth of encoders is changed (a method of the class
 * they already hold). kafkajs is pinned (2.2.4, no longer released), and its CommonJS modules are
 * stable within it.
 */
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import type * as KafkaJS from 'kafkajs';

interface Encoder {
  buf: Buffer;
  offset: number;
  ensureAvailable(length: number): void;
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
}

const require = createRequire(import.meta.url);

// Asked before the encoder is loaded: it loads a kafkajs module of its own.
const loadedBefore = Object.keys(require.cache).some((module) => module.includes(`${sep}kafkajs${sep}`));
const encoderPath = require.resolve('kafkajs/src/protocol/encoder.js');
const OriginalEncoder = require(encoderPath) as EncoderClass;

/** How much of the change took effect: `all`, or `growth` when kafkajs was loaded before this module. */
export const encoderBuffers: 'all' | 'growth' = useUninitialisedBuffers();

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
