/**
 * The selector parser (SEL-1, SEL-5): recursive descent with SQL precedence, lowest first:
 * OR, AND, NOT, then one comparison or predicate (`=`, `<>`, `<`, `>`, `<=`, `>=`, [NOT] BETWEEN,
 * [NOT] IN, [NOT] LIKE, IS [NOT] NULL), then `+ -`, then `* /`, then unary `+ -`, then primaries.
 * Comparisons do not chain (`a < b < c` is an error), as in SQL.
 *
 * Kinds are checked where they are known when the selector is created, so `'a' + 1`,
 * `JMSPriority LIKE 'x'` or `name > 'x'` fail early with a column instead of never matching.
 * Properties have no static kind; their kind mismatches are FALSE at match time (SEL-2). The NULL
 * literal is refused outside IS [NOT] NULL.
 */
import {
  childrenOf,
  type ArithmeticOperator,
  type ComparisonOperator,
  type LiteralValue,
  type SelectorNode,
} from './ast.js';
import { HEADER_FIELDS } from './header-fields.js';
import { compileLike, LikePatternError } from './like-pattern.js';
import { tokenize, type Token } from './lexer.js';
import { selectorError } from './selector-error.js';
import { CompiledXPath, InvalidXPathError } from './xpath/compiled-xpath.js';

/** How deep parentheses, NOT and signs may nest: enough for any real selector, far from the stack limit. */
export const MAX_NESTING = 200;
/** How deep the tree may grow (arithmetic chains add a level per operator); evaluation recurses this deep. */
export const MAX_DEPTH = 500;

type Kind = 'number' | 'string' | 'boolean' | 'any';

const LONG_MAX = (1n << 63n) - 1n;
const UNSIGNED_LONG_MAX = (1n << 64n) - 1n;

/** Parses selector text into a tree; throws InvalidSelectorError naming the column and what was expected. */
export function parseSelectorText(text: string): SelectorNode {
  return new Parser(text).parse();
}

/** The static kind of a node: what it yields whenever it is not NULL. */
function kindOf(node: SelectorNode): Kind {
  switch (node.kind) {
    case 'literal':
      if (node.value === null) return 'any';
      if (typeof node.value === 'string') return 'string';
      return typeof node.value === 'boolean' ? 'boolean' : 'number';
    case 'identifier':
      return HEADER_FIELDS.get(node.name)?.kind ?? 'any';
    case 'xpath-select':
      return 'string';
    case 'negate':
    case 'arithmetic':
      return 'number';
    default:
      return 'boolean';
  }
}

