import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { readXml } from '../../../../src/jms/selector/xpath/xml-document.js';
import {
  DEFAULT_XPATH_LIMITS,
  setXPathLimitListener,
  setXPathLimits,
  xpathLimitCounts,
  xpathLimits,
  type XPathLimitName,
  type XPathLimits,
} from '../../../../src/jms/selector/xpath/xpath-limits.js';

/** Sets limits for one test and puts the previous ones (and listener) back after it. */
function withLimits(
  t: TestContext,
  limits: Partial<XPathLimits>,
): { limit: XPathLimitName; expression?: string }[] {
  const previous = setXPathLimits(limits);
  const events: { limit: XPathLimitName; expression?: string }[] = [];
  const previousListener = setXPathLimitListener((event) => events.push(event));
  t.after(() => {
    setXPathLimits(previous);
    setXPathLimitListener(previousListener);
  });
  return events;
}

function items(count: number): string {
  return `<order>${Array.from({ length: count }, (_, i) => `<item n="${i}"><id>${i}</id></item>`).join('')}</order>`;
}

/** What every XPath form answers for a body the limits refuse: as for a body that does not parse (SEL-4). */
function assertNotSelected(body: string, path: string): void {
  const message = new XMLMessage(body);
  assert.equal(parseSelector(`JMS_BEA_SELECT('xpath', '${path}') IS NOT NULL`).evaluate(message), false);
  assert.equal(parseSelector(`JMS_BEA_SELECT('xpath', '${path}') = '1'`).evaluate(message), null);
  assert.equal(parseSelector(`XPATH '${path}'`).evaluate(message), null);
  assert.equal(parseSelector(`NOT XPATH '${path}'`).matches(message), false);
}

test('selector - XPath limits have safe defaults and refuse values that are not positive integers (SEL-4)', () => {
  assert.deepEqual(xpathLimits(), DEFAULT_XPATH_LIMITS);
  for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
    assert.throws(
      () => setXPathLimits({ maxSteps: bad }),
      /xpath limit 'maxSteps' must be a positive integer/,
    );
  }
  assert.throws(() => setXPathLimits({ bogus: 1 } as Partial<XPathLimits>), /unknown xpath limit 'bogus'/);
  assert.deepEqual(xpathLimits(), DEFAULT_XPATH_LIMITS, 'a refused value changes nothing');
});

test('selector - a body over maxBodyLength, maxDepth, maxElements or maxAttributes is treated as not parsing (SEL-4)', (t) => {
  const events = withLimits(t, { maxBodyLength: 200, maxDepth: 4, maxElements: 10, maxAttributes: 3 });
  const cases: [XPathLimitName, string, string][] = [
    ['maxBodyLength', `<a><id>1</id>${' '.repeat(200)}</a>`, `<a><id>1</id>${' '.repeat(180)}</a>`],
    ['maxDepth', '<a><b><c><d><e/></d></c></b><id>1</id></a>', '<a><b><c><d/></c></b><id>1</id></a>'],
    ['maxElements', `<a><id>1</id>${'<x/>'.repeat(9)}</a>`, `<a><id>1</id>${'<x/>'.repeat(8)}</a>`],
    ['maxAttributes', '<a p="1" q="2" r="3" s="4"><id>1</id></a>', '<a p="1" q="2" r="3"><id>1</id></a>'],
  ];
  for (const [limit, over, within] of cases) {
    assert.equal(readXml(over), limit, `${limit}: over`);
    assert.notEqual(typeof readXml(within), 'string', `${limit}: exactly at the limit parses`);
    const before = xpathLimitCounts()[limit];
    events.length = 0;
    // The fast path and xpath.js alike: the body is refused before either sees it.
    assertNotSelected(over, '/a/id');
    assertNotSelected(over, 'string(/a/id)');
    // Counted and reported once per message, however many selectors test it, as the parse.
    assert.equal(xpathLimitCounts()[limit] - before, 2, limit);
    assert.deepEqual(events, [{ limit }, { limit }], limit);
    assert.equal(parseSelector("XPATH '/a/id'").evaluate(new XMLMessage(within)), true, `${limit}: within`);
  }
});

test('selector - 50,000 attributes on one element are refused at once by the default limit (SEL-4)', () => {
  const attributes = Array.from({ length: 50_000 }, (_, i) => `a${i}="v"`).join(' ');
  const body = `<order ${attributes}><id>1</id></order>`;
  const started = performance.now();
  assert.equal(readXml(body), 'maxAttributes');
  assertNotSelected(body, '/order/id');
  const explained = parseSelector("JMS_BEA_SELECT('xpath', '/order/id') = '1'").explain(new XMLMessage(body));
  assert.deepEqual(explained.children[0]?.xpath, {
    expression: '/order/id',
    found: null,
    body: 'over-limit',
    limit: 'maxAttributes',
  });
  assert.ok(performance.now() - started < 1000, `took ${Math.round(performance.now() - started)} ms`);
});

