/**
 * The one codec of typed values, used by every form a message takes outside the engine: the
 * wire mappings (`src/spi/message-codec.ts`), the admin/CLI JSON form (`message-json.ts`) and the
 * store (`src/store/message-serializer.ts`). Every form here is lossless: a value reads back with
 * its type (byte, short, int, float and double stay apart), longs keep 64 bits (decimal text),
 * and NaN, ±Infinity and -0 survive (as text, since JSON numbers cannot hold them).
 *
 * Two shapes:
 *
 * - the natural string and a type carried apart ({@link typedToString}, {@link typedFromString}),
 *   for protocols whose metadata is text (AMQP headers for longs, MQTT user properties, Kafka
 *   record headers);
 * - the JSON value ({@link typedToJsonValue}, {@link typedFromJsonValue}) and the typed JSON
 *   object `{"type","value"}` built on it ({@link typedToJson}, {@link typedFromJson}).
 *
 * `docs/mapping.md` documents these formats; keep the two in step. The Java string of a value
 * that a JMS reader gets from `getStringProperty` (`1.0` for a double 1) is another thing: see
 * `javaString` in `typed-value.ts`.
 */
import { MessageFormatError } from '../errors.js';
import type { TypedValue, ValueType } from './typed-value.js';

/** The value types a typed value can carry, as they are written in type tags. */
export const VALUE_TYPES: readonly ValueType[] = [
  'boolean',
  'byte',
  'short',
  'char',
  'int',
  'long',
  'float',
  'double',
  'string',
  'bytes',
];

const INTEGER_BOUNDS = {
  byte: [-128n, 127n],
  short: [-32768n, 32767n],
  int: [-2147483648n, 2147483647n],
  long: [-9223372036854775808n, 9223372036854775807n],
} as const;

const INTEGER_TEXT = /^[+-]?\d+$/;
const FLOATING_TEXT = /^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$/;
/** Strict base64 with padding, as Buffer writes it. */
export const BASE64_TEXT = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** True when `type` names a value type. */
export function isValueType(type: unknown): type is ValueType {
  return typeof type === 'string' && (VALUE_TYPES as readonly string[]).includes(type);
}

function numberText(value: number): string {
  return Object.is(value, -0) ? '-0' : String(value);
}

/** The shortest decimal that reads back as the same 32-bit float: `0.1`, not `0.10000000149011612`. */
function floatText(value: number): string {
  if (!Number.isFinite(value) || value === 0) return numberText(value);
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return String(candidate);
  }
  return String(value);
}

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * A typed value as the natural string a foreign reader expects: `'42'`, `'true'`, `'1.5'`,
 * `'9223372036854775807'`; floats as the shortest decimal that reads back exactly; `'NaN'`,
 * `'Infinity'`, `'-Infinity'`, `'-0'`; bytes as base64. Its type travels separately;
 * {@link typedFromString} reverses it exactly.
 */
export function typedToString(typed: TypedValue): string {
  switch (typed.type) {
    case 'float':
      return floatText(typed.value);
    case 'double':
      return numberText(typed.value);
    case 'bytes':
      return base64Of(typed.value);
    default:
      return String(typed.value);
  }
}

function parseInteger(type: keyof typeof INTEGER_BOUNDS, text: string): bigint {
  if (!INTEGER_TEXT.test(text)) throw new MessageFormatError(`'${text}' is not a ${type}`);
  return checkedInteger(type, BigInt(text), text);
}

function checkedInteger(type: keyof typeof INTEGER_BOUNDS, value: bigint, text: string): bigint {
  const [min, max] = INTEGER_BOUNDS[type];
  if (value < min || value > max) throw new MessageFormatError(`'${text}' is out of range for a ${type}`);
  return value;
}

function parseFloating(type: 'float' | 'double', text: string): number {
  if (!FLOATING_TEXT.test(text)) throw new MessageFormatError(`'${text}' is not a ${type}`);
  const value = Number(text);
  return type === 'float' ? Math.fround(value) : value;
}

/**
 * Reads the natural string of {@link typedToString} back as a value of `type`. Strict: text that
 * is not exactly a value of that type (`'3.5'` as an int, `'yes'` as a boolean, an int out of
 * range) throws a MessageFormatError, so a caller can fall back to a string.
 */
