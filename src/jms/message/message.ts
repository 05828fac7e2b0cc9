/**
 * The JMS message: headers (MSG-1), typed properties (MSG-2, MSG-3) and, in subclasses, a body
 * (MSG-4). A message received from the engine is read-only until its properties or body are
 * cleared, as in JMS.
 */
import { MessageFormatError, MessageNotWriteableError, InvalidArgumentError } from '../errors.js';
import type { Destination } from '../destination/destination.js';
import {
  type ObjectValue,
  type TypedValue,
  asBoolean,
  asFloating,
  asInteger,
  asLong,
  asString,
  floatValue,
  fromObject,
  integerValue,
  longValue,
  typedValueSize,
} from './typed-value.js';

/** JMSDeliveryMode values, numbered as in JMS. */
export const DeliveryMode = {
  /** May be lost on a crash; never written to the store. */
  NON_PERSISTENT: 1,
  /** Survives a crash once the send has returned (PER-1). The default. */
  PERSISTENT: 2,
} as const;
export type DeliveryModeValue = (typeof DeliveryMode)[keyof typeof DeliveryMode];

/** The body types a message can have, as carried through bridges and the store. */
export type BodyType = 'empty' | 'text' | 'bytes' | 'map' | 'stream' | 'xml';

/** The default JMSPriority (MSG-1). */
export const DEFAULT_PRIORITY = 4;

/** Properties a client may set although they start with the reserved `JMSX` prefix (message groups, ORD-4). */
const CLIENT_SETTABLE_JMSX = new Set(['JMSXGroupID', 'JMSXGroupSeq']);
/** Words of the selector grammar that can never be property names (SEL-1). */
const SELECTOR_KEYWORDS = new Set([
  'NULL',
  'TRUE',
  'FALSE',
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'LIKE',
  'IN',
  'IS',
  'ESCAPE',
]);
const IDENTIFIER = /^[\p{L}_$][\p{L}\p{N}_$]*$/u;

/**
 * The properties of a message that has none of its own. Never written: a message holding it
 * marks it shared, so its first write makes a map of its own (copy on write).
 */
const NO_PROPERTIES: ReadonlyMap<string, TypedValue> = new Map();

/** Checks that a name can be a property a client sets: an identifier, not a keyword, not reserved. */
export function checkPropertyName(name: string): void {
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) {
    throw new InvalidArgumentError(
      `property name '${String(name)}' is not a valid identifier (a letter, '_' or '$', then letters, digits, '_' or '$')`,
    );
  }
  if (SELECTOR_KEYWORDS.has(name.toUpperCase())) {
    throw new InvalidArgumentError(
      `property name '${name}' is a selector keyword and cannot name a property`,
    );
  }
  if (name.startsWith('JMS') && !CLIENT_SETTABLE_JMSX.has(name)) {
    throw new InvalidArgumentError(
      `property name '${name}' is reserved: names starting with 'JMS' belong to the provider (except 'JMSXGroupID' and 'JMSXGroupSeq')`,
    );
  }
}

/** A message with headers and properties and no body. The base of every message type. */
export class Message {
  #messageId: string | null = null;
  /**
   * Set instead of the id by a send: the id is this prefix and {@link #messageIdSeq} in base 36,
   * built when first read, since most messages never have their id read.
   */
  #messageIdPrefix: string | null = null;
  #messageIdSeq = 0;
  #timestamp = 0;
  #correlationId: string | null = null;
  #replyTo: Destination | null = null;
  #destination: Destination | null = null;
  #deliveryMode: DeliveryModeValue = DeliveryMode.PERSISTENT;
  #redelivered = false;
  #type: string | null = null;
  #expiration = 0;
  #priority = DEFAULT_PRIORITY;
  #deliveryTime = 0;
  /** Copy-on-write: a delivered copy shares its sender's map until someone writes. */
  /** Starts as the shared empty map: a message that never gets a property (or is a copy) never builds one. */
  #properties = NO_PROPERTIES as Map<string, TypedValue>;
  #propertiesShared = true;
  #propertiesReadOnly = false;
  /** JMSXDeliveryCount: provider-owned, per delivery (MSG-2). 0 until first delivered. */
  #deliveryCount = 0;
  /** @internal Read-only flag for the body, set on receipt. */
  protected bodyReadOnly = false;
  /**
   * @internal A parsed form of the body kept for selectors (SEL-4: parse at most once per message).
   * Subclasses reset it whenever the body changes.
   */
  parsedBodyCache: unknown = undefined;

