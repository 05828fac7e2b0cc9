import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeliveryMode, Message } from '../../../../src/jms/message/message.js';
import { TextMessage } from '../../../../src/jms/message/text-message.js';
import { Queue } from '../../../../src/jms/destination/destination.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { message, truth } from './helpers.js';

/** Properties t (TRUE), f (FALSE); u is missing (NULL, so UNKNOWN). */
const logic = message({ t: true, f: false });
const VALUES = { TRUE: 't', FALSE: 'f', UNKNOWN: 'u' } as const;
type TruthName = keyof typeof VALUES;

test('selector - AND truth table with UNKNOWN (SEL-2)', () => {
  const table: [TruthName, TruthName, TruthName][] = [
    ['TRUE', 'TRUE', 'TRUE'],
    ['TRUE', 'FALSE', 'FALSE'],
    ['TRUE', 'UNKNOWN', 'UNKNOWN'],
    ['FALSE', 'TRUE', 'FALSE'],
    ['FALSE', 'FALSE', 'FALSE'],
    ['FALSE', 'UNKNOWN', 'FALSE'],
    ['UNKNOWN', 'TRUE', 'UNKNOWN'],
    ['UNKNOWN', 'FALSE', 'FALSE'],
    ['UNKNOWN', 'UNKNOWN', 'UNKNOWN'],
  ];
  for (const [a, b, expected] of table) {
    assert.equal(truth(`${VALUES[a]} AND ${VALUES[b]}`, logic), expected, `${a} AND ${b}`);
    assert.equal(truth(`${VALUES[a]} AND ${VALUES[b]} AND t`, logic), expected, `${a} AND ${b} AND TRUE`);
    assert.equal(truth(`t AND t AND ${VALUES[a]} AND ${VALUES[b]}`, logic), expected, `n-ary ${a} AND ${b}`);
  }
});

test('selector - OR truth table with UNKNOWN (SEL-2)', () => {
  const table: [TruthName, TruthName, TruthName][] = [
    ['TRUE', 'TRUE', 'TRUE'],
    ['TRUE', 'FALSE', 'TRUE'],
    ['TRUE', 'UNKNOWN', 'TRUE'],
    ['FALSE', 'TRUE', 'TRUE'],
    ['FALSE', 'FALSE', 'FALSE'],
    ['FALSE', 'UNKNOWN', 'UNKNOWN'],
    ['UNKNOWN', 'TRUE', 'TRUE'],
    ['UNKNOWN', 'FALSE', 'UNKNOWN'],
    ['UNKNOWN', 'UNKNOWN', 'UNKNOWN'],
  ];
  for (const [a, b, expected] of table) {
    assert.equal(truth(`${VALUES[a]} OR ${VALUES[b]}`, logic), expected, `${a} OR ${b}`);
    assert.equal(truth(`f OR ${VALUES[a]} OR ${VALUES[b]}`, logic), expected, `n-ary ${a} OR ${b}`);
  }
});

test('selector - NOT truth table with UNKNOWN (SEL-2)', () => {
  assert.equal(truth('NOT t', logic), 'FALSE');
  assert.equal(truth('NOT f', logic), 'TRUE');
  assert.equal(truth('NOT u', logic), 'UNKNOWN');
  assert.equal(truth('NOT NOT u', logic), 'UNKNOWN');
});

test('selector - only TRUE selects: FALSE and UNKNOWN do not (SEL-2)', () => {
  assert.equal(parseSelector('t').matches(logic), true);
  assert.equal(parseSelector('f').matches(logic), false);
  assert.equal(parseSelector('u').matches(logic), false);
  assert.equal(parseSelector('NOT u').matches(logic), false);
});

