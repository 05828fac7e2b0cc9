import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidSelectorError } from '../../../../src/jms/errors.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { assertInvalid, message, truth } from './helpers.js';

test('selector - null, empty and blank selectors select everything and have no text (SEL-1, SEL-5)', () => {
  for (const text of [null, undefined, '', '   ', '\t\n\r\f ']) {
    const selector = parseSelector(text);
    assert.equal(selector.text, null);
    assert.equal(selector.matches(message()), true);
    assert.equal(selector.indexedIdentifier, undefined);
  }
});

test('selector - the text is kept as written for getMessageSelector (SEL-5)', () => {
  assert.equal(parseSelector("  color = 'red'  ").text, "  color = 'red'  ");
});

test("selector - string literals use single quotes with '' for a quote (SEL-1)", () => {
  const target = message({ name: "O'Reilly", empty: '' });
  assert.equal(truth("name = 'O''Reilly'", target), 'TRUE');
  assert.equal(truth("empty = ''", target), 'TRUE');
  assert.equal(truth("'''' = ''''"), 'TRUE');
  assert.equal(truth("'a''b' <> 'a'", target), 'TRUE');
  assert.equal(truth("name = 'OReilly'", target), 'FALSE');
});

test('selector - exact numeric literals: decimal, octal, hex and the L suffix, within the long range (SEL-1)', () => {
  const target = message({ n: 15, big: { type: 'long', value: 9223372036854775807n } });
  for (const literal of ['15', '017', '0xF', '0XF', '0xf', '15L', '15l', '0x0FL', '+15']) {
    assert.equal(truth(`n = ${literal}`, target), 'TRUE', literal);
  }
  assert.equal(truth('big = 9223372036854775807', target), 'TRUE');
  assert.equal(truth('big = 0x7FFFFFFFFFFFFFFF', target), 'TRUE');
  assert.equal(truth('-9223372036854775808 < big', target), 'TRUE');
  assert.equal(truth('0xFFFFFFFFFFFFFFFF = -1'), 'TRUE', 'hex longs are two-complement, as in Java');
  assertInvalid('n = 9223372036854775808', 5, 'out of range for a long');
  assertInvalid('n = 0x10000000000000000', 5, 'out of range for a long');
  assertInvalid('n = 09', 5, 'invalid octal literal');
  assertInvalid('n = 0x', 5, 'invalid hexadecimal literal');
  assertInvalid('n = 12abc', 5, "invalid number '12abc'");
});

test('selector - approximate numeric literals: 1e3, .5, 7., 2.5f, 1d (SEL-1)', () => {
  const target = message({ thousand: 1000, half: 0.5, seven: 7, quarter: 2.5 });
  assert.equal(truth('thousand = 1e3', target), 'TRUE');
  assert.equal(truth('thousand = 1E+3', target), 'TRUE');
  assert.equal(truth('thousand = 10000e-1', target), 'TRUE');
  assert.equal(truth('half = .5', target), 'TRUE');
  assert.equal(truth('seven = 7.', target), 'TRUE');
  assert.equal(truth('quarter = 2.5f', target), 'TRUE');
  assert.equal(truth('quarter = 2.5D', target), 'TRUE');
  assert.equal(truth('seven = 7d', target), 'TRUE');
  assert.equal(truth('-57.9E2 = -5790'), 'TRUE');
  assertInvalid('x = 1e', 5, 'exponent has no digits');
  assertInvalid('x = 1e999', 5, 'out of range for a double');
  assertInvalid('x = 1.5L', 5, "invalid number '1.5L'");
  assertInvalid('x = 1.2.3', 5, 'invalid number');
});

test('selector - TRUE and FALSE literals, case-insensitive (SEL-1)', () => {
  assert.equal(truth('TRUE'), 'TRUE');
  assert.equal(truth('true'), 'TRUE');
  assert.equal(truth('False'), 'FALSE');
  assert.equal(truth('flag = TRUE', message({ flag: true })), 'TRUE');
  assert.equal(truth('flag = false', message({ flag: true })), 'FALSE');
});

test('selector - keywords are case-insensitive (SEL-1)', () => {
  const target = message({ a: 5, s: 'abc' });
  assert.equal(
    truth("a between 1 and 10 and s like 'a%' and s in ('abc') and x is null and not a > 6 or false", target),
    'TRUE',
  );
  assert.equal(truth("A IS NULL AnD s NoT lIkE 'z%' EsCaPe '!'", target), 'TRUE');
  assert.equal(truth('a Is NoT nUlL', target), 'TRUE');
});

test('selector - identifiers are case-sensitive (SEL-1)', () => {
  const target = message({ Color: 'red' });
  assert.equal(truth("Color = 'red'", target), 'TRUE');
  assert.equal(truth("color = 'red'", target), 'UNKNOWN');
  assert.equal(truth("COLOR = 'red'", target), 'UNKNOWN');
});

