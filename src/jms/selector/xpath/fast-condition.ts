/**
 * The boolean XPath forms of the Artemis `XPATH '...'` selector, answered on the element tape
 * like the simple paths of fast-path.ts, so that `XPATH '/a/b = ''x'''` costs what
 * `JMS_BEA_SELECT('xpath', '/a/b') = 'x'` costs:
 *
 * - a simple path, tested for a node (`boolean(path)` too);
 * - a simple path compared with a string or number literal (`=`, `!=`, `<`, `<=`, `>`, `>=`, the
 *   literal on either side);
 * - `not(...)`, `true()`, `false()`, `and`, `or` and parentheses around those.
 *
 * The answers are XPath 1.0's (section 3.4): a comparison of a node-set is true when it holds for
 * ANY node, so `path != 'x'` is true when some node differs (and false for an empty node-set, as
 * `path = 'x'` is); `=` and `!=` with a string compare string-values exactly (white space
 * included); with a number, or for `<`, `<=`, `>`, `>=`, both sides are numbers, a string being
 * converted by XPath's number() (optional XML white space, an optional minus, digits with an
 * optional point; anything else is NaN, and NaN compares false except for `!=`). Anything else
 * returns null from {@link compileFastCondition} and goes to xpath.js, which validated the syntax
 * before this is asked.
 */
import { compileFastPath, stringValue, type FastPath, type SelectedNode } from './fast-path.js';
import { RECORD, type XmlDocument } from './xml-document.js';

type Operator = '=' | '!=' | '<' | '<=' | '>' | '>=';

type Condition =
  | { readonly kind: 'constant'; readonly value: boolean }
  | { readonly kind: 'exists'; readonly path: FastPath }
  | {
      readonly kind: 'compare';
      readonly path: FastPath;
      /** The operator with the path on its left. */
      readonly operator: Operator;
      readonly literal: string | number;
    }
  | { readonly kind: 'not'; readonly operand: Condition }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition };

/** What a primary expression is, before it is used as a condition or compared. */
type Operand =
  | { readonly kind: 'path'; readonly path: FastPath }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'condition'; readonly condition: Condition };

/** Thrown while compiling when the expression is not one of the forms; caught in compileFastCondition. */
const NOT_FAST = Symbol('not a fast-path condition');
function notFast(): never {
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught below.
  throw NOT_FAST;
}

/** Told that the string-values compared on one body would cost more than the body's size allows. */
export const OVER_BUDGET = Symbol('fast-path comparison over budget');

/** A compiled boolean expression. */
export interface FastCondition {
  /** True when the expression's value is a boolean; false for a path (its value is a node-set, whose string is not "true"). */
  readonly yieldsBoolean: boolean;
  /** XPath's boolean() of the expression on the document; {@link OVER_BUDGET} when it would take too long. */
  test(document: XmlDocument, maxSteps: number): boolean | typeof OVER_BUDGET;
}

/** Compiles `expression` (valid XPath 1.0) when it is one of the boolean forms; null otherwise. */
export function compileFastCondition(expression: string): FastCondition | null {
  try {
    const parser = new ConditionParser(expression);
    const operand = parser.parseOr();
    parser.expectEnd();
    return new CompiledCondition(asCondition(operand), operand.kind === 'condition');
  } catch (error) {
    if (error === NOT_FAST) return null;
    throw error;
  }
}

function asCondition(operand: Operand): Condition {
  if (operand.kind === 'path') return { kind: 'exists', path: operand.path };
  if (operand.kind === 'condition') return operand.condition;
  // boolean() of a literal is known without the body; rare enough to leave to xpath.js.
  return notFast();
}

const WHITE_SPACE = /[\x20\t\r\n]/;
const NAME_CHAR = /[A-Za-z0-9_.\-\u00b7\u00c0-\uffff]/;
/** Where a path ends at bracket and parenthesis depth 0. */
const PATH_END = /[\x20\t\r\n=!<>)|,+]/;
const NUMBER = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)/;
const FLIPPED: Record<Operator, Operator> = {
  '=': '=',
  '!=': '!=',
  '<': '>',
  '<=': '>=',
  '>': '<',
  '>=': '<=',
};