test('selector - a missing property is NULL: comparisons and arithmetic with it are UNKNOWN (SEL-2)', () => {
  const target = message({ a: 1 });
  for (const selector of [
    'x = 1',
    'x <> 1',
    'x < 1',
    'x > 1',
    'x <= 1',
    'x >= 1',
    "x = 'a'",
    'x = TRUE',
    'x + 1 = 2',
    'a + x = 2',
    'x * 0 = 0',
    '-x = 0',
    'x BETWEEN 0 AND 2',
    'a BETWEEN x AND 2',
    "x IN ('a')",
    "x NOT IN ('a')",
    "x LIKE '%'",
    "x NOT LIKE '%'",
    'x = x',
  ]) {
    assert.equal(truth(selector, target), 'UNKNOWN', selector);
  }
  assert.equal(truth('x IS NULL', target), 'TRUE');
  assert.equal(truth('x IS NOT NULL', target), 'FALSE');
  assert.equal(truth('a IS NULL', target), 'FALSE');
  assert.equal(truth('a IS NOT NULL', target), 'TRUE');
  assert.equal(truth('(x + 1) IS NULL', target), 'TRUE');
  assert.equal(truth('a BETWEEN x AND 0', target), 'FALSE', 'UNKNOWN AND FALSE is FALSE');
  assert.equal(truth('a NOT BETWEEN x AND 0', target), 'TRUE', 'UNKNOWN OR TRUE is TRUE');
});

test('selector - comparison operators on numbers (SEL-1)', () => {
  const target = message({ n: 5 });
  const cases: [string, string][] = [
    ['n = 5', 'TRUE'],
    ['n = 6', 'FALSE'],
    ['n <> 5', 'FALSE'],
    ['n <> 6', 'TRUE'],
    ['n < 6', 'TRUE'],
    ['n < 5', 'FALSE'],
    ['n > 4', 'TRUE'],
    ['n > 5', 'FALSE'],
    ['n <= 5', 'TRUE'],
    ['n <= 4', 'FALSE'],
    ['n >= 5', 'TRUE'],
    ['n >= 6', 'FALSE'],
    ['5 = n', 'TRUE'],
    ['6 > n', 'TRUE'],
    ['4 < n', 'TRUE'],
    ['5 <= n', 'TRUE'],
    ['5 >= n', 'TRUE'],
    ['4 <> n', 'TRUE'],
    ['n + 1 = 6', 'TRUE'],
    ['n - 1 = 4', 'TRUE'],
    ['n * 2 = 10', 'TRUE'],
    ['n / 2 = 2', 'TRUE'],
    ['-n = -5', 'TRUE'],
    ['+n = 5', 'TRUE'],
    ['n + n * n = 30', 'TRUE'],
    ['n = n', 'TRUE'],
    ['n < n', 'FALSE'],
  ];
  for (const [selector, expected] of cases) assert.equal(truth(selector, target), expected, selector);
});

test('selector - strings and booleans compare with = and <> only, by exact characters (SEL-1, SEL-2)', () => {
  const target = message({ s: 'abc', b: true, S: 'ABC' });
  assert.equal(truth("s = 'abc'", target), 'TRUE');
  assert.equal(truth("s <> 'abc'", target), 'FALSE');
  assert.equal(truth("s = 'ABC'", target), 'FALSE', 'case-sensitive');
  assert.equal(truth("s = 'abc '", target), 'FALSE');
  assert.equal(truth('s = S', target), 'FALSE');
  assert.equal(truth('b = TRUE', target), 'TRUE');
  assert.equal(truth('b <> FALSE', target), 'TRUE');
  assert.equal(truth('b', target), 'TRUE');
  // Properties have no static kind: < on a string property is FALSE at match time, not an error.
  assert.equal(truth('s < 5', target), 'FALSE');
  assert.equal(truth('b > 0', target), 'FALSE');
  assert.equal(truth('s < S', target), 'FALSE', 'JMS defines no ordering of strings');
  assert.equal(truth('b >= b', target), 'FALSE', 'nor of booleans');
});

