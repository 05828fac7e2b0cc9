/**
 * Property tests (fast-check, fixed seed): the gateway's XPath answers what xmldom + xpath.js, the
 * reference kept here as an oracle, answers on the same body, over random documents and random
 * expressions:
 *
 * - the boolean forms of fast-condition.ts (comparisons of simple paths with literals under
 *   node-set semantics, not/and/or, boolean()) and the simple paths, on the fast path;
 * - expressions outside the fast paths (functions, position(), comparisons inside predicates,
 *   other axes), evaluated by xpath.js on the DOM over the element tape (tape-dom.ts).
 *
 * The documents have no CDATA next to text: xmldom keeps such CDATA a node of its own, where the
 * XPath data model (and the gateway) joins it to the text (xpath.test.ts shows that case).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { DOMParser } from '@xmldom/xmldom';
import fc from 'fast-check';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { compileFastCondition } from '../../../../src/jms/selector/xpath/fast-condition.js';

const SEED = 20261202;

interface Oracle {
  parse(expression: string): {
    evaluate(options: { node: unknown }): { stringValue(): string; booleanValue(): boolean };
  };
}
// The same (pinned) xpath.js the gateway loads; loading compiled-xpath.ts above applies its changes,
// which keep xpath.js's answers (and make number() read XPath 1.0's grammar, as the fast path does).
const oracle = createRequire(import.meta.url)('xpath') as Oracle;

/** Values chosen to make comparisons interesting: numbers in XPath's grammar and not, white space, empty. */
const VALUES = ['1', '2', ' 2 ', '2.0', '-1.5', '5.', '.5', 'v', 'x y', '', '1e3', '0x10', 'Item 2 & co'];
const NAMES = ['a', 'b', 'c'];
const ATTRIBUTES = ['x', 'y'];

const escape = (value: string): string => value.replace(/&/g, '&amp;').replace(/</g, '&lt;');

const element: fc.Arbitrary<string> = fc.letrec<{ element: string }>((tie) => ({
  element: fc
    .tuple(
      fc.constantFrom(...NAMES),
      fc.uniqueArray(fc.tuple(fc.constantFrom(...ATTRIBUTES), fc.constantFrom(...VALUES)), {
        maxLength: 2,
        selector: ([name]) => name,
      }),
      fc.array(
        fc.oneof(
          { depthSize: 'small' },
          fc.constantFrom(...VALUES).map(escape),
          fc.constant('<!--c-->'),
          fc.constant('\n  '),
          tie('element'),
        ),
        { maxLength: 4 },
      ),
    )
    .map(([name, attributes, children]) => {
      const attributeText = attributes.map(([key, value]) => ` ${key}="${escape(value)}"`).join('');
      return children.length === 0
        ? `<${name}${attributeText}/>`
        : `<${name}${attributeText}>${children.join('')}</${name}>`;
    }),
})).element;

const step = fc
  .tuple(
    fc.constantFrom('/', '//'),
    fc.constantFrom(...NAMES, '*'),
    fc.constantFrom('', '[1]', '[2]', '[@x]', "[@x='1']", "[@y='v']"),
  )
  .map(([axis, name, predicate]) => `${axis}${name}${predicate}`);

const path = fc
  .tuple(fc.array(step, { minLength: 1, maxLength: 3 }), fc.constantFrom('', '', '/@x', '/@y', '/text()'))
  .map(([steps, last]) => steps.join('') + last);

const literal = fc.oneof(
  fc.constantFrom(...VALUES).map((value) => `'${value}'`),
  fc.constantFrom('1', '2', '-1.5', '0.5', '.5', '5'),
);
const operator = fc.constantFrom('=', '!=', '<', '<=', '>', '>=');

const condition: fc.Arbitrary<string> = fc.letrec<{ condition: string }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    path,
    fc.tuple(path, operator, literal).map(([p, o, l]) => `${p} ${o} ${l}`),
    fc.tuple(literal, operator, path).map(([l, o, p]) => `${l}${o}${p}`),
    path.map((p) => `boolean(${p})`),
    tie('condition').map((c) => `not(${c})`),
    fc
      .tuple(tie('condition'), fc.constantFrom('and', 'or'), tie('condition'))
      .map(([l, o, r]) => `${l} ${o} ${r}`),
    tie('condition').map((c) => `(${c})`),
  ),
})).condition;

/** Expressions no fast path answers: xpath.js on the tape DOM. */
const general = fc.oneof(
  path.map((p) => `count(${p})`),
  path.map((p) => `string(${p})`),
  path.map((p) => `name(${p})`),
  path.map((p) => `sum(${p}[number(.) = number(.)])`),
  path.map((p) => `${p}[last()]`),
  path.map((p) => `${p}[position() = 2]`),
  path.map((p) => `normalize-space(${p})`),
  fc.tuple(path, literal).map(([p, l]) => `//*[${p.replace(/^\/+/, '')} = ${l}]`),
  path.map((p) => `count(${p}/..)`),
  path.map((p) => `count(${p}/following-sibling::node())`),
  path.map((p) => `count(${p}/ancestor-or-self::*)`),
  path.map((p) => `string(${p}/preceding::text()[1])`),
  path.map((p) => `count(${p}/descendant-or-self::node())`),
  path.map((p) => `local-name(${p}/@*)`),
  fc.constant('count(//comment())'),
  fc.constant('string(//comment()/following::text())'),
  fc.constant('count(/node())'),
  fc.constant('string(/)'),
  fc.tuple(path, literal).map(([p, l]) => `boolean(${p} = ${l}) = true()`),
);

function reference(body: string, expression: string): { stringValue(): string; booleanValue(): boolean } {
  const dom = new DOMParser({ onError: () => undefined }).parseFromString(body, 'text/xml');
  return oracle.parse(expression).evaluate({ node: dom });
}

test('selector - property (fast-check): the XPATH fast path answers as xmldom + xpath.js on every boolean form it takes (SEL-4)', () => {
  fc.assert(
    fc.property(element, condition, (body, expression) => {
      assert.ok(compileFastCondition(expression), `${expression} should take the fast path`);
      const compiled = new CompiledXPath(expression);
      const expected = reference(body, expression);
      const message = new XMLMessage(body);
      assert.equal(compiled.test(message), expected.booleanValue(), `XPATH ${expression} on ${body}`);
      const value = expected.stringValue();
      assert.equal(compiled.selectString(message), value === '' ? null : value, `string of ${expression}`);
    }),
    { seed: SEED, numRuns: 1500 },
  );
});

test('selector - property (fast-check): expressions outside the fast paths answer on the tape DOM as on xmldom (SEL-4)', () => {
  fc.assert(
    fc.property(element, general, (body, expression) => {
      const compiled = new CompiledXPath(expression);
      const expected = reference(body, expression);
      const message = new XMLMessage(body);
      const value = expected.stringValue();
      assert.equal(compiled.selectString(message), value === '' ? null : value, `${expression} on ${body}`);
      assert.equal(compiled.test(new XMLMessage(body)), expected.booleanValue(), `XPATH ${expression}`);
    }),
    { seed: SEED, numRuns: 1500 },
  );
});
