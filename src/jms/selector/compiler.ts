/**
 * Compiles a selector tree into closures, once, when the selector is created. Matching then runs
 * only those closures: no tree walk, no operator switch, and for the common shapes (a header or
 * property against a literal) a single closure that reads the value and compares it inline,
 * without allocating.
 *
 * Three closure shapes:
 * - a condition returns TRUE, FALSE or UNKNOWN (`true`, `false`, `null`);
 * - a value returns what comparisons see: NULL, boolean, string, number (int family, float,
 *   double) or bigint (long), as the message stores it;
 * - an arithmetic operand returns a bigint for every integer type (promoted to long, so integer
 *   arithmetic is exact and `/` truncates) or a number for float and double.
 */
import type { Message } from '../message/message.js';
import type { ComparisonOperator, SelectorNode } from './ast.js';
import { HEADER_FIELDS, type HeaderField } from './header-fields.js';
import { compileLike } from './like-pattern.js';
import {
  COMPARATORS,
  add,
  divide,
  multiply,
  negate,
  subtract,
  toTruth,
  type ArithmeticValue,
  type Value,
} from './values.js';
import type { Truth } from './truth.js';

/** A compiled condition. */
export type Condition = (message: Message) => Truth;
/** A compiled value. */
export type Evaluator = (message: Message) => Value;
type Arithmetic = (message: Message) => ArithmeticValue;

const alwaysNull = (): null => null;

/** Compiles a node in a boolean position. */
export function compileCondition(node: SelectorNode): Condition {
  switch (node.kind) {
    case 'literal': {
      const value = toTruth(node.value);
      return () => value;
    }
    case 'identifier': {
      const header = HEADER_FIELDS.get(node.name);
      if (header) {
        const read = header.read;
        return (message) => toTruth(read(message));
      }
      const name = node.name;
      return (message) => {
        const stored = message.getTypedProperty(name);
        return stored === undefined ? null : toTruth(stored.value);
      };
    }
    case 'xpath-test': {
      const xpath = node.xpath;
      return (message) => xpath.test(message);
    }
    case 'comparison':
      return compileComparison(node.operator, node.left, node.right);
    case 'between':
      return compileBetween(node.negated, node.operand, node.low, node.high);
    case 'in':
      return compileIn(node.negated, node.operand, node.values);
    case 'like':
      return compileLikeCondition(node.negated, node.operand, node.pattern, node.escape);
    case 'is-null':
      return compileIsNull(node.negated, node.operand);
    case 'not': {
      const operand = compileCondition(node.operand);
      return (message) => {
        const value = operand(message);
        return value === null ? null : !value;
      };
    }
    case 'and':
      return compileAnd(node.operands.map(compileCondition));
    case 'or':
      return compileOr(node.operands.map(compileCondition));
    case 'xpath-select':
    case 'negate':
    case 'arithmetic':
      // The parser refuses these as conditions; a string or number is never a truth value.
      return alwaysNull;
  }
}

/** Compiles a node as a value, as comparisons and IS NULL see it. */
export function compileValue(node: SelectorNode): Evaluator {
  switch (node.kind) {
    case 'literal': {
      const value = typeof node.value === 'bigint' ? compactLong(node.value) : node.value;
      return () => value;
    }
    case 'identifier': {
      const header = HEADER_FIELDS.get(node.name);
      if (header) return header.read;
      const name = node.name;
      return (message) => {
        const stored = message.getTypedProperty(name);
        return stored === undefined ? null : stored.value;
      };
    }
    case 'xpath-select': {
      const xpath = node.xpath;
      return (message) => xpath.selectString(message);
    }
    case 'negate':
    case 'arithmetic':
      return compileArithmetic(node);
    default:
      return compileCondition(node);
  }
}

/** An exact literal as comparisons see it: a plain number when that is exact, else the bigint. */
function compactLong(value: bigint): number | bigint {
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : value;
}

// --- arithmetic ---

