/**
 * Typed values and the JMS conversion table (MSG-3). Properties, map entries and stream items all
 * keep the Java type they were written with, because a JMS reader asks for a type and the table
 * decides whether the stored one converts: an int reads as long or string, a string "5" reads as
 * int, a float never reads as int.
 */
import { MessageFormatError } from '../errors.js';

/** The Java types a typed value can carry. Properties use all but `char` and `bytes`. */
export type ValueType =
  'boolean' | 'byte' | 'short' | 'char' | 'int' | 'long' | 'float' | 'double' | 'string' | 'bytes';

/** One stored value with its type. `long` is a bigint so it keeps 64-bit precision. */
export type TypedValue =
  | { readonly type: 'boolean'; readonly value: boolean }
  | { readonly type: 'byte' | 'short' | 'int' | 'float' | 'double'; readonly value: number }
  | { readonly type: 'char'; readonly value: string }
  | { readonly type: 'long'; readonly value: bigint }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'bytes'; readonly value: Uint8Array };

/** What `getObjectProperty` and friends return: the JS form of a typed value. */
export type ObjectValue = boolean | number | bigint | string | Uint8Array;

const INTEGER_RANGES = {
  byte: [-128n, 127n],
  short: [-32768n, 32767n],
  int: [-2147483648n, 2147483647n],
  long: [-9223372036854775808n, 9223372036854775807n],
} as const;

type IntegerType = keyof typeof INTEGER_RANGES;

/** The integer types a stored type widens to, in JMS's table. */
const WIDENS_TO: Readonly<Record<ValueType, readonly ValueType[]>> = {
  boolean: ['boolean', 'string'],
  byte: ['byte', 'short', 'int', 'long', 'string'],
  short: ['short', 'int', 'long', 'string'],
  char: ['char', 'string'],
  int: ['int', 'long', 'string'],
  long: ['long', 'string'],
  float: ['float', 'double', 'string'],
  double: ['double', 'string'],
  string: ['boolean', 'byte', 'short', 'int', 'long', 'float', 'double', 'string'],
  bytes: ['bytes'],
};

/** Builds a checked integer value; throws when it is not an integer in the type's range. */
export function integerValue(type: 'byte' | 'short' | 'int', value: number, what: string): TypedValue {
  if (!Number.isInteger(value) || !inRange(BigInt(value), type)) {
    const [min, max] = INTEGER_RANGES[type];
    throw new MessageFormatError(
      `${what}: ${String(value)} is not a ${type} (an integer from ${min} to ${max})`,
    );
  }
  return { type, value };
}

/** Builds a long; a number must be a safe integer, a bigint must fit in 64 bits. */
export function longValue(value: bigint | number, what: string): TypedValue {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new MessageFormatError(
        `${what}: ${value} is not a safe integer; pass a bigint for exact 64-bit values`,
      );
    }
    value = BigInt(value);
  }
  if (!inRange(value, 'long'))
    throw new MessageFormatError(`${what}: ${value} does not fit in a 64-bit long`);
  return { type: 'long', value };
}

/** Builds a float, rounded to 32-bit precision as Java stores it. */
export function floatValue(value: number): TypedValue {
  return { type: 'float', value: Math.fround(value) };
}

function inRange(value: bigint, type: IntegerType): boolean {
  const [min, max] = INTEGER_RANGES[type];
  return value >= min && value <= max;
}

function conversionError(what: string, from: ValueType, to: ValueType): MessageFormatError {
  return new MessageFormatError(
    `${what} is a ${from} and cannot be read as ${to === 'string' ? 'a string' : `a ${to}`}`,
  );
}

function checkConvertible(stored: TypedValue, to: ValueType, what: string): void {
  if (!WIDENS_TO[stored.type].includes(to)) throw conversionError(what, stored.type, to);
}

/** Parses a string as Java's `Integer.valueOf` family would; anything else is a format error. */
function parseIntegerString(text: string, to: IntegerType, what: string): bigint {
  if (!/^[+-]?\d+$/.test(text)) throw new MessageFormatError(`${what}: '${text}' is not a ${to}`);
  const parsed = BigInt(text);
  if (!inRange(parsed, to)) throw new MessageFormatError(`${what}: '${text}' is out of range for a ${to}`);
  return parsed;
}

function parseFloatString(text: string, what: string): number {
  const trimmed = text.trim();
  if (!/^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?$/.test(trimmed)) {
    throw new MessageFormatError(`${what}: '${text}' is not a number`);
  }
  return Number(trimmed.replace(/[fFdD]$/, ''));
}

/** Reads a value as a boolean (JMS: boolean or string, `Boolean.valueOf` semantics). */
export function asBoolean(stored: TypedValue, what: string): boolean {
  checkConvertible(stored, 'boolean', what);
  return stored.type === 'boolean' ? stored.value : String(stored.value).toLowerCase() === 'true';
}

