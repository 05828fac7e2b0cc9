/**
 * Runtime values and the three-valued logic of SEL-2.
 *
 * A truth value is `true`, `false` or `null` (UNKNOWN). A value is NULL (`null`), a boolean, a
 * string, a number (int family, float, double) or a bigint (long). Comparisons across number and
 * bigint are exact: JavaScript compares them mathematically, so a long near 2^63 never loses
 * precision against a double. A NULL operand makes a comparison UNKNOWN; values of unlike kinds
 * (string vs number, boolean vs number) compare as FALSE, as JMS says (§3.8.1.2: "if the
 * comparison of non-like type values is attempted, the value of the operation is false"), and so
 * does an ordering (`<`, `>`, ...) of strings or booleans, which JMS does not define. Never an error.
 */
import type { ComparisonOperator } from './ast.js';
import type { Truth } from './truth.js';

/** A selector value. `unknown` because a property may hold bytes, which selectors treat as no known type. */
export type Value = unknown;

/** Compares two values; null (UNKNOWN) when either is NULL, false when the kinds do not compare. */
export type Comparator = (a: Value, b: Value) => Truth;

function isNumeric(value: Value): value is number | bigint {
  const type = typeof value;
  return type === 'number' || type === 'bigint';
}

// `<` on number and bigint mixes is exact in JavaScript; the casts only quiet the type checker.
function lessThan(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  return isNumeric(a) && isNumeric(b) ? (a as number) < (b as number) : false;
}
function greaterThan(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  return isNumeric(a) && isNumeric(b) ? (a as number) > (b as number) : false;
}
function lessOrEqual(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  return isNumeric(a) && isNumeric(b) ? (a as number) <= (b as number) : false;
}
function greaterOrEqual(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  return isNumeric(a) && isNumeric(b) ? (a as number) >= (b as number) : false;
}

/** True for the kinds `=` compares with their own kind; bytes values (objects) compare with nothing. */
function isComparableType(type: string): boolean {
  return type === 'string' || type === 'number' || type === 'bigint' || type === 'boolean';
}

/** Equality: numbers across types, strings and booleans with their own kind only; unlike kinds are FALSE. */
export function equals(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  const type = typeof a;
  if (type === typeof b) return isComparableType(type) ? a === b : false;
  // number == bigint is the exact mathematical comparison (=== would always be false).
  return isNumeric(a) && isNumeric(b) ? a == b : false;
}

/**
 * `<>`: also FALSE for unlike kinds (it is a comparison like the others, not NOT of `=`), so
 * `s <> 5` does not select a message whose `s` is a string. NaN is unequal to everything (Java).
 */
function notEquals(a: Value, b: Value): Truth {
  if (a === null || b === null) return null;
  const type = typeof a;
  if (type === typeof b) return isComparableType(type) ? a !== b : false;
  return isNumeric(a) && isNumeric(b) ? a != b : false;
}

/** The comparator for each operator, chosen once when the selector is compiled. */
export const COMPARATORS: Readonly<Record<ComparisonOperator, Comparator>> = {
  '=': equals,
  '<>': notEquals,
  '<': lessThan,
  '>': greaterThan,
  '<=': lessOrEqual,
  '>=': greaterOrEqual,
};

/** A value in a boolean position: only booleans are truth values; NULL and other kinds are UNKNOWN. */
export function toTruth(value: Value): Truth {
  return value === true ? true : value === false ? false : null;
}

/** SQL NOT: UNKNOWN stays UNKNOWN. */
export function not(value: Truth): Truth {
  return value === null ? null : !value;
}

/**
 * A number as arithmetic sees it: Java's numeric promotion, with every integer type promoted to
 * long (a bigint) so integer arithmetic is exact and `/` divides as integers; float and double stay
 * numbers. Anything else is NULL.
 */
export type ArithmeticValue = bigint | number | null;

const LONG_BITS = 64;

/** `a + b` with long overflow wrapping as Java's does. */
export function add(a: ArithmeticValue, b: ArithmeticValue): ArithmeticValue {
  if (a === null || b === null) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint') return BigInt.asIntN(LONG_BITS, a + b);
  return Number(a) + Number(b);
}

/** `a - b`. */
export function subtract(a: ArithmeticValue, b: ArithmeticValue): ArithmeticValue {
  if (a === null || b === null) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint') return BigInt.asIntN(LONG_BITS, a - b);
  return Number(a) - Number(b);
}

/** `a * b`. */
export function multiply(a: ArithmeticValue, b: ArithmeticValue): ArithmeticValue {
  if (a === null || b === null) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint') return BigInt.asIntN(LONG_BITS, a * b);
  return Number(a) * Number(b);
}

/**
 * `a / b`: integer division truncating toward zero for longs (Java), IEEE division otherwise.
 * An integer division by zero, an ArithmeticException in Java, is NULL here.
 */
export function divide(a: ArithmeticValue, b: ArithmeticValue): ArithmeticValue {
  if (a === null || b === null) return null;
  if (typeof a === 'bigint' && typeof b === 'bigint')
    return b === 0n ? null : BigInt.asIntN(LONG_BITS, a / b);
  return Number(a) / Number(b);
}

/** Unary minus. */
export function negate(a: ArithmeticValue): ArithmeticValue {
  if (a === null) return null;
  return typeof a === 'bigint' ? BigInt.asIntN(LONG_BITS, -a) : -a;
}
