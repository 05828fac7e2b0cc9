import { mock, test } from 'node:test';
import fs from 'node:fs';
import assert from 'node:assert/strict';
import { DOMParser } from '@xmldom/xmldom';
import { createRequire } from 'node:module';
import { BytesMessage } from '../../../../src/jms/message/bytes-message.js';
import { MapMessage } from '../../../../src/jms/message/map-message.js';
import type { Message } from '../../../../src/jms/message/message.js';
import { TextMessage } from '../../../../src/jms/message/text-message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { compileFastPath } from '../../../../src/jms/selector/xpath/fast-path.js';
import { ParsedBody } from '../../../../src/jms/selector/xpath/parsed-body.js';
import { assertInvalid, truth } from './helpers.js';

/** The order document of WebLogic's JMS programming guide (its XPath selector example), verbatim. */
const ORDER = `<order>
	<item>
		<id>007</id>
		<name>Hand-held Power Drill</name>
		<description>Compact, assorted colors.</description>
		<price>$34.99</price>
	</item>
	<item>
		<id>123</id>
		<name>Mitre Saw</name>
		<description>Three blades sizes.</description>
		<price>$69.99</price>
	</item>
	<item>
		<id>66</id>
		<name>Socket Wrench Set</name>
		<description>Set of 10.</description>
		<price>$19.99</price>
	</item>
</order>`;

const xml = (body: string | null) => new XMLMessage(body);

test('selector - the two XPath examples of the WebLogic guide (SEL-4)', () => {
  // The guide prints its quotes typographically (`xpath'); in a selector they are straight quotes.
  const mitreSaw = "JMS_BEA_SELECT('xpath', '/order/item[2]/name/text()') = 'Mitre Saw'";
  const sixtySix = "JMS_BEA_SELECT('xpath', '/order/item[3]/id/text()') = '66'";
  assert.equal(parseSelector(mitreSaw).matches(xml(ORDER)), true);
  assert.equal(parseSelector(sixtySix).matches(xml(ORDER)), true);
  assert.equal(parseSelector(mitreSaw.replace('[2]', '[1]')).matches(xml(ORDER)), false);
  // Printed verbatim, the typographic quotes are refused with a pointed message.
  assertInvalid(
    "JMS_BEA_SELECT(`xpath', `/order/item[2]/name/text()') = `Mitre Saw'",
    16,
    'string literals use straight single quotes',
  );
});

test('selector - the attribute example of the best-practices book (SEL-4)', () => {
  const body = '<order type="buy">\n<symbol>beas</symbol>\n<quantity>5000</quantity>\n</order>';
  assert.equal(truth("JMS_BEA_SELECT('xpath','/order/attribute::type') = 'buy'", xml(body)), 'TRUE');
  assert.equal(truth("JMS_BEA_SELECT('xpath','/order/@type') = 'buy'", xml(body)), 'TRUE');
  // XML names are case-sensitive: the book's /Order does not select <order>.
  assert.equal(truth("JMS_BEA_SELECT('xpath','/Order/attribute::type') = 'buy'", xml(body)), 'UNKNOWN');
});

test('selector - JMS_BEA_SELECT is NULL when the body does not parse, the node is absent or has no value (SEL-4)', () => {
  const select = "JMS_BEA_SELECT('xpath', '/order/item')";
  assert.equal(truth(`${select} IS NULL`, xml('<order><item>x</item>')), 'TRUE', 'missing end tag');
  assert.equal(truth(`${select} IS NULL`, xml('<order><other/></order>')), 'TRUE', 'absent');
  assert.equal(truth(`${select} IS NULL`, xml('<order><item></item></order>')), 'TRUE', 'empty element');
  assert.equal(truth(`${select} IS NULL`, xml('<order><item/></order>')), 'TRUE', 'self-closing element');
  assert.equal(
    truth("JMS_BEA_SELECT('xpath', '/order') IS NULL", xml('<order></order>')),
    'TRUE',
    'the guide: <order></order>',
  );
  assert.equal(
    truth("JMS_BEA_SELECT('xpath', '/order/@id') IS NULL", xml('<order id=""/>')),
    'TRUE',
    'empty attribute',
  );
  assert.equal(truth(`${select} = 'x'`, xml('<order><item>x</item></order>')), 'TRUE');
  assert.equal(
    truth(`${select} = ' '`, xml('<order><item> </item></order>')),
    'TRUE',
    'white space is a value',
  );
  // It compares like any string: NULL makes comparisons UNKNOWN, NOT cannot flip them.
  assert.equal(truth(`${select} = 'x'`, xml('<order><item>x</item>')), 'UNKNOWN');
  assert.equal(truth(`NOT (${select} = 'x')`, xml('<order><item>x</item>')), 'UNKNOWN');
  assert.equal(truth(`${select} <> 'x'`, xml('<order/>')), 'UNKNOWN');
});