/** Reads a value as a byte, short or int, widening or parsing as the table allows. */
export function asInteger(stored: TypedValue, to: 'byte' | 'short' | 'int', what: string): number {
  checkConvertible(stored, to, what);
  if (stored.type === 'string') return Number(parseIntegerString(stored.value, to, what));
  return stored.value as number;
}

/** Reads a value as a long (a bigint). */
export function asLong(stored: TypedValue, what: string): bigint {
  checkConvertible(stored, 'long', what);
  if (stored.type === 'string') return parseIntegerString(stored.value, 'long', what);
  if (stored.type === 'long') return stored.value;
  return BigInt(stored.value as number);
}

/** Reads a value as a float or double. */
export function asFloating(stored: TypedValue, to: 'float' | 'double', what: string): number {
  checkConvertible(stored, to, what);
  if (stored.type === 'string') {
    const parsed = parseFloatString(stored.value, what);
    return to === 'float' ? Math.fround(parsed) : parsed;
  }
  return stored.value as number;
}

/** Reads a value as a string; every type but bytes converts. */
export function asString(stored: TypedValue, what: string): string {
  checkConvertible(stored, 'string', what);
  return javaString(stored);
}

/** Reads a value as a char (a one-character string); only chars convert. */
export function asChar(stored: TypedValue, what: string): string {
  checkConvertible(stored, 'char', what);
  return stored.value as string;
}

/** Reads a value as bytes; only bytes convert. */
export function asBytes(stored: TypedValue, what: string): Uint8Array {
  checkConvertible(stored, 'bytes', what);
  return stored.value as Uint8Array;
}

/**
 * The string a JMS reader gets from `getStringProperty` and friends: Java's `Double.toString`
 * style for floating types (`1.0` for a double 1), as a Java provider answers. Not a codec: the
 * lossless text that travels is `typedToString` in `typed-value-codec.ts`.
 */
export function javaString(stored: TypedValue): string {
  switch (stored.type) {
    case 'float':
    case 'double':
      return javaFloatingString(stored.value);
    case 'bytes':
      return Buffer.from(stored.value).toString('base64');
    default:
      return String(stored.value);
  }
}

function javaFloatingString(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e7) return `${value}.0`;
  return String(value);
}

/**
 * Infers a typed value from a plain JS value, as `setObjectProperty` does: booleans, strings,
 * bigints (long) and numbers (int when it is an int-range integer, else double). Typed wrappers
 * are taken as they are.
 */
export function fromObject(value: unknown, what: string): TypedValue {
  if (isTypedValue(value)) return checkedTyped(value, what);
  switch (typeof value) {
    case 'boolean':
      return { type: 'boolean', value };
    case 'string':
      return { type: 'string', value };
    case 'bigint':
      return longValue(value, what);
    case 'number':
      return Number.isInteger(value) && inRange(BigInt(value), 'int')
        ? { type: 'int', value }
        : { type: 'double', value };
    default:
      if (value instanceof Uint8Array) return { type: 'bytes', value };
      throw new MessageFormatError(
        `${what}: a ${describe(value)} is not a valid value (use boolean, number, bigint or string)`,
      );
  }
}

/** A typed value given by a caller, checked as the typed setters check it (range, rounding, type). */
function checkedTyped(typed: TypedValue, what: string): TypedValue {
  const value = typed.value as unknown;
  const mismatch = () =>
    new MessageFormatError(`${what}: ${String(value)} is not a valid ${typed.type} value`);
  switch (typed.type) {
    case 'byte':
    case 'short':
    case 'int':
      if (typeof value !== 'number') throw mismatch();
      return integerValue(typed.type, value, what);
    case 'long':
      if (typeof value !== 'bigint' && typeof value !== 'number') throw mismatch();
      return longValue(value, what);
    case 'float':
      if (typeof value !== 'number') throw mismatch();
      return floatValue(value);
    case 'double':
      if (typeof value !== 'number') throw mismatch();
      return typed;
    case 'boolean':
      if (typeof value !== 'boolean') throw mismatch();
      return typed;
    case 'string':
      if (typeof value !== 'string') throw mismatch();
      return typed;
    case 'char':
      if (typeof value !== 'string' || value.length !== 1) throw mismatch();
      return typed;
    case 'bytes':
      if (!(value instanceof Uint8Array)) throw mismatch();
      return typed;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function isTypedValue(value: unknown): value is TypedValue {
  return (
    typeof value === 'object' &&
    value !== null &&
    'type' in value &&
    'value' in value &&
    typeof (value as { type: unknown }).type === 'string' &&
    (value as { type: string }).type in WIDENS_TO
  );
}

/** Approximate encoded size of a value, for statistics and quotas (MSG-4). */
export function typedValueSize(stored: TypedValue): number {
  switch (stored.type) {
    case 'boolean':
    case 'byte':
      return 1;
    case 'short':
    case 'char':
      return 2;
    case 'int':
    case 'float':
      return 4;
    case 'long':
    case 'double':
      return 8;
    case 'string':
      return Buffer.byteLength(stored.value);
    case 'bytes':
      return stored.value.byteLength;
  }
}