/** A recursive-descent reader of the supported forms, with XPath 1.0's precedence: or, and, comparison. */
class ConditionParser {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  parseOr(): Operand {
    let left = this.#parseAnd();
    while (this.#keyword('or')) left = this.#combine('or', left, this.#parseAnd());
    return left;
  }

  expectEnd(): void {
    this.#skipSpace();
    if (this.#at !== this.#text.length) notFast();
  }

  #parseAnd(): Operand {
    let left = this.#parseComparison();
    while (this.#keyword('and')) left = this.#combine('and', left, this.#parseComparison());
    return left;
  }

  #combine(kind: 'and' | 'or', left: Operand, right: Operand): Operand {
    return { kind: 'condition', condition: { kind, left: asCondition(left), right: asCondition(right) } };
  }

  #parseComparison(): Operand {
    const left = this.#parsePrimary();
    const operator = this.#operator();
    if (operator === null) return left;
    const right = this.#parsePrimary();
    // A chained comparison compares a boolean: left to xpath.js.
    if (this.#operator() !== null) notFast();
    if (left.kind === 'path' && (right.kind === 'string' || right.kind === 'number'))
      return compare(left.path, operator, right.value);
    if (right.kind === 'path' && (left.kind === 'string' || left.kind === 'number'))
      return compare(right.path, FLIPPED[operator], left.value);
    return notFast();
  }