test('selector - malformed XML never matches an XPath test and never throws (SEL-4)', () => {
  const malformed = [
    '<order><item>x</item>',
    '<order><item>x</order></item>',
    '<order>',
    'not xml at all',
    '',
    '<order a=1/>',
    '<order a="1" a="2"/>',
    '<order>&unknown;</order>',
    '<order>&amp</order>',
    '<order>a < b</order>',
    '<order/><second/>',
    '<order/>trailing',
    'leading<order/>',
    '<order><!-- unterminated </order>',
    '<order><![CDATA[ unterminated </order>',
    '<order>]]></order>',
    '<?xml version="1.0"?><?xml version="1.0"?><order/>',
    '<order>&#0;</order>',
    '<order x="<"/>',
    '<1order/>',
    '<order/ >',
    '<order></ order>',
  ];
  const selectors = [
    "JMS_BEA_SELECT('xpath', '/order') = 'x'",
    "NOT (JMS_BEA_SELECT('xpath', '/order') = 'x')",
    "JMS_BEA_SELECT('xpath', '//item') LIKE '%'",
    "XPATH '/order'",
    "NOT XPATH '/order'",
    "XPATH 'count(/order) = 1'",
    "NOT XPATH 'count(/order) = 1'",
    "JMS_BEA_SELECT('xpath', 'string(/order)') = ''",
  ];
  for (const body of malformed) {
    for (const selector of selectors) {
      assert.equal(
        parseSelector(selector).matches(xml(body)),
        false,
        `${selector} on ${JSON.stringify(body)}`,
      );
    }
    assert.equal(new ParsedBody(body).document, null, `${JSON.stringify(body)} is malformed`);
  }
});

test('selector - XPATH boolean form (ActiveMQ/Artemis): TRUE when the result is truthy (SEL-4)', () => {
  const order = xml(ORDER);
  assert.equal(truth("XPATH '/order/item'", order), 'TRUE');
  assert.equal(truth("XPATH '/order/nothing'", order), 'FALSE');
  assert.equal(truth("NOT XPATH '/order/nothing'", order), 'TRUE');
  assert.equal(truth("XPATH '/order/item[id=66]'", order), 'TRUE');
  assert.equal(truth("XPATH '/order/item[id=67]'", order), 'FALSE');
  assert.equal(truth("XPATH 'count(/order/item) = 3'", order), 'TRUE');
  assert.equal(truth("XPATH 'count(/order/item)'", order), 'TRUE', 'a non-zero number');
  assert.equal(truth("XPATH 'count(/order/nothing)'", order), 'FALSE', 'zero');
  assert.equal(truth("XPATH 'string(/order/nothing)'", order), 'FALSE', 'an empty string');
  assert.equal(truth("XPATH '//price[starts-with(., ''$6'')]'", order), 'TRUE');
  assert.equal(truth("xpath '/order' AND JMSPriority = 4", order), 'TRUE', 'XPATH is case-insensitive');
  // Not text, no body, or malformed: UNKNOWN, so NOT cannot select it either.
  for (const body of [
    new BytesMessage(new Uint8Array([60, 97, 47, 62])),
    new MapMessage({ a: 1 }),
    xml(null),
    xml('<a>'),
  ]) {
    assert.equal(truth("XPATH '/a'", body), 'UNKNOWN');
    assert.equal(truth("NOT XPATH '/a'", body), 'UNKNOWN');
  }
  // XPATH is only a keyword before a string: a property may still be called XPATH.
  assert.equal(truth('XPATH = 1', order), 'UNKNOWN');
});

test('selector - XPath works on any text body, TextMessage or XMLMessage (SEL-4)', () => {
  const selector = parseSelector("JMS_BEA_SELECT('xpath', '/a/b') = 'c'");
  assert.equal(selector.matches(new TextMessage('<a><b>c</b></a>')), true);
  assert.equal(selector.matches(new XMLMessage('<a><b>c</b></a>')), true);
  assert.equal(selector.matches(new BytesMessage(Buffer.from('<a><b>c</b></a>'))), false);
});