  /** The body type, for bridges and the store. */
  get bodyType(): BodyType {
    return 'empty';
  }

  // --- headers (MSG-1) ---

  getJMSMessageID(): string | null {
    if (this.#messageIdPrefix !== null) {
      this.#messageId = this.#messageIdPrefix + this.#messageIdSeq.toString(36);
      this.#messageIdPrefix = null;
    }
    return this.#messageId;
  }
  setJMSMessageID(id: string | null): void {
    this.#messageId = id;
    this.#messageIdPrefix = null;
  }
  /** @internal Sets the id a send gives it, `prefix` and `seq` in base 36, without building it yet (MSG-1). */
  setGeneratedMessageID(prefix: string, seq: number): void {
    this.#messageId = null;
    this.#messageIdPrefix = prefix;
    this.#messageIdSeq = seq;
  }
  /**
   * @internal The prefix of its id when the id is that prefix and `seq` in base 36 and not yet
   * built; null otherwise. A record of the message can then keep the prefix alone.
   */
  generatedIdPrefixFor(seq: number): string | null {
    return this.#messageIdPrefix !== null && this.#messageIdSeq === seq ? this.#messageIdPrefix : null;
  }
  getJMSTimestamp(): number {
    return this.#timestamp;
  }
  setJMSTimestamp(timestamp: number): void {
    this.#timestamp = timestamp;
  }
  getJMSCorrelationID(): string | null {
    return this.#correlationId;
  }
  setJMSCorrelationID(id: string | null): void {
    this.#correlationId = id;
  }
  getJMSReplyTo(): Destination | null {
    return this.#replyTo;
  }
  setJMSReplyTo(replyTo: Destination | null): void {
    this.#replyTo = replyTo;
  }
  getJMSDestination(): Destination | null {
    return this.#destination;
  }
  setJMSDestination(destination: Destination | null): void {
    this.#destination = destination;
  }
  getJMSDeliveryMode(): DeliveryModeValue {
    return this.#deliveryMode;
  }
  setJMSDeliveryMode(mode: DeliveryModeValue): void {
    checkDeliveryMode(mode);
    this.#deliveryMode = mode;
  }
  getJMSRedelivered(): boolean {
    return this.#redelivered;
  }
  setJMSRedelivered(redelivered: boolean): void {
    this.#redelivered = redelivered;
  }
  getJMSType(): string | null {
    return this.#type;
  }
  setJMSType(type: string | null): void {
    this.#type = type;
  }
  /** Absolute expiry time in epoch ms; 0 means never (MSG-1). */
  getJMSExpiration(): number {
    return this.#expiration;
  }
  setJMSExpiration(expiration: number): void {
    this.#expiration = expiration;
  }
  getJMSPriority(): number {
    return this.#priority;
  }
  setJMSPriority(priority: number): void {
    checkPriority(priority);
    this.#priority = priority;
  }
  /** Absolute time in epoch ms before which the message is invisible (DLV-5). */
  getJMSDeliveryTime(): number {
    return this.#deliveryTime;
  }
  setJMSDeliveryTime(deliveryTime: number): void {
    this.#deliveryTime = deliveryTime;
  }

  // --- properties (MSG-2, MSG-3) ---

  /** True when the property exists (provider-owned JMSX properties included). */
  propertyExists(name: string): boolean {
    return this.getTypedProperty(name) !== undefined;
  }

