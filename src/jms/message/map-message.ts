import { Message, type BodyType } from './message.js';
import { read, write } from './typed-entries.js';
import { type ObjectValue, type TypedValue, fromObject, typedValueSize } from './typed-value.js';

/** A message whose body is a set of named, typed entries (MSG-4), read with the JMS conversion table. */
export class MapMessage extends Message {
  #entries = new Map<string, TypedValue>();

  /** Builds a map message from plain values (typed as `setObject` types them). */
  constructor(entries?: Record<string, unknown>) {
    super();
    for (const [name, value] of Object.entries(entries ?? {})) this.setObject(name, value);
  }

  override get bodyType(): BodyType {
    return 'map';
  }

  #get(name: string): TypedValue | null {
    return this.#entries.get(name) ?? null;
  }

  #set(name: string, value: TypedValue): void {
    this.checkBodyWritable();
    this.#entries.set(name, value);
  }

  #what(name: string): string {
    return `map entry '${name}'`;
  }

  /** Names of all entries. */
  getMapNames(): string[] {
    return [...this.#entries.keys()];
  }
  itemExists(name: string): boolean {
    return this.#entries.has(name);
  }
  /** @internal The typed entries, for bridges and the store. */
  getTypedEntries(): ReadonlyMap<string, TypedValue> {
    return this.#entries;
  }
  /** @internal Sets an entry with its type (bridges and the store). */
  setTypedEntry(name: string, value: TypedValue): void {
    this.#set(name, value);
  }

  setBoolean(name: string, value: boolean): void {
    this.#set(name, write.boolean(value, this.#what(name)));
  }
  setByte(name: string, value: number): void {
    this.#set(name, write.byte(value, this.#what(name)));
  }
  setShort(name: string, value: number): void {
    this.#set(name, write.short(value, this.#what(name)));
  }
  setChar(name: string, value: string): void {
    this.#set(name, write.char(value, this.#what(name)));
  }
  setInt(name: string, value: number): void {
    this.#set(name, write.int(value, this.#what(name)));
  }
  setLong(name: string, value: bigint | number): void {
    this.#set(name, write.long(value, this.#what(name)));
  }
  setFloat(name: string, value: number): void {
    this.#set(name, write.float(value));
  }
  setDouble(name: string, value: number): void {
    this.#set(name, write.double(value));
  }
  setString(name: string, value: string): void {
    this.#set(name, write.string(value));
  }
  setBytes(name: string, value: Uint8Array): void {
    this.#set(name, write.bytes(value));
  }
  setObject(name: string, value: unknown): void {
    this.#set(name, fromObject(value, this.#what(name)));
  }

  getBoolean(name: string): boolean {
    return read.boolean(this.#get(name), this.#what(name));
  }
  getByte(name: string): number {
    return read.byte(this.#get(name), this.#what(name));
  }
  getShort(name: string): number {
    return read.short(this.#get(name), this.#what(name));
  }
  getChar(name: string): string {
    return read.char(this.#get(name), this.#what(name));
  }
  getInt(name: string): number {
    return read.int(this.#get(name), this.#what(name));
  }
  getLong(name: string): bigint {
    return read.long(this.#get(name), this.#what(name));
  }
  getFloat(name: string): number {
    return read.float(this.#get(name), this.#what(name));
  }
  getDouble(name: string): number {
    return read.double(this.#get(name), this.#what(name));
  }
  getString(name: string): string | null {
    return read.string(this.#get(name), this.#what(name));
  }
  getBytes(name: string): Uint8Array | null {
    return read.bytes(this.#get(name), this.#what(name));
  }
  getObject(name: string): ObjectValue | null {
    return this.#get(name)?.value ?? null;
  }

  override getBody(): Record<string, ObjectValue> {
    return Object.fromEntries([...this.#entries].map(([name, typed]) => [name, typed.value]));
  }

  override getBodySize(): number {
    let size = 0;
    for (const [name, value] of this.#entries) size += name.length + typedValueSize(value);
    return size;
  }

  override clearBody(): void {
    super.clearBody();
    this.#entries = new Map();
  }

  protected override createEmpty(): Message {
    return new MapMessage();
  }

  protected override copyBodyInto(target: this): void {
    // A copy is taken at send and at delivery; the sender may go on writing its own message.
    target.#entries = new Map(this.#entries);
  }
}