test('selector - identifiers that start with or contain keywords are ordinary identifiers (SEL-1)', () => {
  const names = [
    'NOTE',
    'ORDER',
    'Island',
    'INTEREST',
    'ANDROID',
    'ORIGIN',
    'ISBN',
    'NULLABLE',
    'TRUEISH',
    'FALSEHOOD',
    'BETWEENNESS',
    'LIKED',
    'ESCAPED',
    'IN_STOCK',
    'is_',
    'not1',
    '$or',
    '_and',
  ];
  for (const name of names) {
    const target = message({ [name]: 1 });
    assert.equal(truth(`${name} = 1`, target), 'TRUE', name);
    assert.equal(truth(`${name} IS NOT NULL AND ${name} > 0`, target), 'TRUE', name);
  }
  assert.equal(truth('NOT NOTE IS NULL', message({ NOTE: 'x' })), 'TRUE');
});

test('selector - keywords cannot be identifiers (SEL-1)', () => {
  for (const keyword of ['NOT', 'AND', 'OR', 'BETWEEN', 'LIKE', 'IN', 'IS', 'ESCAPE']) {
    assert.throws(() => parseSelector(`${keyword} = 1`), InvalidSelectorError, keyword);
    assert.throws(() => parseSelector(`x = ${keyword.toLowerCase()}`), InvalidSelectorError, keyword);
  }
  assertInvalid('in = 1', 1, 'keywords cannot be used as identifiers');
  assertInvalid('x = escape', 5, 'found keyword ESCAPE (keywords cannot be used as identifiers)');
  // NULL, TRUE and FALSE are literals, never property names.
  assert.equal(truth('NULL IS NULL'), 'TRUE');
  assertInvalid('NULL = 1', 1, 'found NULL');
});

test('selector - identifiers follow Java: letters, digits, _ and $, Unicode letters (SEL-1)', () => {
  const target = message({ prix_été: 3, $amount: 4, _x1: 5, 名前: 'x' });
  assert.equal(truth('prix_été = 3 AND $amount = 4 AND _x1 = 5', target), 'TRUE');
  assert.equal(truth("名前 = 'x'", target), 'TRUE');
  assertInvalid('1abc = 1', 1, 'invalid number');
  assertInvalid('a.b = 1', 2, "'.'");
});

test('selector - whitespace: spaces, tabs, form feeds and line breaks separate tokens (SEL-1)', () => {
  assert.equal(truth("\tcolor\n=\r\n'red'\f", message({ color: 'red' })), 'TRUE');
  assert.equal(truth("color='red'AND(weight>1)", message({ color: 'red', weight: 2 })), 'TRUE');
});

test('selector - SQL precedence: NOT over AND over OR, arithmetic over comparison (SEL-1)', () => {
  // TRUE OR TRUE AND FALSE is TRUE OR (TRUE AND FALSE).
  assert.equal(truth('TRUE OR TRUE AND FALSE'), 'TRUE');
  assert.equal(truth('(TRUE OR TRUE) AND FALSE'), 'FALSE');
  assert.equal(truth('NOT FALSE AND FALSE'), 'FALSE');
  assert.equal(truth('NOT (FALSE AND FALSE)'), 'TRUE');
  assert.equal(truth('FALSE AND FALSE OR TRUE'), 'TRUE');
  assert.equal(truth('1 + 2 * 3 = 7'), 'TRUE');
  assert.equal(truth('(1 + 2) * 3 = 9'), 'TRUE');
  assert.equal(truth('10 - 4 - 3 = 3'), 'TRUE', 'left associative');
  assert.equal(truth('100 / 10 / 5 = 2'), 'TRUE', 'left associative');
  assert.equal(truth('-2 * -3 = 6'), 'TRUE');
  assert.equal(truth('- - 2 = 2'), 'TRUE');
  assert.equal(truth('2 - -2 = 4'), 'TRUE');
  assert.equal(truth('1 + 1 BETWEEN 2 AND 1 + 1'), 'TRUE');
  assert.equal(truth('NOT NOT TRUE'), 'TRUE');
  assert.equal(truth('((((TRUE))))'), 'TRUE');
});

test('selector - comparisons do not chain (SEL-1)', () => {
  assertInvalid('a < b < c', 7, 'comparisons do not chain');
  assertInvalid('a = b = c', 7, 'comparisons do not chain');
  assert.equal(truth('(1 < 2) = TRUE'), 'TRUE');
});

