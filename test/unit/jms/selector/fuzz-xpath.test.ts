/**
 * Fuzz tests of the XML body parser and XPath evaluation with fast-check, on a fixed seed: random
 * and hostile bodies (many attributes, deep nesting, huge text, DTD and entity tricks, malformed
 * text) against random and hostile expressions must answer within {@link BOUND_MS} with a value
 * or NULL/UNKNOWN, never throw, and never resolve an entity.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TextMessage } from '../../../../src/jms/message/text-message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { CompiledXPath, InvalidXPathError } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { parseXml } from '../../../../src/jms/selector/xpath/xml-document.js';

const SEED = 20261201;
/**
 * The most one body and expression may take, parse and evaluation together. It is there to catch
 * a blow-up (exponential or quadratic work takes minutes on these bodies), not to measure speed:
 * `string(/)` on a 700 KB body took 2.6 s while CI ran the unit files in parallel on a machine at
 * load 8, so the bound leaves room for that.
 */
const BOUND_MS = 5000;

const NAMES = ['a', 'b', 'item', 'id', 'o:x', 'été', '_n'];
const TEXT = fc.oneof(
  fc.constantFrom(
    '1',
    ' 66 ',
    'Mitre Saw',
    '&lt;&amp;&#65;&#x1F600;',
    '&bogus;',
    '&#0;',
    '<![CDATA[<x>]]>',
    '<!-- c -->',
    '<?pi x?>',
    ']]>',
    '&',
  ),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

const element: fc.Arbitrary<string> = fc.letrec<{ element: string }>((tie) => ({
  element: fc
    .tuple(
      fc.constantFrom(...NAMES),
      fc.array(
        fc.tuple(
          fc.constantFrom('n', 'x', 'y', 'xmlns', 'xmlns:o'),
          fc.constantFrom('1', 'urn:x', '&quot;', '<'),
        ),
        { maxLength: 3 },
      ),
      fc.array(fc.oneof({ depthSize: 'small' }, TEXT, tie('element')), { maxLength: 4 }),
    )
    .map(([name, attributes, children]) => {
      const attributeText = attributes.map(([key, value]) => ` ${key}="${value}"`).join('');
      return children.length === 0
        ? `<${name}${attributeText}/>`
        : `<${name}${attributeText}>${children.join('')}</${name}>`;
    }),
})).element;

/** Bodies built to be expensive or to trick the parser. */
const hostile = fc.oneof(
  fc
    .integer({ min: 1, max: 60_000 })
    .map((count) => `<a ${Array.from({ length: count }, (_, i) => `a${i}="v"`).join(' ')}><id>1</id></a>`),
  fc
    .integer({ min: 1, max: 60_000 })
    .map((count) => `<a ${Array.from({ length: count }, () => 'x="v"').join(' ')}/>`),
  fc
    .integer({ min: 1, max: 30_000 })
    .map((depth) => `${'<a>'.repeat(depth)}<id>1</id>${'</a>'.repeat(depth)}`),
  fc.integer({ min: 1, max: 3_000_000 }).map((length) => `<a><id>${'x'.repeat(length)}</id></a>`),
  fc.integer({ min: 1, max: 150_000 }).map((count) => `<a>${'<item><id>1</id></item>'.repeat(count)}</a>`),
  fc.constantFrom(
    '<!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><a>&x;</a>',
    '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>',
    '<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><a>&lol2;</a>',
    '<?xml version="1.0"?><!DOCTYPE a SYSTEM "http://127.0.0.1:1/x.dtd"><a/>',
    '<a><!DOCTYPE b></a>',
    '<a>&x;</a>',
    '<a xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="file:///etc/passwd" parse="text"/></a>',
  ),
);

/** A body with a few characters cut, inserted or replaced. */
const mutated = fc
  .tuple(
    element,
    fc.array(
      fc.tuple(
        fc.nat(),
        fc.nat(3),
        fc.constantFrom('<', '>', '/', '&', '"', "'", '=', '!', '?', ' ', 'x', ''),
      ),
      { maxLength: 3 },
    ),
  )
  .map(([body, edits]) =>
    edits.reduce((result, [at, cut, insert]) => {
      const position = at % (result.length + 1);
      return result.slice(0, position) + insert + result.slice(position + cut);
    }, body),
  );

const body = fc.oneof(element, mutated, hostile, fc.string({ unit: 'binary', maxLength: 100 }));

const expression: fc.Arbitrary<string> = fc.letrec<{ path: string }>((tie) => ({
  path: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(
      '/a/id',
      '//id',
      '/a/@n',
      '//item[2]',
      '/a/b[@x="1"]/text()',
      'count(//*)',
      'string(/)',
      'name(/*)',
      'sum(//id)',
      '//id[last()]',
    ),
    fc.constantFrom(
      '//item[//item[//item[id = 1]]]',
      '//*[//*[//*[. = "1"]]]',
      'count(//node() | //@*)',
      '//*[string-length(.) > 0]',
      '(//*)[position() > 1]/preceding::*',
    ),
    fc
      .tuple(tie('path'), fc.constantFrom('/', '//'))
      .chain(([path, separator]) =>
        fc.constantFrom(...NAMES, '*', 'node()', 'text()').map((step) => `${path}${separator}${step}`),
      ),
    tie('path').map((path) => `//a[${path}]`),
    tie('path').map((path) => `boolean(${path})`),
    fc.string({ unit: 'binary-ascii', maxLength: 12 }),
  ),
})).path;

test('selector - fuzz (fast-check): XML bodies and XPath expressions answer in bounded time with a value or NULL, never throw (SEL-4)', () => {
  fc.assert(
    fc.property(body, expression, (text, path) => {
      let xpath: CompiledXPath;
      try {
        xpath = new CompiledXPath(path);
      } catch (error) {
        assert.ok(error instanceof InvalidXPathError, String(error));
        return;
      }
      const started = performance.now();
      const found = xpath.selectString(new XMLMessage(text));
      const truth = xpath.test(new TextMessage(text));
      const elapsed = performance.now() - started;
      assert.ok(found === null || typeof found === 'string');
      assert.ok(truth === null || typeof truth === 'boolean');
      assert.ok(elapsed < BOUND_MS, `${path} on ${text.length} characters took ${Math.round(elapsed)} ms`);
      // No DTD is read, so no entity it declares ever resolves: the body does not parse at all.
      if (/<!DOCTYPE/i.test(text)) {
        assert.equal(parseXml(text), null);
        assert.equal(found, null);
        assert.equal(truth, null);
      }
      if (found !== null) assert.ok(!found.includes('root:'), 'no file content ever leaks in');
    }),
    { seed: SEED, numRuns: 400 },
  );
});

test('selector - fuzz (fast-check): an XPath selector never selects a body that does not parse, negated or not (SEL-4)', () => {
  fc.assert(
    fc.property(body, fc.constantFrom('/a/id', 'count(//*) > 0', '//id'), (text, path) => {
      if (parseXml(text) !== null) return;
      const message = new XMLMessage(text);
      for (const selector of [
        `XPATH '${path}'`,
        `NOT XPATH '${path}'`,
        `JMS_BEA_SELECT('xpath', '${path}') = '1'`,
        `NOT (JMS_BEA_SELECT('xpath', '${path}') = '1')`,
      ]) {
        assert.equal(parseSelector(selector).matches(message), false, selector);
      }
    }),
    { seed: SEED, numRuns: 300 },
  );
});
