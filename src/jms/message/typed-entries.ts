/**
 * Readers and writers shared by MapMessage entries and StreamMessage items: both follow the same
 * JMS conversion table as properties, plus `char` and `bytes`.
 */
import { MessageFormatError } from '../errors.js';
import {
  type TypedValue,
  asBoolean,
  asBytes,
  asChar,
  asFloating,
  asInteger,
  asLong,
  asString,
  floatValue,
  integerValue,
  longValue,
} from './typed-value.js';

/** Builds a typed value for a write, checking range and type. */
export const write = {
  boolean(value: boolean, what: string): TypedValue {
    if (typeof value !== 'boolean')
      throw new MessageFormatError(`${what}: ${String(value)} is not a boolean`);
    return { type: 'boolean', value };
  },
  byte: (value: number, what: string) => integerValue('byte', value, what),
  short: (value: number, what: string) => integerValue('short', value, what),
  int: (value: number, what: string) => integerValue('int', value, what),
  long: (value: bigint | number, what: string) => longValue(value, what),
  float: (value: number): TypedValue => floatValue(value),
  double: (value: number): TypedValue => ({ type: 'double', value }),
  char(value: string, what: string): TypedValue {
    if (typeof value !== 'string' || value.length !== 1)
      throw new MessageFormatError(`${what}: '${String(value)}' is not a single character`);
    return { type: 'char', value };
  },
  string: (value: string): TypedValue => ({ type: 'string', value }),
  bytes: (value: Uint8Array): TypedValue => ({
    type: 'bytes',
    value: Uint8Array.prototype.slice.call(value),
  }),
};

/** Reads a typed value as the asked type; a null entry reads as JMS reads `null` of that type. */
export const read = {
  boolean: (v: TypedValue | null, what: string) => (v === null ? false : asBoolean(v, what)),
  byte: (v: TypedValue | null, what: string) => asInteger(required(v, what), 'byte', what),
  short: (v: TypedValue | null, what: string) => asInteger(required(v, what), 'short', what),
  int: (v: TypedValue | null, what: string) => asInteger(required(v, what), 'int', what),
  long: (v: TypedValue | null, what: string) => asLong(required(v, what), what),
  float: (v: TypedValue | null, what: string) => asFloating(required(v, what), 'float', what),
  double: (v: TypedValue | null, what: string) => asFloating(required(v, what), 'double', what),
  char: (v: TypedValue | null, what: string) => asChar(required(v, what), what),
  string: (v: TypedValue | null, what: string) => (v === null ? null : asString(v, what)),
  bytes: (v: TypedValue | null, what: string) => (v === null ? null : asBytes(v, what)),
};

function required(value: TypedValue | null, what: string): TypedValue {
  if (value === null) throw new MessageFormatError(`${what} is null and has no numeric value`);
  return value;
}