  /** Names of all properties, JMSXDeliveryCount included once the message has been delivered. */
  getPropertyNames(): string[] {
    const names = [...this.#properties.keys()];
    if (this.#deliveryCount > 0) names.push('JMSXDeliveryCount');
    return names;
  }

  /** Removes every property and makes them writable again. */
  clearProperties(): void {
    this.#properties = NO_PROPERTIES as Map<string, TypedValue>;
    this.#propertiesShared = true;
    this.#propertiesReadOnly = false;
  }

  /**
   * The stored typed value of a property, provider-owned ones included; `undefined` when absent.
   * Selectors read through this so they see types, not conversions.
   */
  getTypedProperty(name: string): TypedValue | undefined {
    if (name === 'JMSXDeliveryCount') {
      return this.#deliveryCount > 0 ? { type: 'int', value: this.#deliveryCount } : undefined;
    }
    return this.#properties.get(name);
  }

  setBooleanProperty(name: string, value: boolean): void {
    if (typeof value !== 'boolean')
      throw new MessageFormatError(`property '${name}': ${String(value)} is not a boolean`);
    this.#putProperty(name, { type: 'boolean', value });
  }
  setByteProperty(name: string, value: number): void {
    this.#putProperty(name, integerValue('byte', value, `property '${name}'`));
  }
  setShortProperty(name: string, value: number): void {
    this.#putProperty(name, integerValue('short', value, `property '${name}'`));
  }
  setIntProperty(name: string, value: number): void {
    this.#putProperty(name, integerValue('int', value, `property '${name}'`));
  }
  /** Sets a 64-bit long: pass a bigint for values beyond 2^53. */
  setLongProperty(name: string, value: bigint | number): void {
    this.#putProperty(name, longValue(value, `property '${name}'`));
  }
  setFloatProperty(name: string, value: number): void {
    this.#putProperty(name, floatValue(checkNumber(name, value)));
  }
  setDoubleProperty(name: string, value: number): void {
    this.#putProperty(name, { type: 'double', value: checkNumber(name, value) });
  }
  setStringProperty(name: string, value: string): void {
    if (typeof value !== 'string')
      throw new MessageFormatError(`property '${name}': ${String(value)} is not a string`);
    this.#putProperty(name, { type: 'string', value });
  }
  /**
   * Sets a property from a JS value: boolean, string, bigint (long), number (int when an
   * int-range integer, else double), or a `{ type, value }` typed value to choose the type.
   */
  setObjectProperty(name: string, value: unknown): void {
    const typed = fromObject(value, `property '${name}'`);
    if (typed.type === 'char' || typed.type === 'bytes') {
      throw new MessageFormatError(`property '${name}': a ${typed.type} value is not allowed as a property`);
    }
    this.#putProperty(name, typed);
  }

  /** Reads a boolean; a missing property reads as false, as `Boolean.valueOf(null)` does in JMS. */
  getBooleanProperty(name: string): boolean {
    const stored = this.getTypedProperty(name);
    return stored === undefined ? false : asBoolean(stored, `property '${name}'`);
  }
  getByteProperty(name: string): number {
    return asInteger(this.#required(name), 'byte', `property '${name}'`);
  }
  getShortProperty(name: string): number {
    return asInteger(this.#required(name), 'short', `property '${name}'`);
  }
  getIntProperty(name: string): number {
    // The common cases first, without building a typed value or the error text for them.
    if (name === 'JMSXDeliveryCount' && this.#deliveryCount > 0) return this.#deliveryCount;
    const stored = this.#properties.get(name);
    if (stored !== undefined && stored.type === 'int') return stored.value;
    return asInteger(this.#required(name), 'int', `property '${name}'`);
  }
  getLongProperty(name: string): bigint {
    return asLong(this.#required(name), `property '${name}'`);
  }
  getFloatProperty(name: string): number {
    return asFloating(this.#required(name), 'float', `property '${name}'`);
  }
  getDoubleProperty(name: string): number {
    return asFloating(this.#required(name), 'double', `property '${name}'`);
  }
  /** Reads a string; a missing property reads as null. */
  getStringProperty(name: string): string | null {
    const stored = this.getTypedProperty(name);
    if (stored === undefined) return null;
    // A string property, the common case, without building the error text for it.
    return stored.type === 'string' ? stored.value : asString(stored, `property '${name}'`);
  }
  /** The property's value in its JS form (long as bigint), or null when absent. */
  getObjectProperty(name: string): ObjectValue | null {
    return this.getTypedProperty(name)?.value ?? null;
  }

  #required(name: string): TypedValue {
    const stored = this.getTypedProperty(name);
    // JMS reads a missing numeric property as `Integer.valueOf(null)`, a format error.
    if (stored === undefined) throw new MessageFormatError(`property '${name}' does not exist`);
    return stored;
  }

  #putProperty(name: string, value: TypedValue): void {
    if (this.#propertiesReadOnly) {
      throw new MessageNotWriteableError(
        `properties of a received message are read-only; call clearProperties() first (property '${name}')`,
      );
    }
    checkPropertyName(name);
    this.#ownProperties().set(name, value);
  }

  #ownProperties(): Map<string, TypedValue> {
    if (this.#propertiesShared) {
      this.#properties = new Map(this.#properties);
      this.#propertiesShared = false;
    }
    return this.#properties;
  }

  // --- body ---

  /** Empties the body and makes it writable again. */
  clearBody(): void {
    this.bodyReadOnly = false;
    this.parsedBodyCache = undefined;
  }

  /** @internal Throws when the body is read-only (a received message). */
  protected checkBodyWritable(): void {
    if (this.bodyReadOnly)
      throw new MessageNotWriteableError(
        'the body of a received message is read-only; call clearBody() first',
      );
  }

  /** Size of the body in bytes, for statistics and quotas. */
  getBodySize(): number {
    return 0;
  }

  /** Size of properties plus body in bytes (MSG-4): what quotas and statistics count. */
  getSize(): number {
    let size = this.getBodySize();
    // Most messages have no properties: no iterator for them.
    if (this.#properties.size === 0) return size;
    for (const [name, value] of this.#properties) size += name.length + typedValueSize(value);
    return size;
  }

  /** The body as a plain value, for generic code (bridges, the store, the admin API). */
  getBody(): unknown {
    return null;
  }

  /**
   * Acknowledges this message (CLIENT_ACKNOWLEDGE): with policy "All", everything its session has
   * received; with "Previous", this message and those received before it (SES-2). In other modes
   * it does nothing, as in JMS.
   */
  acknowledge(): Promise<void> {
    return this.acknowledger ? this.acknowledger() : Promise.resolve();
  }

  // --- engine internals ---

  /** @internal Set on a delivered copy by its session in CLIENT_ACKNOWLEDGE mode. */
  acknowledger: (() => Promise<void>) | undefined = undefined;

  /** @internal Provider-owned JMSXDeliveryCount. */
  get deliveryCount(): number {
    return this.#deliveryCount;
  }
  /** @internal */
  set deliveryCount(count: number) {
    this.#deliveryCount = count;
  }

  /** @internal Sets a provider-owned property (JMSX, JMS_) without the client-side name checks. */
  setProviderProperty(name: string, value: TypedValue): void {
    this.#ownProperties().set(name, value);
  }

  /** @internal Makes properties and body read-only, as on receipt. */
  markReadOnly(): void {
    this.#propertiesReadOnly = true;
    this.bodyReadOnly = true;
  }

  /** A new empty message of the same type; subclasses override. */
  protected createEmpty(): Message {
    return new Message();
  }

  /** @internal Copies the body into a copy made by {@link copy}; sharing is safe because bodies are replaced, not mutated, once read-only. */
  protected copyBodyInto(_target: this): void {}

  /**
   * @internal A copy with the same headers, properties and body. Properties are shared until
   * either side writes, so copying for every delivery costs little.
   */
  copy(): this {
    const target = this.createEmpty() as this;
    target.#messageId = this.#messageId;
    target.#messageIdPrefix = this.#messageIdPrefix;
    target.#messageIdSeq = this.#messageIdSeq;
    target.#timestamp = this.#timestamp;
    target.#correlationId = this.#correlationId;
    target.#replyTo = this.#replyTo;
    target.#destination = this.#destination;
    target.#deliveryMode = this.#deliveryMode;
    target.#redelivered = this.#redelivered;
    target.#type = this.#type;
    target.#expiration = this.#expiration;
    target.#priority = this.#priority;
    target.#deliveryTime = this.#deliveryTime;
    target.#properties = this.#properties;
    target.#propertiesShared = true;
    this.#propertiesShared = true;
    target.#deliveryCount = this.#deliveryCount;
    target.parsedBodyCache = this.parsedBodyCache;
    this.copyBodyInto(target);
    return target;
  }

  /** Logs and debug output show the id and type, never the body or properties. */
  toString(): string {
    return `${this.constructor.name}(${this.getJMSMessageID() ?? 'no id'})`;
  }
}

function checkNumber(name: string, value: number): number {
  if (typeof value !== 'number')
    throw new MessageFormatError(`property '${name}': ${String(value)} is not a number`);
  return value;
}

/** Checks a JMSPriority: an integer 0-9. */
export function checkPriority(priority: number): void {
  if (!Number.isInteger(priority) || priority < 0 || priority > 9) {
    throw new InvalidArgumentError(
      `priority ${String(priority)} is out of range (expected an integer from 0 to 9)`,
    );
  }
}

/** Checks a JMSDeliveryMode: PERSISTENT (2) or NON_PERSISTENT (1). */
export function checkDeliveryMode(mode: number): asserts mode is DeliveryModeValue {
  if (mode !== DeliveryMode.PERSISTENT && mode !== DeliveryMode.NON_PERSISTENT) {
    throw new InvalidArgumentError(
      `delivery mode ${String(mode)} is not valid (expected DeliveryMode.PERSISTENT (2) or DeliveryMode.NON_PERSISTENT (1))`,
    );
  }
}