class Parser {
  readonly #text: string;
  readonly #tokens: Token[];
  #position = 0;
  #nesting = 0;
  /** True when the last predicate-level expression was a bare value, so an operator may follow it. */
  #bareValue = false;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = tokenize(text);
  }

  parse(): SelectorNode {
    const root = this.#or();
    const token = this.#peek();
    if (token.kind !== 'end') {
      const options = this.#bareValue
        ? 'an operator (=, <>, <, >, <=, >=, BETWEEN, IN, LIKE, IS), AND, OR or end of selector'
        : 'AND, OR or end of selector';
      const hint =
        isComparison(token) && !this.#bareValue ? ' (comparisons do not chain: join them with AND)' : '';
      const paren = token.kind === 'punctuation' && token.text === ')' ? " (this ')' has no '(')" : '';
      throw this.#expected(options, token, hint + paren);
    }
    this.#requireCondition(root, 'as the selector');
    return root;
  }

  // --- tokens ---

  #peek(offset = 0): Token {
    return this.#tokens[Math.min(this.#position + offset, this.#tokens.length - 1)]!;
  }

  #next(): Token {
    const token = this.#peek();
    if (token.kind !== 'end') this.#position++;
    return token;
  }

  #isKeyword(keyword: string, offset = 0): boolean {
    const token = this.#peek(offset);
    return token.kind === 'keyword' && token.keyword === keyword;
  }

  #isPunctuation(text: string, offset = 0): boolean {
    const token = this.#peek(offset);
    return token.kind === 'punctuation' && token.text === text;
  }

  #expectPunctuation(text: string, what: string): Token {
    if (!this.#isPunctuation(text)) throw this.#expected(what, this.#peek());
    return this.#next();
  }

  #expected(what: string, token: Token, hint = ''): Error {
    return selectorError(
      this.#text,
      token.start,
      `expected ${what} but found ${this.#describe(token)}${hint}`,
    );
  }

  #describe(token: Token): string {
    const source = this.#text.slice(token.start, token.end);
    switch (token.kind) {
      case 'end':
        return 'end of selector';
      case 'identifier':
        return `identifier '${token.name}'`;
      case 'keyword':
        return `keyword ${token.keyword}`;
      case 'string':
        return `string ${truncate(source)}`;
      case 'exact':
      case 'approximate':
        return `number ${source}`;
      case 'punctuation':
        return `'${token.text}'`;
    }
  }

  #enter(token: Token): void {
    if (++this.#nesting > MAX_NESTING) {
      throw selectorError(
        this.#text,
        token.start,
        `the selector nests too deeply (more than ${MAX_NESTING} levels)`,
      );
    }
  }

  #leave(): void {
    this.#nesting--;
  }

  readonly #depths = new WeakMap<SelectorNode, number>();

  /** Records a new node's depth and refuses trees deep enough to threaten the stack when evaluated. */
  #node<T extends SelectorNode>(node: T): T {
    let depth = 0;
    for (const child of childrenOf(node)) depth = Math.max(depth, this.#depths.get(child) ?? 1);
    if (depth + 1 > MAX_DEPTH) {
      throw selectorError(
        this.#text,
        node.start,
        `the selector is too deeply nested (more than ${MAX_DEPTH} levels)`,
      );
    }
    this.#depths.set(node, depth + 1);
    return node;
  }

  // --- kind checks ---

  #requireCondition(node: SelectorNode, where: string): void {
    this.#refuseNull(node, `a condition ${where}`);
    const kind = kindOf(node);
    if (kind === 'number' || kind === 'string') {
      throw selectorError(
        this.#text,
        node.start,
        `expected a condition ${where} but found ${this.#describeNode(node, kind)}`,
      );
    }
  }

  #require(node: SelectorNode, allowed: Kind, what: string, hint = ''): void {
    this.#refuseNull(node, what);
    const kind = kindOf(node);
    if (kind !== 'any' && kind !== allowed) {
      throw selectorError(
        this.#text,
        node.start,
        `expected ${what} but found ${this.#describeNode(node, kind)}${hint}`,
      );
    }
  }

  /**
   * The NULL literal only makes sense in `IS [NOT] NULL`: compared, computed with or tested
   * anywhere else it could never be TRUE (SEL-2), so such a selector is a mistake and is refused.
   */
  #refuseNull(node: SelectorNode, what: string): void {
    if (node.kind === 'literal' && node.value === null) {
      throw selectorError(
        this.#text,
        node.start,
        `expected ${what} but found NULL (a comparison or arithmetic with NULL is never TRUE: test with IS NULL or IS NOT NULL)`,
      );
    }
  }

  #describeNode(node: SelectorNode, kind: Kind): string {
    const noun = kind === 'number' ? 'a number' : kind === 'string' ? 'a string' : 'a boolean';
    return `${noun} (${truncate(this.#text.slice(node.start, node.end))})`;
  }

  // --- grammar ---

  #or(): SelectorNode {
    const first = this.#and();
    if (!this.#isKeyword('OR')) return first;
    this.#requireCondition(first, 'before OR');
    const operands = [first];
    while (this.#isKeyword('OR')) {
      this.#next();
      const operand = this.#and();
      this.#requireCondition(operand, 'after OR');
      operands.push(operand);
    }
    return this.#node({ kind: 'or', operands, start: first.start, end: operands[operands.length - 1]!.end });
  }

  #and(): SelectorNode {
    const first = this.#not();
    if (!this.#isKeyword('AND')) return first;
    this.#requireCondition(first, 'before AND');
    const operands = [first];
    while (this.#isKeyword('AND')) {
      this.#next();
      const operand = this.#not();
      this.#requireCondition(operand, 'after AND');
      operands.push(operand);
    }
    return this.#node({ kind: 'and', operands, start: first.start, end: operands[operands.length - 1]!.end });
  }

  #not(): SelectorNode {
    if (!this.#isKeyword('NOT')) return this.#predicate();
    const not = this.#next();
    this.#enter(not);
    const operand = this.#not();
    this.#leave();
    this.#requireCondition(operand, 'after NOT');
    this.#bareValue = false;
    return this.#node({ kind: 'not', operand, start: not.start, end: operand.end });
  }

  #predicate(): SelectorNode {
    const left = this.#additive();
    const token = this.#peek();
    this.#bareValue = false;
    if (isComparison(token)) {
      this.#next();
      const operator = token.text as ComparisonOperator;
      const right = this.#additive();
      this.#refuseNull(left, `a value on the left of '${operator}'`);
      this.#refuseNull(right, `a value on the right of '${operator}'`);
      if (operator !== '=' && operator !== '<>') {
        const hint = ' (strings and booleans compare only with = and <>)';
        this.#require(left, 'number', `a number on the left of '${operator}'`, hint);
        this.#require(right, 'number', `a number on the right of '${operator}'`, hint);
      }
      this.#bareValue = false;
      return this.#node({ kind: 'comparison', operator, left, right, start: left.start, end: right.end });
    }
    let negated = false;
    if (this.#isKeyword('NOT')) {
      const next = this.#peek(1);
      if (next.kind !== 'keyword' || !['BETWEEN', 'IN', 'LIKE'].includes(next.keyword)) {
        this.#next();
        throw this.#expected('BETWEEN, IN or LIKE after NOT', next);
      }
      this.#next();
      negated = true;
    }
    if (this.#isKeyword('BETWEEN')) return this.#between(left, negated);
    if (this.#isKeyword('IN')) return this.#in(left, negated);
    if (this.#isKeyword('LIKE')) return this.#like(left, negated);
    if (this.#isKeyword('IS')) return this.#isNull(left);
    this.#bareValue = true;
    return left;
  }

  #between(operand: SelectorNode, negated: boolean): SelectorNode {
    this.#next();
    this.#require(operand, 'number', 'a number before BETWEEN');
    const low = this.#additive();
    this.#require(low, 'number', 'a number as the lower bound of BETWEEN');
    if (!this.#isKeyword('AND')) throw this.#expected('AND after the lower bound of BETWEEN', this.#peek());
    this.#next();
    const high = this.#additive();
    this.#require(high, 'number', 'a number as the upper bound of BETWEEN');
    return this.#node({ kind: 'between', negated, operand, low, high, start: operand.start, end: high.end });
  }

  #in(operand: SelectorNode, negated: boolean): SelectorNode {
    this.#next();
    this.#require(operand, 'string', 'a string value before IN');
    this.#expectPunctuation('(', "'(' after IN");
    const values: string[] = [];
    while (true) {
      const token = this.#peek();
      if (token.kind !== 'string') {
        const what =
          values.length === 0 ? 'a string literal to start the IN list' : "a string literal after ','";
        throw this.#expected(
          what,
          token,
          token.kind === 'end' ? '' : ' (IN lists hold string literals only)',
        );
      }
      this.#next();
      values.push(token.value);
      if (this.#isPunctuation(',')) {
        this.#next();
        continue;
      }
      const close = this.#expectPunctuation(')', "',' or ')' in the IN list");
      return this.#node({ kind: 'in', negated, operand, values, start: operand.start, end: close.end });
    }
  }

  #like(operand: SelectorNode, negated: boolean): SelectorNode {
    this.#next();
    this.#require(operand, 'string', 'a string value before LIKE');
    const pattern = this.#peek();
    if (pattern.kind !== 'string') throw this.#expected('a string pattern after LIKE', pattern);
    this.#next();
    let escape: string | null = null;
    let end = pattern.end;
    if (this.#isKeyword('ESCAPE')) {
      this.#next();
      const token = this.#peek();
      if (token.kind !== 'string' || Array.from(token.value).length !== 1) {
        throw this.#expected('a single-character string after ESCAPE', token);
      }
      this.#next();
      escape = token.value;
      end = token.end;
    }
    try {
      compileLike(pattern.value, escape);
    } catch (error) {
      if (error instanceof LikePatternError) throw selectorError(this.#text, pattern.start, error.message);
      throw error;
    }
    return this.#node({
      kind: 'like',
      negated,
      operand,
      pattern: pattern.value,
      escape,
      start: operand.start,
      end,
    });
  }

  #isNull(operand: SelectorNode): SelectorNode {
    this.#next();
    let negated = false;
    if (this.#isKeyword('NOT')) {
      this.#next();
      negated = true;
    }
    const token = this.#peek();
    if (!this.#isKeyword('NULL'))
      throw this.#expected(negated ? 'NULL after IS NOT' : 'NULL or NOT after IS', token);
    this.#next();
    return this.#node({ kind: 'is-null', negated, operand, start: operand.start, end: token.end });
  }

  #additive(): SelectorNode {
    let left = this.#multiplicative();
    while (this.#isPunctuation('+') || this.#isPunctuation('-')) {
      const operator = (this.#next() as { text: ArithmeticOperator }).text;
      const right = this.#multiplicative();
      left = this.#arithmetic(operator, left, right);
    }
    return left;
  }

  #multiplicative(): SelectorNode {
    let left = this.#unary();
    while (this.#isPunctuation('*') || this.#isPunctuation('/')) {
      const operator = (this.#next() as { text: ArithmeticOperator }).text;
      const right = this.#unary();
      left = this.#arithmetic(operator, left, right);
    }
    return left;
  }

  #arithmetic(operator: ArithmeticOperator, left: SelectorNode, right: SelectorNode): SelectorNode {
    this.#require(left, 'number', `a number on the left of '${operator}'`);
    this.#require(right, 'number', `a number on the right of '${operator}'`);
    return this.#node({ kind: 'arithmetic', operator, left, right, start: left.start, end: right.end });
  }

  #unary(): SelectorNode {
    if (!this.#isPunctuation('-') && !this.#isPunctuation('+')) return this.#primary();
    const sign = this.#next() as Extract<Token, { kind: 'punctuation' }>;
    const literal = this.#peek();
    // A sign on an exact literal folds into it, so -9223372036854775808 (Long.MIN_VALUE) is in range.
    if (literal.kind === 'exact') {
      this.#next();
      const value = sign.text === '-' ? -literal.value : literal.value;
      return this.#literal(this.#exact(value, literal), sign.start, literal.end);
    }
    this.#enter(sign);
    const operand = this.#unary();
    this.#leave();
    this.#require(operand, 'number', `a number after '${sign.text}'`);
    if (sign.text === '+') return this.#node({ ...operand, start: sign.start });
    if (operand.kind === 'literal' && typeof operand.value === 'number') {
      return this.#literal(-operand.value, sign.start, operand.end);
    }
    return this.#node({ kind: 'negate', operand, start: sign.start, end: operand.end });
  }

  /** An exact literal's value as a Java long: decimal within the long range, hex and octal up to 64 bits. */
  #exact(value: bigint, token: Extract<Token, { kind: 'exact' }>): bigint {
    if (token.radix !== 10 && value >= 0n && value <= UNSIGNED_LONG_MAX) return BigInt.asIntN(64, value);
    if (value > LONG_MAX || value < -LONG_MAX - 1n) {
      throw selectorError(
        this.#text,
        token.start,
        `number ${this.#text.slice(token.start, token.end)} is out of range for a long`,
      );
    }
    return value;
  }

  #literal(value: LiteralValue, start: number, end: number): SelectorNode {
    return { kind: 'literal', value, start, end };
  }

  #primary(): SelectorNode {
    const token = this.#peek();
    switch (token.kind) {
      case 'string':
        this.#next();
        return this.#literal(token.value, token.start, token.end);
      case 'exact':
        this.#next();
        return this.#literal(this.#exact(token.value, token), token.start, token.end);
      case 'approximate':
        this.#next();
        return this.#literal(token.value, token.start, token.end);
      case 'keyword':
        if (token.keyword === 'TRUE' || token.keyword === 'FALSE' || token.keyword === 'NULL') {
          this.#next();
          return this.#literal(
            token.keyword === 'NULL' ? null : token.keyword === 'TRUE',
            token.start,
            token.end,
          );
        }
        break;
      case 'identifier':
        return this.#identifier(token);
      case 'punctuation':
        if (token.text === '(') return this.#parenthesized(token);
        break;
      case 'end':
        break;
    }
    throw this.#expected(this.#whatBefore(), token, this.#hintFor(token));
  }

  #identifier(token: Extract<Token, { kind: 'identifier' }>): SelectorNode {
    const upper = token.name.toUpperCase();
    if (upper === 'JMS_BEA_SELECT' && this.#isPunctuation('(', 1)) return this.#xpathSelect(token);
    if (upper === 'XPATH' && this.#peek(1).kind === 'string') return this.#xpathTest(token);
    this.#next();
    if (this.#isPunctuation('(')) {
      throw selectorError(
        this.#text,
        token.start,
        `unknown function '${token.name}' (the only function is JMS_BEA_SELECT)`,
      );
    }
    return { kind: 'identifier', name: token.name, start: token.start, end: token.end };
  }

  #parenthesized(open: Token): SelectorNode {
    this.#next();
    this.#enter(open);
    const inner = this.#or();
    this.#leave();
    const close = this.#expectPunctuation(')', `')' to close the '(' at column ${open.start + 1}`);
    this.#bareValue = false;
    // The span takes the parentheses in, so explanations show `(a OR b)` as written.
    return this.#node({ ...inner, start: open.start, end: close.end });
  }

  #xpathSelect(name: Token): SelectorNode {
    this.#next();
    this.#next();
    const type = this.#peek();
    if (type.kind !== 'string' || type.value.toLowerCase() !== 'xpath') {
      throw this.#expected("'xpath' as the first argument of JMS_BEA_SELECT", type);
    }
    this.#next();
    this.#expectPunctuation(',', "',' after 'xpath' in JMS_BEA_SELECT");
    const xpath = this.#xpathExpression('JMS_BEA_SELECT');
    const close = this.#expectPunctuation(')', "')' to close JMS_BEA_SELECT");
    return { kind: 'xpath-select', xpath, start: name.start, end: close.end };
  }

  #xpathTest(name: Token): SelectorNode {
    this.#next();
    const expression = this.#peek();
    const xpath = this.#xpathExpression('XPATH');
    return { kind: 'xpath-test', xpath, start: name.start, end: expression.end };
  }

  #xpathExpression(after: string): CompiledXPath {
    const token = this.#peek();
    if (token.kind !== 'string') throw this.#expected(`an XPath expression string in ${after}`, token);
    this.#next();
    try {
      return new CompiledXPath(token.value);
    } catch (error) {
      if (error instanceof InvalidXPathError)
        throw selectorError(this.#text, token.start, error.message, error);
      throw error;
    }
  }

  /** "a value after '='", "a condition after AND": what the token before the current one calls for. */
  #whatBefore(): string {
    const previous = this.#position > 0 ? this.#tokens[this.#position - 1] : undefined;
    if (previous === undefined) return 'a condition at the start of the selector';
    if (previous.kind === 'keyword') {
      const condition = previous.keyword === 'AND' || previous.keyword === 'OR' || previous.keyword === 'NOT';
      return `${condition ? 'a condition' : 'a value'} after ${previous.keyword}`;
    }
    return `a value after ${this.#describe(previous)}`;
  }

  #hintFor(token: Token): string {
    if (token.kind === 'keyword') return ' (keywords cannot be used as identifiers)';
    if (
      token.kind === 'punctuation' &&
      token.text === '=' &&
      this.#position > 0 &&
      this.#isPunctuation('=', -1)
    ) {
      return " ('==' is not an operator: use '=')";
    }
    return '';
  }
}

function isComparison(token: Token): token is Extract<Token, { kind: 'punctuation' }> {
  return (
    token.kind === 'punctuation' &&
    (token.text === '=' ||
      token.text === '<>' ||
      token.text === '<' ||
      token.text === '>' ||
      token.text === '<=' ||
      token.text === '>=')
  );
}

function truncate(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > 40 ? `${oneLine.slice(0, 37)}...` : oneLine;
}
