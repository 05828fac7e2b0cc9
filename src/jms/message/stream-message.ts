import { MessageEOFError, MessageNotWriteableError } from '../errors.js';
import { Message, type BodyType } from './message.js';
import { read, write } from './typed-entries.js';
import { type ObjectValue, type TypedValue, fromObject, typedValueSize } from './typed-value.js';

/**
 * A message whose body is a sequence of typed values (MSG-4), written in order and read back in
 * order with the JMS conversion table. `readBytes` returns a whole bytes item at once.
 */
export class StreamMessage extends Message {
  #items: TypedValue[] = [];
  #position = 0;

  /** Builds a stream message from plain values (typed as `writeObject` types them). */
  constructor(items?: readonly unknown[]) {
    super();
    for (const item of items ?? []) this.writeObject(item);
  }

  override get bodyType(): BodyType {
    return 'stream';
  }

  /** Makes the body read-only and puts the read position at the start, as in JMS. */
  reset(): void {
    this.bodyReadOnly = true;
    this.#position = 0;
  }

  #write(value: TypedValue): void {
    this.checkBodyWritable();
    this.#items.push(value);
  }

  #next<T>(reader: (value: TypedValue | null, what: string) => T): T {
    if (!this.bodyReadOnly)
      throw new MessageNotWriteableError('stream message is write-only until reset() or receipt');
    const item = this.#items[this.#position];
    if (item === undefined) throw new MessageEOFError('read past the end of the stream message');
    // As in JMS, a failed conversion leaves the position where it was so the item can be read another way.
    const value = reader(item, `stream item ${this.#position}`);
    this.#position++;
    return value;
  }

  /** @internal The typed items, for bridges and the store. */
  getTypedItems(): readonly TypedValue[] {
    return this.#items;
  }
  /** @internal Appends a typed item (bridges and the store). */
  writeTyped(value: TypedValue): void {
    this.#write(value);
  }

  writeBoolean(value: boolean): void {
    this.#write(write.boolean(value, 'stream item'));
  }
  writeByte(value: number): void {
    this.#write(write.byte(value, 'stream item'));
  }
  writeShort(value: number): void {
    this.#write(write.short(value, 'stream item'));
  }
  writeChar(value: string): void {
    this.#write(write.char(value, 'stream item'));
  }
  writeInt(value: number): void {
    this.#write(write.int(value, 'stream item'));
  }
  writeLong(value: bigint | number): void {
    this.#write(write.long(value, 'stream item'));
  }
  writeFloat(value: number): void {
    this.#write(write.float(value));
  }
  writeDouble(value: number): void {
    this.#write(write.double(value));
  }
  writeString(value: string): void {
    this.#write(write.string(value));
  }
  writeBytes(value: Uint8Array): void {
    this.#write(write.bytes(value));
  }
  writeObject(value: unknown): void {
    this.#write(fromObject(value, 'stream item'));
  }

  readBoolean(): boolean {
    return this.#next(read.boolean);
  }
  readByte(): number {
    return this.#next(read.byte);
  }
  readShort(): number {
    return this.#next(read.short);
  }
  readChar(): string {
    return this.#next(read.char);
  }
  readInt(): number {
    return this.#next(read.int);
  }
  readLong(): bigint {
    return this.#next(read.long);
  }
  readFloat(): number {
    return this.#next(read.float);
  }
  readDouble(): number {
    return this.#next(read.double);
  }
  readString(): string | null {
    return this.#next(read.string);
  }
  readBytes(): Uint8Array | null {
    return this.#next(read.bytes);
  }
  readObject(): ObjectValue | null {
    return this.#next((item) => item?.value ?? null);
  }

  override getBody(): ObjectValue[] {
    return this.#items.map((item) => item.value);
  }

  override getBodySize(): number {
    return this.#items.reduce((size, item) => size + typedValueSize(item), 0);
  }

  override clearBody(): void {
    super.clearBody();
    this.#items = [];
    this.#position = 0;
  }

  protected override createEmpty(): Message {
    return new StreamMessage();
  }

  protected override copyBodyInto(target: this): void {
    target.#items = [...this.#items];
    target.#position = 0;
  }
}