test('selector - unlike kinds compare as FALSE, never UNKNOWN or an error (SEL-2)', () => {
  const target = message({ s: '5', n: 5, b: true, l: { type: 'long', value: 5n } });
  const comparisons = [
    "n = '5'",
    's = 5',
    's <> 5',
    "n <> '5'",
    'b = 1',
    'b <> 1',
    'n = TRUE',
    "b = 'true'",
    's > 1',
    's < 1',
    's >= 1',
    's <= 1',
    '1 < s',
    'b > 0',
    's = n',
    's <> n',
    'n < s',
    'b = s',
    'l > s',
    "n IN ('5')",
    "n LIKE '5'",
    "b LIKE '%'",
    'b BETWEEN 0 AND 2',
    's BETWEEN 0 AND 9',
    's NOT BETWEEN 0 AND 9',
  ];
  for (const selector of comparisons) assert.equal(truth(selector, target), 'FALSE', selector);
  // So NOT selects: JMS 1.1 §3.8.1.2 "the value of the operation is false".
  for (const selector of comparisons.filter((text) => !text.includes('NOT BETWEEN'))) {
    assert.equal(truth(`NOT (${selector})`, target), 'TRUE', `NOT (${selector})`);
  }
  assert.equal(parseSelector('NOT (s > 1)').matches(target), true);
  // NOT IN and NOT LIKE are NOT of IN and LIKE.
  assert.equal(truth("n NOT IN ('5')", target), 'TRUE');
  assert.equal(truth("n NOT LIKE '5'", target), 'TRUE');
  // JMS applies no conversions in selectors: the string '5' is not the number 5.
  assert.equal(parseSelector('s = 5').matches(target), false);
  assert.equal(parseSelector('NOT (s = 5)').matches(target), true);
  assert.equal(truth('l = 5', target), 'TRUE');
  // Arithmetic on a string is NULL (no conversions), so its comparison is UNKNOWN, not FALSE.
  assert.equal(truth('s + 1 = 6', target), 'UNKNOWN');
  // A non-boolean value in a boolean position is not a comparison: UNKNOWN.
  assert.equal(truth('n', target), 'UNKNOWN');
  assert.equal(truth('s OR FALSE', target), 'UNKNOWN');
});

test('selector - a NULL operand stays UNKNOWN whatever the other kind (SEL-2)', () => {
  const target = message({ s: 'x', n: 1, b: true });
  for (const selector of [
    'missing = s',
    'missing <> n',
    'b = missing',
    'missing > n',
    'missing < 1',
    "missing <> 'x'",
    "missing IN ('x')",
    "missing NOT IN ('x')",
    "missing LIKE 'x'",
    "missing NOT LIKE 'x'",
    'missing BETWEEN 0 AND 2',
    'NOT (missing = s)',
    "JMSType <> 'x'",
    "NOT (JMSCorrelationID = 'x')",
  ]) {
    assert.equal(truth(selector, target), 'UNKNOWN', selector);
  }
});

test('selector - numbers compare across int, long, float and double (SEL-2)', () => {
  const target = message({
    i: 3,
    l: { type: 'long', value: 3n },
    f: { type: 'float', value: 3 },
    d: 3.0000000001,
    b: { type: 'byte', value: 3 },
    s: { type: 'short', value: 3 },
    threeDouble: { type: 'double', value: 3 },
  });
  for (const selector of [
    'i = l',
    'l = f',
    'f = i',
    'b = s',
    's = i',
    'threeDouble = i',
    'threeDouble = l',
    'i = 3.0',
    'l = 3.0',
    'f = 3',
    'i < d',
    'l < d',
    'f < d',
    'd > 3',
    'd > l',
  ]) {
    assert.equal(truth(selector, target), 'TRUE', selector);
  }
});

