/**
 * The selector lexer (SEL-1): turns selector text into tokens with their source positions, so
 * every later error can name a column. Literal syntax follows JMS, which borrows Java's: exact
 * numerics are Java integer literals (decimal, hex `0x1F`, octal `017`, optional `L`), approximate
 * numerics are Java floating literals (`7.`, `.5`, `1e3`, `2.5f`, `1d`).
 */
import { selectorError } from './selector-error.js';

/** Words of the grammar: case-insensitive and never identifiers (SEL-1). */
const KEYWORDS = new Set([
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'LIKE',
  'IN',
  'IS',
  'NULL',
  'TRUE',
  'FALSE',
  'ESCAPE',
]);

/** Operators and punctuation. `<>` is the only "not equal". */
export type Punctuation = '=' | '<>' | '<' | '>' | '<=' | '>=' | '+' | '-' | '*' | '/' | '(' | ')' | ',';

/** One token; `start`/`end` are 0-based offsets into the selector text. */
export type Token =
  | { readonly kind: 'identifier'; readonly name: string; readonly start: number; readonly end: number }
  | { readonly kind: 'keyword'; readonly keyword: string; readonly start: number; readonly end: number }
  | { readonly kind: 'string'; readonly value: string; readonly start: number; readonly end: number }
  /** An exact numeric literal, unbounded here: the parser checks the long range after folding a sign. */
  | {
      readonly kind: 'exact';
      readonly value: bigint;
      readonly radix: 10 | 8 | 16;
      readonly start: number;
      readonly end: number;
    }
  | { readonly kind: 'approximate'; readonly value: number; readonly start: number; readonly end: number }
  | { readonly kind: 'punctuation'; readonly text: Punctuation; readonly start: number; readonly end: number }
  | { readonly kind: 'end'; readonly start: number; readonly end: number };

// Java identifiers: a letter, currency symbol, connecting punctuation or letter number, then those
// plus digits and combining marks (Character.isJavaIdentifierStart/Part, close enough).
const IDENTIFIER_START = /[\p{L}\p{Nl}\p{Sc}\p{Pc}]/u;
const IDENTIFIER_PART = /[\p{L}\p{Nl}\p{Sc}\p{Pc}\p{N}\p{Mn}\p{Mc}]/u;

/** Splits a selector into tokens; the last token is always `end`. Throws InvalidSelectorError. */
export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = text.length;
  while (true) {
    while (i < n && isWhitespace(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    const c = text[i]!;
    if (c === "'") {
      const { value, end } = readString(text, i);
      tokens.push({ kind: 'string', value, start, end });
      i = end;
    } else if (isDigit(c) || (c === '.' && isDigit(text[i + 1] ?? ''))) {
      const token = readNumber(text, i);
      tokens.push(token);
      i = token.end;
    } else if (isIdentifierStart(text, i)) {
      i = identifierEnd(text, i);
      const word = text.slice(start, i);
      const upper = word.toUpperCase();
      tokens.push(
        KEYWORDS.has(upper)
          ? { kind: 'keyword', keyword: upper, start, end: i }
          : { kind: 'identifier', name: word, start, end: i },
      );
    } else {
      const punctuation = readPunctuation(text, i);
      tokens.push({ kind: 'punctuation', text: punctuation, start, end: i + punctuation.length });
      i += punctuation.length;
    }
  }
  // The end token sits right after the last character that is not blank, so "expected ... but
  // found end of selector" points at where the missing part belongs.
  const last = tokens[tokens.length - 1];
  const endAt = last ? last.end : 0;
  tokens.push({ kind: 'end', start: endAt, end: endAt });
  return tokens;
}

function isWhitespace(code: number): boolean {
  // JMS whitespace: space, horizontal tab, form feed and line terminators.
  return code === 0x20 || code === 0x09 || code === 0x0c || code === 0x0a || code === 0x0d;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isIdentifierStart(text: string, i: number): boolean {
  const code = text.charCodeAt(i);
  if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || code === 0x5f || code === 0x24) {
    return true;
  }
  return code >= 0x80 && IDENTIFIER_START.test(String.fromCodePoint(text.codePointAt(i)!));
}

function identifierEnd(text: string, i: number): number {
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (
      (code >= 0x61 && code <= 0x7a) ||
      (code >= 0x41 && code <= 0x5a) ||
      (code >= 0x30 && code <= 0x39) ||
      code === 0x5f ||
      code === 0x24
    ) {
      i++;
    } else if (code >= 0x80) {
      const point = String.fromCodePoint(text.codePointAt(i)!);
      if (!IDENTIFIER_PART.test(point)) break;
      i += point.length;
    } else {
      break;
    }
  }
  return i;
}