const ARITHMETIC = { '+': add, '-': subtract, '*': multiply, '/': divide } as const;

function compileArithmetic(node: SelectorNode): Arithmetic {
  switch (node.kind) {
    case 'literal': {
      const value = typeof node.value === 'bigint' || typeof node.value === 'number' ? node.value : null;
      return () => value;
    }
    case 'identifier': {
      const header = HEADER_FIELDS.get(node.name);
      if (header) {
        const read = header.read;
        // Number headers are Java ints and longs: integers, so they promote to long.
        return header.kind === 'number' ? (message) => toLong(read(message) as number) : alwaysNull;
      }
      const name = node.name;
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        switch (stored.type) {
          case 'byte':
          case 'short':
          case 'int':
            return toLong(stored.value);
          case 'long':
          case 'float':
          case 'double':
            return stored.value;
          default:
            // Strings are not numbers in selectors, even "5" (JMS: no conversions).
            return null;
        }
      };
    }
    case 'negate': {
      const operand = compileArithmetic(node.operand);
      return (message) => negate(operand(message));
    }
    case 'arithmetic': {
      const operation = ARITHMETIC[node.operator];
      const left = compileArithmetic(node.left);
      const right = compileArithmetic(node.right);
      return (message) => operation(left(message), right(message));
    }
    default:
      return alwaysNull;
  }
}

/**
 * An integer-typed number promoted to long. The message model checks ints, but a value that is
 * not an integer after all (a header set to 1.5) is kept as a double rather than throwing.
 */
function toLong(value: number): bigint | number {
  return Number.isSafeInteger(value) ? BigInt(value) : value;
}

// --- comparisons ---

/** How an operand can be read without the generic value closure, for the specialised shapes. */
type Reader =
  | { readonly kind: 'property'; readonly name: string }
  | { readonly kind: 'number'; readonly read: (message: Message) => number }
  | { readonly kind: 'string'; readonly read: (message: Message) => string | null };

function readerOf(node: SelectorNode): Reader | null {
  if (node.kind === 'identifier') {
    const header: HeaderField | undefined = HEADER_FIELDS.get(node.name);
    if (!header) return { kind: 'property', name: node.name };
    if (header.kind === 'number')
      return { kind: 'number', read: header.read as (message: Message) => number };
    if (header.kind === 'string')
      return { kind: 'string', read: header.read as (message: Message) => string | null };
    return null;
  }
  if (node.kind === 'xpath-select') {
    const xpath = node.xpath;
    return { kind: 'string', read: (message) => xpath.selectString(message) };
  }
  return null;
}

/** `5 < x` is `x > 5`: the constant goes right so one set of specialised closures serves both. */
const MIRRORED: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  '=': '=',
  '<>': '<>',
  '<': '>',
  '>': '<',
  '<=': '>=',
  '>=': '<=',
};

function compileComparison(operator: ComparisonOperator, left: SelectorNode, right: SelectorNode): Condition {
  if (right.kind === 'literal' && left.kind !== 'literal') {
    const special = compileAgainstConstant(operator, left, right.value);
    if (special) return special;
  } else if (left.kind === 'literal' && right.kind !== 'literal') {
    const special = compileAgainstConstant(MIRRORED[operator], right, left.value);
    if (special) return special;
  }
  const compare = COMPARATORS[operator];
  const leftValue = compileValue(left);
  const rightValue = compileValue(right);
  return (message) => compare(leftValue(message), rightValue(message));
}

function compileAgainstConstant(
  operator: ComparisonOperator,
  node: SelectorNode,
  constant: unknown,
): Condition | null {
  const reader = readerOf(node);
  if (reader === null || constant === null) return null;
  const value = typeof constant === 'bigint' ? compactLong(constant) : constant;
  if (typeof value === 'number') return numberAgainstConstant(operator, reader, value);
  if (typeof value === 'string' && (operator === '=' || operator === '<>')) {
    return stringAgainstConstant(operator === '=', reader, value);
  }
  return null;
}