test('selector - longs near 2^63 compare without precision loss (SEL-2)', () => {
  const max = 9223372036854775807n;
  const target = message({
    max: { type: 'long', value: max },
    maxMinusOne: { type: 'long', value: max - 1n },
    min: { type: 'long', value: -max - 1n },
    twoTo53PlusOne: { type: 'long', value: 9007199254740993n },
    twoTo53: { type: 'double', value: 9007199254740992 },
  });
  assert.equal(truth('max = 9223372036854775807', target), 'TRUE');
  assert.equal(truth('max > maxMinusOne', target), 'TRUE');
  assert.equal(truth('max = maxMinusOne', target), 'FALSE');
  assert.equal(truth('maxMinusOne = 9223372036854775806', target), 'TRUE');
  assert.equal(truth('maxMinusOne < 9223372036854775807', target), 'TRUE');
  assert.equal(truth('min = -9223372036854775808', target), 'TRUE');
  assert.equal(truth('min < max', target), 'TRUE');
  // 2^53 + 1 is not a double; a double-based comparison would call these equal.
  assert.equal(truth('twoTo53PlusOne = 9007199254740993', target), 'TRUE');
  assert.equal(truth('twoTo53PlusOne = twoTo53', target), 'FALSE');
  assert.equal(truth('twoTo53PlusOne > twoTo53', target), 'TRUE');
  assert.equal(truth('twoTo53PlusOne > 9007199254740992.0', target), 'TRUE');
  assert.equal(truth('max > 9.2e18', target), 'TRUE');
  assert.equal(truth('max < 9.3e18', target), 'TRUE');
  assert.equal(truth('max BETWEEN 9223372036854775806 AND 9223372036854775807', target), 'TRUE');
  assert.equal(truth('max NOT BETWEEN 0 AND 9223372036854775806', target), 'TRUE');
});

test('selector - a float property 0.1 is not the double literal 0.1, as in Java (SEL-2)', () => {
  const target = message({ f: { type: 'float', value: 0.1 }, d: 0.1 });
  assert.equal(truth('f = 0.1', target), 'FALSE', 'float 0.1 widened to double is 0.10000000149011612');
  assert.equal(truth('f = 0.1f', target), 'TRUE', 'a float literal rounds the same way');
  assert.equal(truth('f > 0.1', target), 'TRUE');
  assert.equal(truth('d = 0.1', target), 'TRUE');
  assert.equal(truth('f = d', target), 'FALSE');
  assert.equal(truth('f BETWEEN 0.0999 AND 0.1001', target), 'TRUE');
});

test('selector - arithmetic follows Java: integer division truncates, mixed is double (SEL-2)', () => {
  const target = message({
    seven: 7,
    two: 2,
    l: { type: 'long', value: 7n },
    d: { type: 'double', value: 7 },
    f: { type: 'float', value: 2 },
    zero: 0,
  });
  assert.equal(truth('seven / two = 3', target), 'TRUE');
  assert.equal(truth('-seven / two = -3', target), 'TRUE', 'truncates toward zero');
  assert.equal(truth('l / two = 3', target), 'TRUE');
  assert.equal(truth('seven / 2 = 3', target), 'TRUE');
  assert.equal(truth('seven / 2.0 = 3.5', target), 'TRUE');
  assert.equal(truth('d / two = 3.5', target), 'TRUE');
  assert.equal(truth('seven / f = 3.5', target), 'TRUE');
  assert.equal(truth('7 / 2 = 3', target), 'TRUE');
  assert.equal(truth('7.0 / 2 = 3.5', target), 'TRUE');
  // Integer division by zero (an ArithmeticException in Java) is NULL; double division is IEEE.
  assert.equal(truth('seven / zero = 0', target), 'UNKNOWN');
  assert.equal(truth('(seven / zero) IS NULL', target), 'TRUE');
  assert.equal(truth('seven / 0.0 > 1e308', target), 'TRUE');
  // ints are promoted to long: no 32-bit overflow.
  assert.equal(truth('2147483647 + 1 = 2147483648', target), 'TRUE');
  // longs wrap at 64 bits as in Java.
  assert.equal(truth('9223372036854775807 + 1 = -9223372036854775808', target), 'TRUE');
});

test('selector - NaN compares false with everything, <> is TRUE (SEL-2)', () => {
  const target = message({ nan: { type: 'double', value: NaN } });
  assert.equal(truth('nan = nan', target), 'FALSE');
  assert.equal(truth('nan <> 1', target), 'TRUE');
  assert.equal(truth('nan < 1', target), 'FALSE');
  assert.equal(truth('nan BETWEEN 0 AND 1', target), 'FALSE');
  assert.equal(
    truth('nan NOT BETWEEN 0 AND 1', target),
    'FALSE',
    'NOT BETWEEN is x < a OR x > b, as JMS defines it',
  );
});