test('selector - static kind errors are caught when the selector is created (SEL-5)', () => {
  assertInvalid("'a' + 1 > 0", 1, "expected a number on the left of '+' but found a string ('a')");
  assertInvalid("x > 'a'", 5, 'strings and booleans compare only with = and <>');
  assertInvalid('TRUE < FALSE', 1, 'strings and booleans compare only with = and <>');
  assertInvalid("JMSType > 'a'", 1, 'found a string (JMSType)');
  assertInvalid(
    "JMSPriority LIKE '1%'",
    1,
    'expected a string value before LIKE but found a number (JMSPriority)',
  );
  assertInvalid("JMSPriority IN ('1')", 1, 'expected a string value before IN');
  assertInvalid("x BETWEEN 'a' AND 'b'", 11, 'expected a number as the lower bound of BETWEEN');
  assertInvalid("x BETWEEN 1 AND 'b'", 17, 'upper bound');
  assertInvalid('JMSRedelivered + 1 = 2', 1, 'found a boolean (JMSRedelivered)');
  assertInvalid("-'a' = 1", 2, "expected a number after '-'");
  assertInvalid('5', 1, 'expected a condition as the selector but found a number (5)');
  assertInvalid("'abc'", 1, 'expected a condition as the selector but found a string');
  assertInvalid('a + 1', 1, 'expected a condition as the selector but found a number (a + 1)');
  assertInvalid('JMSPriority', 1, 'expected a condition as the selector');
  assertInvalid('TRUE AND 5', 10, 'expected a condition after AND');
  assertInvalid("'x' OR TRUE", 1, 'expected a condition before OR');
  assertInvalid('NOT 5', 5, 'expected a condition after NOT');
});

test('selector - NULL as a value in a comparison, arithmetic or predicate is an invalid selector (SEL-2, SEL-5)', () => {
  const cases: [string, number][] = [
    ['NULL = 0', 1],
    ['x = NULL', 5],
    ['x <> NULL', 6],
    ['NULL < 1', 1],
    ['1 >= NULL', 6],
    ['NULL = NULL', 1],
    ['NULL + 1 = 2', 1],
    ['x * NULL > 0', 5],
    ['-NULL = 1', 2],
    ['x = (NULL)', 5],
    ['NULL BETWEEN 1 AND 2', 1],
    ['x BETWEEN NULL AND 2', 11],
    ['x NOT BETWEEN 1 AND NULL', 21],
    ["NULL IN ('a')", 1],
    ["NULL NOT LIKE 'a'", 1],
    ['NULL', 1],
    ['NOT NULL', 5],
    ['a = 1 AND NULL', 11],
    ['NULL OR a = 1', 1],
    ['1 + NULL IS NULL', 5],
  ];
  for (const [selector, column] of cases) {
    const error = assertInvalid(selector, column, 'but found NULL');
    assert.match(error.message, /IS NULL or IS NOT NULL/, selector);
  }
  // IS [NOT] NULL is the way to test for NULL, and stays valid on anything, a NULL literal included.
  assert.equal(truth('x IS NULL'), 'TRUE');
  assert.equal(truth('x IS NOT NULL'), 'FALSE');
  assert.equal(truth('NULL IS NULL'), 'TRUE');
  assert.equal(truth('(x + 1) IS NULL'), 'TRUE');
});