function readString(text: string, start: number): { value: string; end: number } {
  let value = '';
  let i = start + 1;
  let from = i;
  while (true) {
    const quote = text.indexOf("'", i);
    if (quote < 0) {
      throw selectorError(text, start, "unterminated string literal: a closing quote (') is missing");
    }
    if (text[quote + 1] === "'") {
      // '' inside a literal stands for one quote.
      value += text.slice(from, quote + 1);
      i = quote + 2;
      from = i;
      continue;
    }
    value += text.slice(from, quote);
    return { value, end: quote + 1 };
  }
}

const HEX_DIGITS = /^[0-9a-fA-F]+$/;

function readNumber(text: string, start: number): Token {
  let i = start;
  if (text[i] === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
    i += 2;
    while (i < text.length && /[0-9a-zA-Z_]/.test(text[i]!)) i++;
    let digits = text.slice(start + 2, i);
    if (digits.endsWith('l') || digits.endsWith('L')) digits = digits.slice(0, -1);
    if (!HEX_DIGITS.test(digits)) {
      throw selectorError(text, start, `invalid hexadecimal literal '${text.slice(start, i)}'`);
    }
    return { kind: 'exact', value: BigInt(`0x${digits}`), radix: 16, start, end: i };
  }
  while (isDigit(text[i] ?? '')) i++;
  let approximate = false;
  if (text[i] === '.') {
    approximate = true;
    i++;
    while (isDigit(text[i] ?? '')) i++;
  }
  if (text[i] === 'e' || text[i] === 'E') {
    approximate = true;
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    if (!isDigit(text[i] ?? '')) {
      throw selectorError(
        text,
        start,
        `invalid number '${text.slice(start, i)}': the exponent has no digits`,
      );
    }
    while (isDigit(text[i] ?? '')) i++;
  }
  const body = text.slice(start, i);
  const suffix = text[i] ?? '';
  let token: Token;
  if (suffix === 'f' || suffix === 'F' || suffix === 'd' || suffix === 'D') {
    i++;
    const value = Number(body);
    token = {
      kind: 'approximate',
      value: suffix === 'f' || suffix === 'F' ? Math.fround(value) : value,
      start,
      end: i,
    };
  } else if (approximate) {
    token = { kind: 'approximate', value: Number(body), start, end: i };
  } else {
    if (suffix === 'l' || suffix === 'L') i++;
    token = exactDecimalOrOctal(text, body, start, i);
  }
  if (i < text.length && (isIdentifierStart(text, i) || isDigit(text[i]!) || text[i] === '.')) {
    throw selectorError(text, start, `invalid number '${text.slice(start, identifierEnd(text, i))}'`);
  }
  if (token.kind === 'approximate' && !Number.isFinite(token.value)) {
    throw selectorError(text, start, `number '${text.slice(start, i)}' is out of range for a double`);
  }
  return token;
}

function exactDecimalOrOctal(text: string, digits: string, start: number, end: number): Token {
  if (digits.length > 1 && digits.startsWith('0')) {
    // Java reads a leading zero as octal: 017 is 15, and 09 is an error.
    if (!/^[0-7]+$/.test(digits)) {
      throw selectorError(
        text,
        start,
        `invalid octal literal '${digits}' (a leading 0 means octal: digits 0-7)`,
      );
    }
    return { kind: 'exact', value: BigInt(`0o${digits}`), radix: 8, start, end };
  }
  return { kind: 'exact', value: BigInt(digits), radix: 10, start, end };
}

function readPunctuation(text: string, i: number): Punctuation {
  const c = text[i]!;
  const next = text[i + 1];
  switch (c) {
    case '<':
      return next === '>' ? '<>' : next === '=' ? '<=' : '<';
    case '>':
      return next === '=' ? '>=' : '>';
    case '=':
    case '+':
    case '-':
    case '*':
    case '/':
    case '(':
    case ')':
    case ',':
      return c;
    case '!':
      throw selectorError(
        text,
        i,
        next === '='
          ? "'!=' is not an operator: use '<>' for not equal"
          : "unexpected character '!': use NOT",
      );
    case '"':
      throw selectorError(text, i, "unexpected character '\"': string literals use single quotes ('...')");
    case '`':
    case '\u2018':
    case '\u2019':
      throw selectorError(
        text,
        i,
        `unexpected character '${c}': string literals use straight single quotes ('...')`,
      );
    case '&':
      throw selectorError(text, i, "unexpected character '&': use AND");
    case '|':
      throw selectorError(text, i, "unexpected character '|': use OR");
    default:
      throw selectorError(text, i, `unexpected character ${describeCharacter(text, i)}`);
  }
}

function describeCharacter(text: string, i: number): string {
  const point = text.codePointAt(i)!;
  if (point < 0x20 || (point >= 0x7f && point <= 0xa0) || point === 0x2028 || point === 0x2029) {
    return `U+${point.toString(16).toUpperCase().padStart(4, '0')}`;
  }
  return `'${String.fromCodePoint(point)}'`;
}
