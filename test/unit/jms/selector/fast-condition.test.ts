import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { compileFastCondition, xpathNumber } from '../../../../src/jms/selector/xpath/fast-condition.js';
import {
  setXPathLimitListener,
  setXPathLimits,
  type XPathLimitListener,
} from '../../../../src/jms/selector/xpath/xpath-limits.js';

const BODY =
  '<order id="7"><item kind="tool"><name>Item 1 &amp; co</name><price> 3.25 </price></item>' +
  '<item kind="part"><name>Item 2 &amp; co</name><price>6.5</price></item><item><price>n/a</price></item></order>';

test('selector - the boolean XPATH forms take the fast path; functions, positions and predicates with comparisons do not (SEL-4)', () => {
  for (const expression of [
    "/order/item[2]/name/text() = 'Item 2 & co'",
    "'Item 2 & co' = /order/item[2]/name",
    "/order/item/name != 'x'",
    '/order/item/price > 5',
    '/order/item/price <= 3.25',
    '-1 < /order/@id',
    'boolean(/order/item)',
    'not(/order/item[4])',
    "/order/item[@kind='tool'] and (/order/@id = 7 or not(//name = 'z'))",
    'true() or false()',
    '/order/item',
  ]) {
    assert.ok(compileFastCondition(expression), `${expression} should take the fast path`);
  }
  for (const expression of [
    'count(/order/item) > 2',
    '/order/item[position()=2]/name',
    '/order/item[price > 5]',
    '/order/item/price + 1 > 5',
    '/order/item/name = /order/item/name',
    "/order/item = 'a' = true()",
    "boolean('x')",
    '(/order/item)[2]',
    '/order/item | /order',
  ]) {
    assert.equal(compileFastCondition(expression), null, `${expression} goes to xpath.js`);
  }
});

test('selector - a node-set comparison is true when any node satisfies it, as XPath 1.0 says (SEL-4)', () => {
  const message = new XMLMessage(BODY);
  const xpathTest = (expression: string) => new CompiledXPath(expression).test(message);
  assert.equal(xpathTest("/order/item/name = 'Item 2 & co'"), true, 'the second name matches');
  assert.equal(xpathTest("/order/item/name != 'Item 2 & co'"), true, 'the first name differs');
  assert.equal(xpathTest("/order/item/missing = 'x'"), false, 'an empty node-set equals nothing');
  assert.equal(xpathTest("/order/item/missing != 'x'"), false, 'and differs from nothing');
  assert.equal(xpathTest("not(/order/item/missing = 'x')"), true);
  assert.equal(xpathTest('/order/item/price = 3.25'), true, 'white space around a number is allowed');
  assert.equal(xpathTest("/order/item/price = '3.25'"), false, 'a string compares the string-value exactly');
  assert.equal(xpathTest('/order/item/price > 6'), true);
  assert.equal(xpathTest('/order/item/price > 7'), false, "'n/a' is NaN, which compares false");
  assert.equal(xpathTest('/order/item[3]/price != 1'), true, 'NaN differs from every number');
  assert.equal(xpathTest("/order/item/price < '4'"), true, 'a relational comparison is numeric');
  assert.equal(xpathTest("/order/item[1] = 'Item 1 & co 3.25 '"), true, 'string-value of an element');
  assert.equal(xpathTest('6.5 = /order/item/price'), true);
  assert.equal(xpathTest('7 > /order/item/price'), true);
  // The string form of a boolean expression is XPath's string() of it.
  assert.equal(new CompiledXPath("/order/@id = '7'").selectString(message), 'true');
  assert.equal(new CompiledXPath("/order/@id = '8'").selectString(message), 'false');
  assert.equal(
    parseSelector("XPATH '/order/@id = 7 and /order/item[2]/price >= 6.5'").matches(message),
    true,
  );
});

test('selector - number() reads XPath 1.0 numbers only, on the fast path and in xpath.js alike (SEL-4)', () => {
  assert.equal(xpathNumber(' 5. '), 5);
  assert.equal(xpathNumber('.5'), 0.5);
  assert.equal(xpathNumber('-1.5'), -1.5);
  for (const value of ['', '1e3', '0x10', 'Infinity', '+1', '\u00a05', '1 2']) {
    assert.ok(Number.isNaN(xpathNumber(value)), JSON.stringify(value));
  }
  const message = new XMLMessage('<a><b>5.</b><b>\u00a01</b></a>');
  assert.equal(new CompiledXPath('/a/b = 5').test(message), true);
  assert.equal(new CompiledXPath('/a/b[position() = 1] = 5').test(message), true, 'xpath.js agrees');
  assert.equal(new CompiledXPath('/a/b = 1').test(message), false);
  assert.equal(new CompiledXPath('/a/b[position() = 2] = 1').test(message), false, 'xpath.js agrees');
});

test('selector - comparing the string-values of deeply nested elements is bounded by maxSteps (SEL-4)', (t) => {
  const events: Parameters<XPathLimitListener>[0][] = [];
  const previousListener = setXPathLimitListener((event) => events.push(event));
  const previous = setXPathLimits({ maxSteps: 1000 });
  t.after(() => {
    setXPathLimits(previous);
    setXPathLimitListener(previousListener);
  });
  const depth = 500;
  const deep = new XMLMessage(`${'<a>'.repeat(depth)}x${'</a>'.repeat(depth)}`);
  const selector = parseSelector("XPATH '//a = ''y'''");
  for (let offered = 0; offered < 3; offered++) assert.equal(selector.evaluate(deep), null, 'UNKNOWN');
  assert.equal(parseSelector("NOT XPATH '//a = ''y'''").evaluate(deep), null, 'negated, UNKNOWN too');
  const event = { limit: 'maxSteps', expression: "//a = 'y'" };
  assert.deepEqual(events, [event, event], 'reported once per selector and message');
  // The same test on a shallow body answers, and existence needs no string-values.
  assert.equal(parseSelector("XPATH '//a = ''x'''").evaluate(new XMLMessage('<a><a>x</a></a>')), true);
  assert.equal(parseSelector("XPATH '//a'").evaluate(deep), true);
});