test('selector - XPath expressions are compiled when the selector is parsed (SEL-4, SEL-5)', () => {
  assertInvalid(
    "JMS_BEA_SELECT('xpath', '/order/item[') = 'x'",
    25,
    "invalid XPath expression '/order/item['",
  );
  assertInvalid("XPATH '///'", 7, 'invalid XPath expression');
  assertInvalid("XPATH 'nosuchfunction(/a)'", 7, 'Unknown function');
  assertInvalid("JMS_BEA_SELECT('xpath', '/ns:order') = 'x'", 25, 'local-name()');
  assertInvalid(
    "JMS_BEA_SELECT('sql', '/order') = 'x'",
    16,
    "expected 'xpath' as the first argument of JMS_BEA_SELECT",
  );
  assertInvalid("JMS_BEA_SELECT('xpath' '/order') = 'x'", 24, "expected ',' after 'xpath'");
  assertInvalid(
    "JMS_BEA_SELECT('xpath', 5) = 'x'",
    25,
    'expected an XPath expression string in JMS_BEA_SELECT',
  );
  assertInvalid("JMS_BEA_SELECT('xpath', '/a' = 'x'", 30, "expected ')' to close JMS_BEA_SELECT");
  assertInvalid("JMS_BEA_SELECT('xpath', '/a') > 5", 1, 'strings and booleans compare only with = and <>');
  assertInvalid(
    "JMS_BEA_SELECT('xpath', '/a')",
    1,
    'expected a condition as the selector but found a string',
  );
  assert.equal(
    truth("jms_bea_select('XPATH', '/a') = 'b'", xml('<a>b</a>')),
    'TRUE',
    'function and type are case-insensitive',
  );
});

test('selector - the body is parsed at most once per message, however many selectors test it (SEL-4)', () => {
  const selectors = [
    parseSelector("JMS_BEA_SELECT('xpath', '/order/item[2]/name/text()') = 'Mitre Saw'"),
    parseSelector("XPATH '/order/item[id=66]'"),
    parseSelector("JMS_BEA_SELECT('xpath', 'string(//item[3]/name)') = 'Socket Wrench Set'"),
    parseSelector("JMS_BEA_SELECT('xpath', '//id') = '007'"),
  ];
  const target = xml(ORDER);
  // Read through a function: assert.equal would narrow the property's type for the rest of the test.
  const cached = (m: Message): unknown => m.parsedBodyCache;
  assert.equal(cached(target), undefined);
  for (const selector of selectors) assert.equal(selector.matches(target), true);
  const cache = cached(target);
  assert.ok(cache instanceof ParsedBody);
  const dom = cache.dom();
  for (let i = 0; i < 3; i++) for (const selector of selectors) assert.equal(selector.matches(target), true);
  assert.equal(cached(target), cache, 'the same parse is reused');
  assert.equal(cache.dom(), dom, 'the DOM, when needed, is built once too');
  // A copy (as delivered to each subscriber) shares the parse.
  assert.equal(cached(target.copy()), cache);
  // A new body resets the cache.
  target.setText('<order><item><name>x</name></item><item><name>Mitre Saw</name></item></order>');
  assert.equal(cached(target), undefined);
  assert.equal(selectors[0]!.matches(target), true);
  assert.notEqual(cached(target), cache);
});

test('selector - no DTD, no entity expansion, no external entity: XXE reads no file (SEL-4)', () => {
  const xxe = `<?xml version="1.0"?>
<!DOCTYPE order [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<order><item>&xxe;</item></order>`;
  const selectors = [
    "JMS_BEA_SELECT('xpath', '/order/item') LIKE '%root%'",
    "JMS_BEA_SELECT('xpath', '/order/item') IS NOT NULL",
    "JMS_BEA_SELECT('xpath', 'string(/order/item)') LIKE '%'",
    "XPATH 'contains(/order/item, ''root'')'",
    "XPATH '/order'",
  ];
  // Watch the file system: nothing may be opened while the selectors run.
  const opened: string[] = [];
  const restore = [
    mock.method(fs, 'openSync', (...args: unknown[]) => opened.push(String(args[0]))),
    mock.method(fs, 'readFileSync', (...args: unknown[]) => opened.push(String(args[0]))),
    mock.method(fs, 'open', (...args: unknown[]) => opened.push(String(args[0]))),
    mock.method(fs, 'readFile', (...args: unknown[]) => opened.push(String(args[0]))),
  ];
  try {
    for (const selector of selectors)
      assert.equal(parseSelector(selector).matches(xml(xxe)), false, selector);
  } finally {
    for (const spy of restore) spy.mock.restore();
  }
  assert.deepEqual(opened, []);
  const explanation = parseSelector(selectors[0]).explain(xml(xxe));
  assert.equal(explanation.children[0]!.xpath?.body, 'malformed');
  assert.equal(new ParsedBody(xxe).dom(), null, 'the DOM parser never sees a DOCTYPE');
  // A parameter entity and an external DTD subset are refused the same way.
  const external = '<!DOCTYPE order SYSTEM "http://127.0.0.1:9/evil.dtd"><order>x</order>';
  assert.equal(parseSelector("XPATH '/order'").matches(xml(external)), false);
  assert.equal(new ParsedBody(external).document, null);
});

