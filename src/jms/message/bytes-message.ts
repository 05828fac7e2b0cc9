import { MessageEOFError, MessageFormatError, MessageNotWriteableError } from '../errors.js';
import { Message, type BodyType } from './message.js';

/** The body of an empty message; never written (a write grows the body into a buffer of its own). */
const NO_BYTES = Buffer.alloc(0);
/** Bytes a body grows to at its first write, so that small writes do not grow it each time. */
const INITIAL_CAPACITY = 64;

/**
 * A message whose body is bytes (MSG-4). As in JMS it is written and read as a stream of
 * big-endian primitives (`writeInt`, `readInt`, ...); `new BytesMessage(bytes)` and
 * `getBodyBytes()` give the whole body at once, which is what bridges use.
 */
export class BytesMessage extends Message {
  #buffer: Buffer;
  #length: number;
  #position = 0;

  constructor(bytes?: Uint8Array) {
    super();
    // An empty body shares one empty buffer until its first write grows it: a copy (which starts
    // empty and then takes the original's body) allocates nothing for its body.
    this.#buffer = bytes ? Buffer.from(bytes) : NO_BYTES;
    this.#length = bytes ? bytes.byteLength : 0;
  }

  override get bodyType(): BodyType {
    return 'bytes';
  }

  /** Number of bytes in the body. */
  getBodyLength(): number {
    return this.#length;
  }

  /** The whole body; the returned view must not be modified. */
  getBodyBytes(): Uint8Array {
    return this.#buffer.subarray(0, this.#length);
  }

  override getBody(): Uint8Array {
    return this.getBodyBytes();
  }

  override getBodySize(): number {
    return this.#length;
  }

  /** Makes the body read-only and puts the read position at the start, as in JMS. */
  reset(): void {
    this.bodyReadOnly = true;
    this.#position = 0;
  }

  override clearBody(): void {
    super.clearBody();
    // Grown on the first write: a cleared body (a paged-out message's headers) costs nothing.
    this.#buffer = NO_BYTES;
    this.#length = 0;
    this.#position = 0;
  }

  #reserve(bytes: number): number {
    this.checkBodyWritable();
    const offset = this.#length;
    if (offset + bytes > this.#buffer.length) {
      const grown = Buffer.alloc(Math.max(this.#buffer.length * 2, offset + bytes, INITIAL_CAPACITY));
      this.#buffer.copy(grown, 0, 0, offset);
      this.#buffer = grown;
    }
    this.#length += bytes;
    return offset;
  }

  /**
   * Writes `bytes` bytes at the end of the body. The room is made first, so `write` gets the
   * buffer as it is after growing; a write that throws (a value out of range) leaves the body as
   * it was.
   */
  #put(bytes: number, write: (buffer: Buffer, at: number) => void): void {
    const at = this.#reserve(bytes);
    try {
      write(this.#buffer, at);
    } catch (error) {
      this.#length = at;
      throw error;
    }
  }

  #take(bytes: number): number {
    if (!this.bodyReadOnly)
      throw new MessageNotWriteableError('bytes message is write-only until reset() or receipt');
    if (this.#position + bytes > this.#length)
      throw new MessageEOFError('read past the end of the bytes message');
    const offset = this.#position;
    this.#position += bytes;
    return offset;
  }

  writeBoolean(value: boolean): void {
    this.#put(1, (buffer, at) => buffer.writeUInt8(value ? 1 : 0, at));
  }
  writeByte(value: number): void {
    this.#put(1, (buffer, at) => buffer.writeInt8(value, at));
  }
  writeShort(value: number): void {
    this.#put(2, (buffer, at) => buffer.writeInt16BE(value, at));
  }
  writeChar(value: string): void {
    if (value.length !== 1) throw new MessageFormatError(`'${value}' is not a single character`);
    this.#put(2, (buffer, at) => buffer.writeUInt16BE(value.charCodeAt(0), at));
  }
  writeInt(value: number): void {
    this.#put(4, (buffer, at) => buffer.writeInt32BE(value, at));
  }
  writeLong(value: bigint | number): void {
    const long = BigInt(value);
    this.#put(8, (buffer, at) => buffer.writeBigInt64BE(long, at));
  }
  writeFloat(value: number): void {
    this.#put(4, (buffer, at) => buffer.writeFloatBE(value, at));
  }
  writeDouble(value: number): void {
    this.#put(8, (buffer, at) => buffer.writeDoubleBE(value, at));
  }
  /** Writes a string as a 2-byte length and UTF-8 bytes (Java's modified UTF-8 for common text). */
  writeUTF(value: string): void {
    const encoded = Buffer.from(value, 'utf8');
    if (encoded.length > 0xffff) throw new MessageFormatError('string is longer than 65535 bytes in UTF-8');
    this.writeShort(encoded.length - (encoded.length > 0x7fff ? 0x10000 : 0));
    this.writeBytes(encoded);
  }
  writeBytes(value: Uint8Array, offset = 0, length = value.byteLength - offset): void {
    const at = this.#reserve(length);
    this.#buffer.set(value.subarray(offset, offset + length), at);
  }

  readBoolean(): boolean {
    return this.#buffer.readUInt8(this.#take(1)) !== 0;
  }
  readByte(): number {
    return this.#buffer.readInt8(this.#take(1));
  }
  readUnsignedByte(): number {
    return this.#buffer.readUInt8(this.#take(1));
  }
  readShort(): number {
    return this.#buffer.readInt16BE(this.#take(2));
  }
  readUnsignedShort(): number {
    return this.#buffer.readUInt16BE(this.#take(2));
  }
  readChar(): string {
    return String.fromCharCode(this.#buffer.readUInt16BE(this.#take(2)));
  }
  readInt(): number {
    return this.#buffer.readInt32BE(this.#take(4));
  }
  readLong(): bigint {
    return this.#buffer.readBigInt64BE(this.#take(8));
  }
  readFloat(): number {
    return this.#buffer.readFloatBE(this.#take(4));
  }
  readDouble(): number {
    return this.#buffer.readDoubleBE(this.#take(8));
  }
  readUTF(): string {
    const length = this.readUnsignedShort();
    const at = this.#take(length);
    return this.#buffer.toString('utf8', at, at + length);
  }
  /** Reads up to `length` bytes (default: the rest); returns an empty array at the end. */
  readBytes(length = this.#length - this.#position): Uint8Array {
    const count = Math.min(length, this.#length - this.#position);
    const at = this.#take(count);
    return Uint8Array.prototype.slice.call(this.#buffer, at, at + count);
  }

  protected override createEmpty(): Message {
    return new BytesMessage();
  }

  protected override copyBodyInto(target: this): void {
    target.#buffer = this.#buffer.subarray(0, this.#length);
    target.#length = this.#length;
    target.#position = 0;
  }
}