test('selector - BETWEEN and NOT BETWEEN include their bounds (SEL-1)', () => {
  const cases: [number, string, string][] = [
    [9, 'FALSE', 'TRUE'],
    [10, 'TRUE', 'FALSE'],
    [15, 'TRUE', 'FALSE'],
    [20, 'TRUE', 'FALSE'],
    [21, 'FALSE', 'TRUE'],
  ];
  for (const [value, between, notBetween] of cases) {
    const target = message({ w: value, lo: 10, hi: 20 });
    assert.equal(truth('w BETWEEN 10 AND 20', target), between, `${value}`);
    assert.equal(truth('w NOT BETWEEN 10 AND 20', target), notBetween, `${value}`);
    assert.equal(truth('w BETWEEN lo AND hi', target), between, `${value} (property bounds)`);
    assert.equal(truth('w NOT BETWEEN lo AND hi', target), notBetween, `${value} (property bounds)`);
    assert.equal(truth('w BETWEEN 9.5 AND 20.5', target), value >= 9.5 && value <= 20.5 ? 'TRUE' : 'FALSE');
  }
  assert.equal(truth('w BETWEEN 20 AND 10', message({ w: 15 })), 'FALSE', 'an empty range');
  assert.equal(truth('JMSPriority BETWEEN 3 AND 5', message()), 'TRUE');
  assert.equal(truth('JMSPriority NOT BETWEEN 3 AND 5', message()), 'FALSE');
});

test('selector - IN and NOT IN, with NULL (SEL-1, SEL-2)', () => {
  const target = message({ dept: 'qa', n: 1 });
  assert.equal(truth("dept IN ('eng', 'qa')", target), 'TRUE');
  assert.equal(truth("dept IN ('eng')", target), 'FALSE');
  assert.equal(truth("dept NOT IN ('eng', 'qa')", target), 'FALSE');
  assert.equal(truth("dept NOT IN ('eng')", target), 'TRUE');
  assert.equal(truth("dept IN ('QA')", target), 'FALSE', 'case-sensitive');
  assert.equal(truth("dept IN ('a', 'b', 'c', 'd', 'e', 'f', 'qa')", target), 'TRUE');
  assert.equal(truth("missing IN ('qa')", target), 'UNKNOWN');
  assert.equal(truth("missing NOT IN ('qa')", target), 'UNKNOWN');
  assert.equal(truth("NOT (missing IN ('qa'))", target), 'UNKNOWN');
  assert.equal(truth("n IN ('1')", target), 'FALSE', 'a number is not in a list of strings');
  assert.equal(truth("n NOT IN ('1')", target), 'TRUE');
  assert.equal(
    truth(
      "JMSType IN ('order')",
      message(undefined, (m) => m.setJMSType('order')),
    ),
    'TRUE',
  );
  assert.equal(truth("JMSType NOT IN ('order')", message()), 'UNKNOWN', 'JMSType is NULL when unset');
});

test('selector - LIKE with _ and % (SEL-1)', () => {
  const cases: [string, string, boolean][] = [
    ['12%3', '123', true],
    ['12%3', '12993', true],
    ['12%3', '1234', false],
    ['l_se', 'lose', true],
    ['l_se', 'loose', false],
    ['%', '', true],
    ['%', 'anything', true],
    ['', '', true],
    ['', 'a', false],
    ['_', '', false],
    ['_', 'é', true],
    ['_', '😀', true],
    ['__', '😀', false],
    ['a%', 'abc', true],
    ['a%', 'ba', false],
    ['%c', 'abc', true],
    ['%c', 'cab', false],
    ['%b%', 'abc', true],
    ['%b%', 'ac', false],
    ['a%c', 'abbbc', true],
    ['a%c', 'ac', true],
    ['a%c', 'acb', false],
    ['a%b%c', 'aXbYc', true],
    ['a%b%c', 'acb', false],
    ['%a%a%a%b', 'aaaaaaaaaaaaaaaaaaaab', true],
    ['_%_', 'ab', true],
    ['_%_', 'a', false],
    ['%_x', 'ax', true],
    ['%_x', 'x', false],
    ['%%', '', true],
    ['a_c%', 'abcdef', true],
    ['abc', 'ABC', false],
    ['a%', 'a\nb', true],
    ['a_b', 'a\nb', true],
  ];
  for (const [pattern, value, expected] of cases) {
    assert.equal(
      parseSelector(`s LIKE '${pattern}'`).matches(message({ s: value })),
      expected,
      `'${value}' LIKE '${pattern}'`,
    );
    assert.equal(
      parseSelector(`s NOT LIKE '${pattern}'`).matches(message({ s: value })),
      !expected,
      `'${value}' NOT LIKE '${pattern}'`,
    );
  }
});