test('selector - billion laughs is refused without expansion (SEL-4)', () => {
  const lines = ['<?xml version="1.0"?>', '<!DOCTYPE lolz [', ' <!ENTITY lol "lol">'];
  for (let i = 1; i <= 9; i++)
    lines.push(` <!ENTITY lol${i} "${`&lol${i === 1 ? '' : i - 1};`.repeat(10)}">`);
  lines.push(']>', '<lolz>&lol9;</lolz>');
  const bomb = lines.join('\n');
  const started = performance.now();
  const selector = parseSelector(
    "JMS_BEA_SELECT('xpath', '/lolz') LIKE 'lol%' OR XPATH 'string-length(/lolz) > 0'",
  );
  const target = xml(bomb);
  assert.equal(selector.matches(target), false);
  assert.equal((target.parsedBodyCache as ParsedBody).document, null);
  assert.ok(performance.now() - started < 1000, 'no expansion');
});

test('selector - only the predefined entities and character references are decoded (SEL-4)', () => {
  const body = '<a t="x&amp;y&#10;z">&lt;&gt;&amp;&apos;&quot;&#65;&#x42;<![CDATA[&amp;<>]]></a>';
  assert.equal(truth(`JMS_BEA_SELECT('xpath', '/a') = '<>&''"AB&amp;<>'`, xml(body)), 'TRUE');
  assert.equal(truth("JMS_BEA_SELECT('xpath', '/a/@t') = 'x&y\nz'", xml(body)), 'TRUE');
});

test('selector - namespaced bodies: names match as XPath 1.0 says, prefixes need local-name() (SEL-4)', () => {
  const body = '<o:order xmlns:o="urn:orders"><o:item>x</o:item></o:order>';
  assert.equal(
    truth("JMS_BEA_SELECT('xpath', '/*[local-name()=''order'']/*[local-name()=''item'']') = 'x'", xml(body)),
    'TRUE',
  );
  assert.equal(truth("XPATH '/order'", xml(body)), 'FALSE');
  const defaulted = '<order xmlns="urn:orders"><item>x</item></order>';
  // A default namespace puts <order> in it, so the unprefixed name test /order does not select it.
  assert.equal(truth("XPATH '/order'", xml(defaulted)), 'FALSE');
  assert.equal(truth("XPATH '/*[local-name()=''order'']'", xml(defaulted)), 'TRUE');
  assert.equal(truth("JMS_BEA_SELECT('xpath', '//*[local-name()=''item'']') = 'x'", xml(defaulted)), 'TRUE');
});