export function typedFromString(type: ValueType, text: string): TypedValue {
  switch (type) {
    case 'boolean': {
      const lower = text.toLowerCase();
      if (lower !== 'true' && lower !== 'false') throw new MessageFormatError(`'${text}' is not a boolean`);
      return { type, value: lower === 'true' };
    }
    case 'byte':
    case 'short':
    case 'int':
      return { type, value: Number(parseInteger(type, text)) };
    case 'long':
      return { type, value: parseInteger('long', text) };
    case 'float':
    case 'double':
      return { type, value: parseFloating(type, text) };
    case 'char':
      if (text.length !== 1) throw new MessageFormatError(`'${text}' is not a single character`);
      return { type, value: text };
    case 'string':
      return { type, value: text };
    case 'bytes':
      if (!BASE64_TEXT.test(text)) throw new MessageFormatError(`'${text}' is not base64`);
      return { type, value: new Uint8Array(Buffer.from(text, 'base64')) };
  }
}

/** The JSON value of a typed value: what {@link typedToJsonValue} writes. */
export type JsonValue = boolean | number | string;

/**
 * The value of a typed value as JSON can hold it exactly: booleans as JSON booleans; byte,
 * short, int as numbers; long as a decimal string (JSON numbers lose precision beyond 2^53 in
 * most readers); float and double as numbers (a float as its shortest decimal), except `NaN`,
 * `Infinity`, `-Infinity` and `-0`, which JSON cannot hold, as those strings; string and char as
 * strings; bytes as base64.
 */
export function typedToJsonValue(typed: TypedValue): JsonValue {
  switch (typed.type) {
    case 'float':
    case 'double': {
      if (!Number.isFinite(typed.value) || Object.is(typed.value, -0)) return numberText(typed.value);
      return typed.type === 'float' ? Number(floatText(typed.value)) : typed.value;
    }
    case 'long':
      return typed.value.toString();
    case 'bytes':
      return base64Of(typed.value);
    default:
      return typed.value;
  }
}

/**
 * Reads a JSON value of {@link typedToJsonValue} back as a value of `type`. Lenient where it
 * costs nothing: numbers may also be given as their text (strictly, as {@link typedFromString}
 * reads it) and safe-integer longs as numbers; anything else throws a MessageFormatError.
 */
export function typedFromJsonValue(type: ValueType, value: unknown): TypedValue {
  if (typeof value === 'string') return typedFromString(type, value);
  switch (type) {
    case 'boolean':
      if (typeof value === 'boolean') return { type, value };
      break;
    case 'byte':
    case 'short':
    case 'int':
      if (Number.isInteger(value)) {
        checkedInteger(type, BigInt(value as number), String(value));
        return { type, value: value as number };
      }
      break;
    case 'long':
      if (typeof value === 'number') {
        if (!Number.isSafeInteger(value))
          throw new MessageFormatError(`${value} is not an exact long (write longs as strings)`);
        return { type, value: BigInt(value) };
      }
      break;
    case 'float':
      if (typeof value === 'number') return { type, value: Math.fround(value) };
      break;
    case 'double':
      if (typeof value === 'number') return { type, value };
      break;
    case 'string':
      if (typeof value === 'number') return { type, value: String(value) };
      break;
    case 'char':
    case 'bytes':
      break;
  }
  throw new MessageFormatError(`${JSON.stringify(value) ?? String(value)} is not a ${type}`);
}

/** A typed value in JSON: `{"type":"int","value":3}`; see {@link typedToJsonValue} for the value. */
export interface JsonTypedValue {
  readonly type: ValueType;
  readonly value: JsonValue;
}

/** The typed JSON form of a value, used for map and stream bodies and envelope properties. */
export function typedToJson(typed: TypedValue): JsonTypedValue {
  return { type: typed.type, value: typedToJsonValue(typed) };
}

/**
 * Reads a {@link JsonTypedValue} back (leniently, as {@link typedFromJsonValue} does); anything
 * else of the wrong shape throws a MessageFormatError naming `what`.
 */
export function typedFromJson(json: unknown, what: string): TypedValue {
  if (typeof json !== 'object' || json === null || !('type' in json) || !('value' in json)) {
    throw new MessageFormatError(`${what} is not a {"type", "value"} object`);
  }
  const { type, value } = json;
  if (!isValueType(type)) throw new MessageFormatError(`${what} has an unknown type '${String(type)}'`);
  try {
    return typedFromJsonValue(type, value);
  } catch (error) {
    throw new MessageFormatError(`${what}: ${(error as Error).message}`, { cause: error });
  }
}