  #operator(): Operator | null {
    this.#skipSpace();
    const text = this.#text;
    const c = text[this.#at];
    if (c === '!' && text[this.#at + 1] === '=') {
      this.#at += 2;
      return '!=';
    }
    if (c === '<' || c === '>') {
      const withEquals = text[this.#at + 1] === '=';
      this.#at += withEquals ? 2 : 1;
      return withEquals ? `${c}=` : c;
    }
    if (c === '=') {
      this.#at += 1;
      return '=';
    }
    return null;
  }

  #parsePrimary(): Operand {
    this.#skipSpace();
    const text = this.#text;
    const c = text[this.#at];
    if (c === undefined) return notFast();
    if (c === '"' || c === "'") {
      const close = text.indexOf(c, this.#at + 1);
      if (close < 0) notFast();
      const value = text.slice(this.#at + 1, close);
      this.#at = close + 1;
      return { kind: 'string', value };
    }
    if (c === '-') {
      this.#at += 1;
      this.#skipSpace();
      const number = this.#number();
      return number === null ? notFast() : { kind: 'number', value: -number };
    }
    const number = this.#number();
    if (number !== null) return { kind: 'number', value: number };
    if (c === '(') {
      this.#at += 1;
      const inner = this.parseOr();
      this.#expect(')');
      this.#noFilter();
      return inner;
    }
    const call = /^(not|boolean|true|false)[\x20\t\r\n]*\(/.exec(text.slice(this.#at));
    if (call) {
      this.#at += call[0].length;
      const name = call[1]!;
      if (name === 'true' || name === 'false') {
        this.#expect(')');
        this.#noFilter();
        return { kind: 'condition', condition: { kind: 'constant', value: name === 'true' } };
      }
      const operand = asCondition(this.parseOr());
      this.#expect(')');
      this.#noFilter();
      const condition: Condition = name === 'not' ? { kind: 'not', operand } : operand;
      return { kind: 'condition', condition };
    }
    return { kind: 'path', path: this.#path() };
  }

  /** A number literal at the cursor, or null. */
  #number(): number | null {
    const match = NUMBER.exec(this.#text.slice(this.#at));
    if (!match) return null;
    this.#at += match[0].length;
    return Number(match[0]);
  }

  /** Reads a path up to the first operator or white space outside brackets, and compiles it. */
  #path(): FastPath {
    const text = this.#text;
    const start = this.#at;
    let depth = 0;
    let i = start;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '"' || c === "'") {
        i = text.indexOf(c, i + 1);
        if (i < 0) notFast();
      } else if (c === '[' || c === '(') {
        depth++;
      } else if (c === ']' || c === ')') {
        if (depth === 0) break;
        depth--;
      } else if (depth === 0 && PATH_END.test(c)) {
        break;
      }
    }
    this.#at = i;
    return compileFastPath(text.slice(start, i)) ?? notFast();
  }

  #keyword(word: string): boolean {
    this.#skipSpace();
    const text = this.#text;
    if (!text.startsWith(word, this.#at)) return false;
    const after = text[this.#at + word.length];
    if (after !== undefined && NAME_CHAR.test(after)) return false;
    this.#at += word.length;
    return true;
  }

  #expect(c: string): void {
    this.#skipSpace();
    if (this.#text[this.#at] !== c) notFast();
    this.#at += 1;
  }

  /** A predicate or a path after `(...)` makes a filter expression: not one of the forms. */
  #noFilter(): void {
    this.#skipSpace();
    const c = this.#text[this.#at];
    if (c === '[' || c === '/') notFast();
  }

  #skipSpace(): void {
    while (this.#at < this.#text.length && WHITE_SPACE.test(this.#text[this.#at]!)) this.#at++;
  }
}

function compare(path: FastPath, operator: Operator, literal: string | number): Operand {
  // Only = and != compare strings as strings; everything else compares numbers.
  const value =
    typeof literal === 'string' && operator !== '=' && operator !== '!=' ? xpathNumber(literal) : literal;
  return { kind: 'condition', condition: { kind: 'compare', path, operator, literal: value } };
}

/** A string number() reads (XPath 1.0, section 4.4); anything else is NaN. */
export const XPATH_NUMBER = /^[\x20\t\r\n]*-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[\x20\t\r\n]*$/;

/** XPath 1.0's number() of a string: NaN unless it is a decimal number, surrounded by XML white space at most. */
export function xpathNumber(value: string): number {
  return XPATH_NUMBER.test(value) ? parseFloat(value) : NaN;
}

function holds(operator: Operator, left: string | number, right: string | number): boolean {
  switch (operator) {
    case '=':
      return left === right;
    case '!=':
      return left !== right;
    case '<':
      return left < right;
    case '<=':
      return left <= right;
    case '>':
      return left > right;
    case '>=':
      return left >= right;
  }
}

class CompiledCondition implements FastCondition {
  readonly #condition: Condition;

  constructor(
    condition: Condition,
    readonly yieldsBoolean: boolean,
  ) {
    this.#condition = condition;
  }

  test(document: XmlDocument, maxSteps: number): boolean | typeof OVER_BUDGET {
    const budget = { left: document.tape.length / RECORD + maxSteps };
    try {
      return evaluate(this.#condition, document, budget);
    } catch (error) {
      if (error === OVER_BUDGET) return OVER_BUDGET;
      throw error;
    }
  }
}

/**
 * The string-value of an element is all the text below it, so comparing every element of a deep
 * body (`//* = 'x'`) would cost the square of the body. Each value taken is charged the number of
 * elements below it against a budget of the body's elements plus `maxSteps`: real bodies never
 * come near it, a hostile one is answered as over `maxSteps`, like an xpath.js evaluation.
 */
function charge(document: XmlDocument, node: SelectedNode, budget: { left: number }): void {
  if (typeof node === 'string') return;
  budget.left -= (document.tape[node + 5]! - node) / RECORD - 1;
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught in test().
  if (budget.left < 0) throw OVER_BUDGET;
}

function evaluate(condition: Condition, document: XmlDocument, budget: { left: number }): boolean {
  switch (condition.kind) {
    case 'constant':
      return condition.value;
    case 'exists':
      return condition.path.first(document) !== undefined;
    case 'not':
      return !evaluate(condition.operand, document, budget);
    case 'and':
      return evaluate(condition.left, document, budget) && evaluate(condition.right, document, budget);
    case 'or':
      return evaluate(condition.left, document, budget) || evaluate(condition.right, document, budget);
    case 'compare': {
      const { operator, literal } = condition;
      const numeric = typeof literal === 'number';
      return condition.path.some(document, (node) => {
        charge(document, node, budget);
        const value = stringValue(document, node);
        return holds(operator, numeric ? xpathNumber(value) : value, literal);
      });
    }
  }
}