function numberAgainstConstant(
  operator: ComparisonOperator,
  reader: Reader,
  constant: number,
): Condition | null {
  if (reader.kind === 'string') return null;
  const slow = COMPARATORS[operator];
  if (reader.kind === 'number') {
    const read = reader.read;
    switch (operator) {
      case '=':
        return (message) => read(message) === constant;
      case '<>':
        return (message) => read(message) !== constant;
      case '<':
        return (message) => read(message) < constant;
      case '>':
        return (message) => read(message) > constant;
      case '<=':
        return (message) => read(message) <= constant;
      case '>=':
        return (message) => read(message) >= constant;
    }
  }
  const name = reader.name;
  // Each operator gets its own closure so the comparison is inline; values that are not plain
  // numbers (longs, strings, booleans) take the general comparator.
  switch (operator) {
    case '=':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value === constant : slow(value, constant);
      };
    case '<>':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value !== constant : slow(value, constant);
      };
    case '<':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value < constant : slow(value, constant);
      };
    case '>':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value > constant : slow(value, constant);
      };
    case '<=':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value <= constant : slow(value, constant);
      };
    case '>=':
      return (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value >= constant : slow(value, constant);
      };
  }
}

function stringAgainstConstant(equal: boolean, reader: Reader, constant: string): Condition | null {
  if (reader.kind === 'number') return null;
  if (reader.kind === 'string') {
    const read = reader.read;
    return equal
      ? (message) => {
          const value = read(message);
          return value === null ? null : value === constant;
        }
      : (message) => {
          const value = read(message);
          return value === null ? null : value !== constant;
        };
  }
  const name = reader.name;
  return equal
    ? (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        // Unlike kinds compare as FALSE, for `<>` too (values.ts).
        return typeof value === 'string' ? value === constant : false;
      }
    : (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'string' ? value !== constant : false;
      };
}

// --- predicates ---

function and3(a: Truth, b: Truth): Truth {
  return a === false || b === false ? false : a === true && b === true ? true : null;
}

function or3(a: Truth, b: Truth): Truth {
  return a === true || b === true ? true : a === false && b === false ? false : null;
}

/**
 * `x BETWEEN a AND b` is `x >= a AND x <= b`, and `x NOT BETWEEN a AND b` is `x < a OR x > b`,
 * exactly as JMS defines them (the two differ from NOT(...) only for NaN).
 */
function compileBetween(
  negated: boolean,
  operand: SelectorNode,
  low: SelectorNode,
  high: SelectorNode,
): Condition {
  const reader = readerOf(operand);
  if (reader !== null && reader.kind !== 'string' && low.kind === 'literal' && high.kind === 'literal') {
    const lowValue = typeof low.value === 'bigint' ? compactLong(low.value) : low.value;
    const highValue = typeof high.value === 'bigint' ? compactLong(high.value) : high.value;
    if (typeof lowValue === 'number' && typeof highValue === 'number') {
      return betweenConstants(negated, reader, lowValue, highValue);
    }
  }
  const value = compileValue(operand);
  const lowBound = compileValue(low);
  const highBound = compileValue(high);
  const [first, second, combine] = negated
    ? [COMPARATORS['<'], COMPARATORS['>'], or3]
    : [COMPARATORS['>='], COMPARATORS['<='], and3];
  return (message) => {
    const x = value(message);
    return combine(first(x, lowBound(message)), second(x, highBound(message)));
  };
}

function betweenConstants(
  negated: boolean,
  reader: Exclude<Reader, { kind: 'string' }>,
  low: number,
  high: number,
): Condition {
  const slow = (value: Value): Truth =>
    negated
      ? or3(COMPARATORS['<'](value, low), COMPARATORS['>'](value, high))
      : and3(COMPARATORS['>='](value, low), COMPARATORS['<='](value, high));
  if (reader.kind === 'number') {
    const read = reader.read;
    return negated
      ? (message) => {
          const value = read(message);
          return value < low || value > high;
        }
      : (message) => {
          const value = read(message);
          return value >= low && value <= high;
        };
  }
  const name = reader.name;
  return negated
    ? (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value < low || value > high : slow(value);
      }
    : (message) => {
        const stored = message.getTypedProperty(name);
        if (stored === undefined) return null;
        const value = stored.value;
        return typeof value === 'number' ? value >= low && value <= high : slow(value);
      };
}