test('selector - error columns and messages for many bad selectors (SEL-5)', () => {
  assertInvalid('JMSPriority =', 14, "expected a value after '=' but found end of selector");
  assertInvalid('JMSPriority = ', 14, "expected a value after '=' but found end of selector");
  assertInvalid('JMSType = ', 10, "expected a value after '=' but found end of selector");
  assertInvalid("color = 'red", 9, 'unterminated string literal');
  assertInvalid('a == 1', 4, "'==' is not an operator: use '='");
  assertInvalid('a != 1', 3, "'!=' is not an operator: use '<>'");
  assertInvalid('a = "red"', 5, 'string literals use single quotes');
  assertInvalid('a && b', 3, 'use AND');
  assertInvalid('a || b', 3, 'use OR');
  assertInvalid('a # b', 3, "unexpected character '#'");
  assertInvalid('a = 1 b', 7, "expected AND, OR or end of selector but found identifier 'b'");
  assertInvalid(
    "color 'red'",
    7,
    'expected an operator (=, <>, <, >, <=, >=, BETWEEN, IN, LIKE, IS), AND, OR or end of selector',
  );
  assertInvalid('(a = 1', 7, "expected ')' to close the '(' at column 1 but found end of selector");
  assertInvalid('a = 1)', 6, "this ')' has no '('");
  assertInvalid(')', 1, 'expected a condition at the start of the selector');
  assertInvalid('a IN (1, 2)', 7, 'expected a string literal to start the IN list but found number 1');
  assertInvalid("a IN ('x', 2)", 12, "expected a string literal after ','");
  assertInvalid("a IN ('x' 'y')", 11, "expected ',' or ')' in the IN list");
  assertInvalid('a IN ()', 7, 'expected a string literal to start the IN list');
  assertInvalid("a IN 'x'", 6, "expected '(' after IN");
  assertInvalid("a IN ('x', NULL)", 12, "expected a string literal after ','");
  assertInvalid('a LIKE b', 8, 'expected a string pattern after LIKE');
  assertInvalid("a LIKE 'x' ESCAPE 'ab'", 19, 'expected a single-character string after ESCAPE');
  assertInvalid(
    "a LIKE 'x' ESCAPE",
    18,
    'expected a single-character string after ESCAPE but found end of selector',
  );
  assertInvalid("a LIKE 'ab!' ESCAPE '!'", 8, 'the LIKE pattern ends with its escape character');
  assertInvalid('a BETWEEN 1', 12, 'expected AND after the lower bound of BETWEEN but found end of selector');
  assertInvalid('a BETWEEN 1 OR 2', 13, 'expected AND after the lower bound of BETWEEN');
  assertInvalid('a IS 5', 6, 'expected NULL or NOT after IS');
  assertInvalid('a IS NOT 5', 10, 'expected NULL after IS NOT');
  assertInvalid('a NOT = 1', 7, 'expected BETWEEN, IN or LIKE after NOT');
  assertInvalid('NOT', 4, 'expected a condition after NOT but found end of selector');
  assertInvalid('a = 1 AND', 10, 'expected a condition after AND but found end of selector');
  assertInvalid('a = 1 OR OR b = 2', 10, 'expected a condition after OR but found keyword OR');
  assertInvalid('foo(1) = 2', 1, "unknown function 'foo'");
  assertInvalid('a = 1 +', 8, "expected a value after '+'");
  assertInvalid('a * / 2 = 1', 5, "expected a value after '*' but found '/'");
  assertInvalid("a = 'x' AND\n  b IN ('y', 1)", 26, 'IN lists hold string literals only');
});

test('selector - nesting is bounded, so no selector can overflow the stack (SEL-5)', () => {
  const deep = `${'('.repeat(250)}TRUE${')'.repeat(250)}`;
  assertInvalid(deep, 201, 'nests too deeply');
  assertInvalid(`${'NOT '.repeat(300)}TRUE`, 801, 'nests too deeply');
  assert.throws(() => parseSelector(`${'1 + '.repeat(1000)}1 = 2`), /too deeply nested/);
  // Long AND/OR chains are flat, not deep: thousands of terms are fine.
  const chain = Array.from({ length: 5000 }, (_, i) => `p${i} = ${i}`).join(' OR ');
  assert.equal(parseSelector(chain).matches(message({ p4999: 4999 })), true);
  assert.equal(truth(`${'('.repeat(150)}TRUE${')'.repeat(150)}`), 'TRUE');
});

test('selector - the indexed form is exactly <identifier> IS NOT NULL (SEL-6)', () => {
  assert.equal(parseSelector('Wilma IS NOT NULL').indexedIdentifier, 'Wilma');
  assert.equal(parseSelector('  Wilma  is not null ').indexedIdentifier, 'Wilma');
  assert.equal(parseSelector('(Fred IS NOT NULL)').indexedIdentifier, 'Fred');
  assert.equal(parseSelector('JMSCorrelationID IS NOT NULL').indexedIdentifier, 'JMSCorrelationID');
  for (const other of [
    'Wilma IS NULL',
    'NOT Wilma IS NULL',
    'Wilma IS NOT NULL AND Fred IS NOT NULL',
    'Wilma IS NOT NULL OR FALSE',
    'Wilma = TRUE',
    "JMS_BEA_SELECT('xpath', '/a') IS NOT NULL",
    '(a + 1) IS NOT NULL',
  ]) {
    assert.equal(parseSelector(other).indexedIdentifier, undefined, other);
  }
});

test('selector - readsBody tells whether a selector needs the body (SEL-4)', () => {
  assert.equal(parseSelector("color = 'red'").readsBody, false);
  assert.equal(parseSelector("color = 'red' OR JMS_BEA_SELECT('xpath', '/a') = 'x'").readsBody, true);
  assert.equal(parseSelector("NOT XPATH '/a'").readsBody, true);
  assert.equal(parseSelector(null).readsBody, false);
});

test('selector - matches and evaluate are plain functions that can be passed around (SEL-1)', () => {
  const { matches, evaluate } = parseSelector('a > 1');
  assert.deepEqual([message({ a: 2 }), message({ a: 0 }), message()].map(matches), [true, false, false]);
  assert.deepEqual([message({ a: 2 }), message({ a: 0 }), message()].map(evaluate), [true, false, null]);
});