test('selector - an XPath evaluation over maxSteps is stopped: NULL for JMS_BEA_SELECT, UNKNOWN for XPATH (SEL-4)', (t) => {
  const events = withLimits(t, { maxSteps: 1000 });
  const body = items(200);
  const message = new XMLMessage(body);
  // count() walks every node: some 1,200 node tests, over a budget of 1,000.
  assert.equal(parseSelector("JMS_BEA_SELECT('xpath', 'count(//item)') IS NULL").evaluate(message), true);
  assert.equal(parseSelector("XPATH 'count(//item) = 200'").evaluate(message), null);
  assert.equal(parseSelector("NOT XPATH 'count(//item) = 200'").matches(message), false);
  assert.deepEqual(events, [
    { limit: 'maxSteps', expression: 'count(//item)' },
    { limit: 'maxSteps', expression: 'count(//item) = 200' },
    { limit: 'maxSteps', expression: 'count(//item) = 200' },
  ]);
  // Within the budget the same expressions answer; the budget is per evaluation, not per message.
  setXPathLimits({ maxSteps: 10_000 });
  assert.equal(new CompiledXPath('count(//item)').selectString(message), '200');
  assert.equal(new CompiledXPath('count(//item)').selectString(message), '200');
  // The fast path is linear in the body and takes no budget.
  setXPathLimits({ maxSteps: 1 });
  assert.equal(new CompiledXPath('/order/item[200]/id').selectString(message), '199');
  assert.equal(new CompiledXPath('//item[@n="7"]/id').selectString(message), '7');
  const explanation = parseSelector("XPATH 'count(//item) = 200'").explain(message);
  assert.equal(explanation.xpath?.limit, 'maxSteps');
  assert.equal(explanation.value, 'UNKNOWN');
});

test('selector - nested XPath predicates cannot stall the event loop with the default limits (SEL-4)', () => {
  const message = new XMLMessage(items(200));
  const before = xpathLimitCounts().maxSteps;
  const started = performance.now();
  // Unbounded, xpath.js makes some 24 million node tests here (minutes on a busy machine).
  assert.equal(parseSelector("XPATH '//item[//item[//item[id = 199]]]'").evaluate(message), null);
  const elapsed = performance.now() - started;
  assert.equal(xpathLimitCounts().maxSteps - before, 1);
  assert.ok(elapsed < 5000, `took ${Math.round(elapsed)} ms`);
  // A single level of the same predicate is cheap and answers.
  assert.equal(parseSelector("XPATH '//item[id = 199]'").evaluate(message), true);
});

test('selector - xpath.js node-sets keep document order with the numbered DOM, attributes included (SEL-4)', () => {
  const body = '<r a="1"><x b="2"><y/></x><!-- c --><z c="3">t</z></r>';
  const message = new XMLMessage(body);
  const pick = (path: string) => new CompiledXPath(path).selectString(message);
  assert.equal(pick('name((//* | //@*)[1])'), 'r');
  assert.equal(pick('name((//* | //@*)[2])'), 'a');
  assert.equal(pick('name((//* | //@*)[3])'), 'x');
  assert.equal(pick('name((//* | //@*)[4])'), 'b');
  assert.equal(pick('name((//* | //@*)[5])'), 'y');
  assert.equal(pick('name((//z | //y | //x)[1])'), 'x');
  assert.equal(pick('name((//z | //y | //x)[last()])'), 'z');
  assert.equal(pick('name(//z/preceding::*[1])'), 'y');
  assert.equal(pick('name(//z/preceding::*[2])'), 'x');
  assert.equal(pick('name(//z/preceding-sibling::*[1])'), 'x');
  assert.equal(pick('count(//node())'), '6');
});

test('selector - an expression outside the fast path is evaluated once per message, over budget or not (SEL-4)', (t) => {
  const events = withLimits(t, { maxSteps: 2000 });
  const selector = parseSelector("XPATH '//item[//item[id = 2]]'");
  const counted = parseSelector("JMS_BEA_SELECT('xpath', 'count(//item)') = '3'");
  const hostile = new XMLMessage(items(100));
  const small = new XMLMessage(items(3));
  for (let offered = 0; offered < 5; offered++) {
    // A queue may offer the same message to the same consumer again and again.
    assert.equal(selector.evaluate(hostile), null);
    assert.equal(selector.evaluate(small), true);
    assert.equal(counted.evaluate(small), true);
  }
  assert.deepEqual(events, [{ limit: 'maxSteps', expression: '//item[//item[id = 2]]' }]);
});