/**
 * IN holds string literals only (JMS). `x IN (a, b)` is `x = a OR x = b`, so a NULL operand is
 * UNKNOWN and one of another kind is FALSE; `x NOT IN (...)` is `NOT (x IN (...))`, so TRUE for
 * another kind (JMS §3.8.1.2 defines both forms this way).
 */
function compileIn(negated: boolean, operand: SelectorNode, values: readonly string[]): Condition {
  const value = compileValue(operand);
  const set = new Set(values);
  return negated
    ? (message) => {
        const x = value(message);
        return x === null ? null : typeof x !== 'string' || !set.has(x);
      }
    : (message) => {
        const x = value(message);
        return x === null ? null : typeof x === 'string' && set.has(x);
      };
}

/**
 * LIKE compares a string with a pattern: a NULL operand is UNKNOWN, one of another kind is FALSE
 * (a comparison of unlike kinds), and NOT LIKE is the negation of LIKE, so TRUE for it.
 */
function compileLikeCondition(
  negated: boolean,
  operand: SelectorNode,
  pattern: string,
  escape: string | null,
): Condition {
  const value = compileValue(operand);
  const test = compileLike(pattern, escape);
  return negated
    ? (message) => {
        const x = value(message);
        return x === null ? null : typeof x !== 'string' || !test(x);
      }
    : (message) => {
        const x = value(message);
        return x === null ? null : typeof x === 'string' && test(x);
      };
}

function compileIsNull(negated: boolean, operand: SelectorNode): Condition {
  if (operand.kind === 'identifier' && !HEADER_FIELDS.has(operand.name)) {
    const name = operand.name;
    // A property is NULL exactly when it does not exist; no need to read its value.
    return negated
      ? (message) => message.getTypedProperty(name) !== undefined
      : (message) => message.getTypedProperty(name) === undefined;
  }
  const value = compileValue(operand);
  return negated ? (message) => value(message) !== null : (message) => value(message) === null;
}

/** n-ary AND, left to right, stopping at the first FALSE. */
function compileAnd(operands: readonly Condition[]): Condition {
  if (operands.length === 2) {
    const [first, second] = operands as [Condition, Condition];
    return (message) => {
      const a = first(message);
      if (a === false) return false;
      const b = second(message);
      if (b === false) return false;
      return a === null || b === null ? null : true;
    };
  }
  if (operands.length === 3) {
    const [first, second, third] = operands as [Condition, Condition, Condition];
    return (message) => {
      const a = first(message);
      if (a === false) return false;
      const b = second(message);
      if (b === false) return false;
      const c = third(message);
      if (c === false) return false;
      return a === null || b === null || c === null ? null : true;
    };
  }
  return (message) => {
    let unknown = false;
    for (const operand of operands) {
      const value = operand(message);
      if (value === false) return false;
      if (value === null) unknown = true;
    }
    return unknown ? null : true;
  };
}

/** n-ary OR, left to right, stopping at the first TRUE. */
function compileOr(operands: readonly Condition[]): Condition {
  if (operands.length === 2) {
    const [first, second] = operands as [Condition, Condition];
    return (message) => {
      const a = first(message);
      if (a === true) return true;
      const b = second(message);
      if (b === true) return true;
      return a === null || b === null ? null : false;
    };
  }
  return (message) => {
    let unknown = false;
    for (const operand of operands) {
      const value = operand(message);
      if (value === true) return true;
      if (value === null) unknown = true;
    }
    return unknown ? null : false;
  };
}