test('selector - XPath values: string value, first node in document order, attributes, text() (SEL-4)', () => {
  const body = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment before the root -->
<order id="42" status="open">
  <customer type="vip"><name>Ann</name></customer>
  <item kind="tool"><id>1</id><name>Saw</name></item>
  <item kind="part"><id>2</id><name>Nail<!-- split -->s</name></item>
  <item kind="tool"><id>3</id><name><![CDATA[Drill & Bits]]></name></item>
  <note>line one&#10;line two</note>
</order>
<?trailing instruction?>`;
  const value = (path: string): string | null => new CompiledXPath(path).selectString(xml(body));
  assert.equal(value('/order/@id'), '42');
  assert.equal(value('/order/attribute::status'), 'open');
  assert.equal(value('/order/customer/name'), 'Ann');
  assert.equal(value('/order/customer/@type'), 'vip');
  assert.equal(value('/order/item/name'), 'Saw', 'the first in document order');
  assert.equal(value('/order/item[2]/name'), 'Nails', 'an element has all its text');
  assert.equal(value('/order/item[2]/name/text()'), 'Nail', 'a comment splits text nodes');
  assert.equal(value('/order/item[2]/name/text()[2]'), 's');
  assert.equal(value('/order/item[3]/name'), 'Drill & Bits');
  assert.equal(value("/order/item[@kind='part']/id"), '2');
  assert.equal(value('/order/item[@kind="tool"][2]/id'), '3');
  assert.equal(value('//item[3]/id'), '3');
  assert.equal(value('//id'), '1');
  assert.equal(value('//name'), 'Ann');
  assert.equal(value('//item/name'), 'Saw');
  assert.equal(value('/order/*[2]/id'), '1');
  assert.equal(value('/order/child::note'), 'line one\nline two');
  assert.equal(value('/order/item[4]/id'), null);
  assert.equal(value('/order/item/@missing'), null);
  assert.equal(value('count(//item)'), '3');
  assert.equal(value('/order/item[last()]/id'), '3');
  assert.equal(value("concat(/order/@id, '-', /order/@status)"), '42-open');
  assert.equal(value('/order/item[id > 1]/name'), 'Nails');
  assert.equal(value('name(/*)'), 'order');
});

/** The fast path and xpath.js on xmldom must agree on everything the fast path accepts. */
test('selector - the XPath fast path agrees with xpath.js on the forms it handles (SEL-4)', () => {
  const documents = [
    ORDER,
    '<a><b x="1"><c>one</c></b><b x="2"><c>two</c><c>three</c></b><b><c/></b></a>',
    '<a><a><b>inner</b></a><b>outer</b></a>',
    // xmldom keeps CDATA apart from adjacent text, XPath joins them (see the next test): comments keep them apart here.
    '<r>t1<e>x</e>t2<e><e>deep</e></e><!--c-->t3<!--d--><![CDATA[cd]]><!--e-->t4</r>',
    '<r><i k="v" j="w">1</i><i k="v">2</i><i>3</i><j><i k="v">4</i></j></r>',
    '<r>\n  <x>\n    <y>spaced</y>\n  </x>\n</r>',
  ];
  const paths = [
    '/order/item[2]/name/text()',
    '/order/item[3]/id/text()',
    '/order/item/id',
    '//name',
    '//item[2]/price',
    '/a/b/c',
    '/a/b[2]/c',
    '/a/b[2]/c[2]',
    '/a/b[@x]/c',
    "/a/b[@x='2']/c",
    '/a/b/@x',
    '/a/b[3]/c',
    '//c',
    '//c[2]',
    '//b/c',
    '/a/a/b',
    '//a/b',
    '//b',
    '/a//c',
    '/a//b',
    '//a//b',
    '/a/*',
    '/a/*/b',
    '//*',
    '//a[2]',
    'a/b',
    '/r/text()',
    '/r/text()[2]',
    '/r/text()[3]',
    '/r/text()[4]',
    '/r/text()[5]',
    '/r/e',
    '/r/e[2]',
    '//e',
    '//e/e',
    '/r',
    '//text()',
    "/r/i[@k='v'][2]",
    "//i[@k='v'][2]",
    '/r/i[@j]',
    '/r/i/@j',
    '/r/i[3]/@k',
    "//i[@k='v']",
    '/r/j/i/@k',
    '/r/x/y',
    '/r/x',
    '/r/x/text()',
    '/r/child::x/child::y',
    '/nothing',
    '/r/nothing/deeper',
  ];
  const xpath = createRequire(import.meta.url)('xpath') as {
    parse(expression: string): {
      evaluate(options: { node: unknown }): { stringValue(): string; booleanValue(): boolean };
    };
  };
  for (const path of paths) {
    assert.ok(compileFastPath(path), `${path} should take the fast path`);
    const compiled = new CompiledXPath(path);
    for (const body of documents) {
      const dom = new DOMParser({ onError: () => undefined }).parseFromString(body, 'text/xml');
      const reference = xpath.parse(path).evaluate({ node: dom });
      const expected = reference.stringValue();
      const message = xml(body);
      assert.equal(
        compiled.selectString(message),
        expected === '' ? null : expected,
        `${path} on ${body.slice(0, 40)}`,
      );
      assert.equal(compiled.test(message), reference.booleanValue(), `XPATH ${path} on ${body.slice(0, 40)}`);
    }
  }
  for (const general of [
    'count(//a)',
    '/a/b[position()=2]',
    '//b[c]',
    '/a/b | /a/c',
    '/a/b/..',
    '/a/b[1 + 1]',
    '//@x',
    '/a[ b ]',
    '/a/b[last()]',
    '/a/node()',
    'ns:a',
  ]) {
    assert.equal(compileFastPath(general), null, `${general} goes to xpath.js`);
  }
});

test('selector - adjacent text and CDATA are one text node, as the XPath data model says (SEL-4)', () => {
  const body = '<r>t1<![CDATA[cd]]>t2<!--split-->t3</r>';
  const value = (path: string): string | null => new CompiledXPath(path).selectString(xml(body));
  assert.equal(value('/r/text()'), 't1cdt2');
  assert.equal(value('/r/text()[2]'), 't3');
  assert.equal(value('/r'), 't1cdt2t3');
});