test('selector - LIKE with ESCAPE, and regex characters are literal (SEL-1)', () => {
  const like = (value: string, pattern: string, escape?: string): boolean =>
    parseSelector(`s LIKE '${pattern.replace(/'/g, "''")}'${escape ? ` ESCAPE '${escape}'` : ''}`).matches(
      message({ s: value }),
    );
  assert.equal(like('_foo', '\\_%', '\\'), true);
  assert.equal(like('bar', '\\_%', '\\'), false);
  assert.equal(like('100%', '100!%', '!'), true);
  assert.equal(like('1000', '100!%', '!'), false);
  assert.equal(like('a!b', 'a!!b', '!'), true);
  assert.equal(like('a%b', 'a!%b', '!'), true);
  assert.equal(like('a%b', 'a%b'), true);
  assert.equal(like('ab', 'a!b', '!'), true, 'an escaped ordinary character is itself');
  assert.equal(like('a_b', 'a__b', '_'), true, 'the escape can be a wildcard character');
  assert.equal(like('axb', 'a__b', '_'), false);
  for (const special of ['.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '^', '$', '|', '\\', '/']) {
    assert.equal(like(`a${special}b`, `a${special}b`), true, special);
    assert.equal(like('axb', `a${special}b`), false, special);
    assert.equal(like(`${special}${special}`, `%${special}`), true, special);
  }
  assert.equal(like('.*', '.*'), true);
  assert.equal(like('abc', '.*'), false);
  assert.equal(like("it's", "it's"), true);
});

test('selector - header identifiers (SEL-3)', () => {
  const target = new TextMessage('x');
  target.setJMSMessageID('ID:1');
  target.setJMSTimestamp(1_700_000_000_000);
  target.setJMSCorrelationID('corr');
  target.setJMSType('order');
  target.setJMSPriority(7);
  target.setJMSDeliveryMode(DeliveryMode.NON_PERSISTENT);
  target.setJMSRedelivered(true);
  target.setJMSExpiration(1_700_000_060_000);
  target.setJMSDeliveryTime(1_700_000_001_000);
  target.setJMSDestination(new Queue('orders'));
  for (const selector of [
    "JMSMessageID = 'ID:1'",
    'JMSTimestamp = 1700000000000',
    'JMSTimestamp > 1600000000000 AND JMSTimestamp < 1800000000000',
    "JMSCorrelationID = 'corr'",
    "JMSType = 'order'",
    'JMSPriority = 7',
    'JMSPriority >= 6',
    "JMSDeliveryMode = 'NON_PERSISTENT'",
    "JMSDeliveryMode <> 'PERSISTENT'",
    'JMSRedelivered',
    'JMSRedelivered = TRUE',
    'JMSExpiration - JMSTimestamp = 60000',
    'JMSDeliveryTime = 1700000001000',
    'JMSDeliveryTime - JMSTimestamp BETWEEN 500 AND 1500',
    "JMSMessageID LIKE 'ID:%'",
    "JMSType IN ('order', 'invoice')",
  ]) {
    assert.equal(truth(selector, target), 'TRUE', selector);
  }
  // JMSDestination is not a selectable header: it reads as a (missing) property.
  assert.equal(truth('JMSDestination IS NULL', target), 'TRUE');
});

test('selector - header defaults: PERSISTENT, priority 4, NULL ids and type (SEL-3)', () => {
  const target = message();
  assert.equal(truth("JMSDeliveryMode = 'PERSISTENT'", target), 'TRUE');
  assert.equal(truth('JMSPriority = 4', target), 'TRUE');
  assert.equal(truth('JMSRedelivered', target), 'FALSE');
  assert.equal(
    truth('JMSMessageID IS NULL AND JMSCorrelationID IS NULL AND JMSType IS NULL', target),
    'TRUE',
  );
  assert.equal(truth("JMSCorrelationID = 'x'", target), 'UNKNOWN');
  assert.equal(truth('JMSExpiration = 0 AND JMSDeliveryTime = 0', target), 'TRUE');
  assert.equal(
    truth('JMSDeliveryMode = 2', target),
    'FALSE',
    "JMSDeliveryMode is the string 'PERSISTENT', not 2",
  );
});

test('selector - JMSX properties read through the message (SEL-3)', () => {
  const target = message({ JMSXGroupID: 'g1', JMSXGroupSeq: 3 }, (m) => {
    m.deliveryCount = 2;
    m.setProviderProperty('JMSXUserID', { type: 'string', value: 'alice' });
  });
  assert.equal(truth("JMSXGroupID = 'g1' AND JMSXGroupSeq = 3", target), 'TRUE');
  assert.equal(truth('JMSXDeliveryCount > 1', target), 'TRUE');
  assert.equal(truth("JMSXUserID = 'alice'", target), 'TRUE');
  assert.equal(truth('JMSXDeliveryCount IS NULL', message()), 'TRUE', 'no count before the first delivery');
  assert.equal(truth('JMSXAppID IS NULL', target), 'TRUE');
});

test('selector - the examples of the WebLogic guide (SEL-1)', () => {
  const engineer = message({
    salary: 70000,
    dept: 'eng',
    product: 'WebLogic Server',
    version: 3.5,
    hireyear: 1991,
    fireyear: { type: 'int', value: 1997 },
  });
  assert.equal(truth("salary > 64000 and dept in ('eng','qa')", engineer), 'TRUE');
  assert.equal(truth("(product like 'WebLogic%' or product like '%T3') and version > 3.0", engineer), 'TRUE');
  assert.equal(truth('hireyear between 1990 and 1992 or fireyear is not null', engineer), 'TRUE');
  assert.equal(truth('fireyear - hireyear > 4', engineer), 'TRUE');
  assert.equal(truth('JMSPriority >= 6', engineer), 'FALSE');
});

test('selector - matching never throws, whatever the message holds (SEL-2)', () => {
  const target = message({ bytesLike: 'x' }, (m) =>
    m.setProviderProperty('JMS_bytes', { type: 'bytes', value: new Uint8Array([1]) }),
  );
  for (const selector of [
    'JMS_bytes = 1',
    "JMS_bytes = 'x'",
    'JMS_bytes + 1 = 2',
    "JMS_bytes LIKE '%'",
    'JMS_bytes',
    'JMS_bytes IS NOT NULL',
  ]) {
    assert.doesNotThrow(() => parseSelector(selector).matches(target), selector);
  }
  // Bytes are no selector type: unlike anything, so FALSE (SEL-2).
  assert.equal(truth('JMS_bytes = 1', target), 'FALSE');
  assert.equal(truth('JMS_bytes IS NOT NULL', target), 'TRUE');
  // Values of an unexpected shape, set around the message model's checks, do not throw either.
  const odd = message(undefined, (m) => {
    m.setJMSTimestamp(1.5);
    m.setProviderProperty('JMS_int', { type: 'int', value: 2.5 });
  });
  assert.equal(truth('JMSTimestamp + 1 = 2.5', odd), 'TRUE');
  assert.equal(truth('JMS_int * 2 = 5', odd), 'TRUE');
  // Even a message whose property lookup throws is simply not selected.
  class Broken extends Message {
    override getTypedProperty(): never {
      throw new Error('broken store');
    }
  }
  assert.equal(parseSelector('a = 1').matches(new Broken()), false);
  assert.equal(parseSelector('a = 1').evaluate(new Broken()), null);
});
