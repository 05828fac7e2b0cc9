import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { parseXml } from '../../../../src/jms/selector/xpath/xml-document.js';
import { setXPathLimits } from '../../../../src/jms/selector/xpath/xpath-limits.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';

const value = (body: string, path: string): string | null =>
  new CompiledXPath(path).selectString(new XMLMessage(body));

test('selector - the body parser accepts well-formed XML in its usual shapes (SEL-4)', () => {
  const wellFormed = [
    '<a/>',
    '<a></a>',
    '\uFEFF<a/>',
    '<?xml version="1.0"?><a/>',
    "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n<a/>",
    '  \n<a/>\n  ',
    '<!-- before --><?pi data?><a/><!-- after --><?pi?>',
    '<a b="1" c=\'2\'/>',
    '<a  b = "1"\n\tc="2" />',
    '<a></a >',
    '<a>x<b/>y<c></c>z</a>',
    '<a><![CDATA[<not a tag> & ]]></a>',
    '<a>&lt;&gt;&amp;&apos;&quot;&#38;&#x26;&#x1F600;</a>',
    '<a>></a>',
    '<a x="&gt;&lt;&amp;"/>',
    '<a>]]</a>',
    '<a-b.c_d1 e-f="1"/>',
    '<été ñ="1">ü</été>',
    '<a>\r\n</a>',
    '<a><!----></a>',
  ];
  for (const body of wellFormed) assert.notEqual(parseXml(body), null, JSON.stringify(body));
});

test('selector - the body parser refuses DTDs and what XML calls not well-formed (SEL-4)', () => {
  const refused = [
    '<!DOCTYPE a><a/>',
    '<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',
    '<a><!DOCTYPE b></a>',
    '<a>&e;</a>',
    '<a>&#xD800;</a>',
    '<a>&#1114112;</a>',
    '<a>& b</a>',
    '<a x=1/>',
    '<a x="1"y="2"/>',
    '<a x/>',
    '<a x="1" x="1"/>',
    '<a><!-- a -- b --></a>',
    '<a></b>',
    '<a></ab>',
    '<ab></a>',
    '<a>',
    '</a>',
    '<a/><a/>',
    'text<a/>',
    '<a/>text',
    '<a><?xml version="1.0"?></a>',
    ' <?xml version="1.0"?><a/>',
    '<a><![CDATA[x]]</a>',
    '<a><!X></a>',
    '<>',
    '< a/>',
    '<a b="<"/>',
    '<a b="1></a>',
  ];
  for (const body of refused) assert.equal(parseXml(body), null, JSON.stringify(body));
});

test('selector - attribute values and text are normalised as XML says (SEL-4)', () => {
  assert.equal(value('<a x="1\n2\t3\r\n4"/>', '/a/@x'), '1 2 3 4');
  assert.equal(value('<a x="1&#10;2"/>', '/a/@x'), '1\n2');
  assert.equal(value('<a>1\r\n2\r3</a>', '/a'), '1\n2\n3');
  assert.equal(value('<a>1&#13;2</a>', '/a'), '1\r2');
  assert.equal(value('<a x=\'say "hi"\'/>', '/a/@x'), 'say "hi"');
});

test('selector - very deep documents parse without overflowing the stack (SEL-4)', (t) => {
  // Deeper than the default maxDepth allows, to show the parser itself has no depth bound.
  const previous = setXPathLimits({ maxDepth: 50_000, maxSteps: 1_000_000 });
  t.after(() => setXPathLimits(previous));
  const depth = 20_000;
  const body = `${'<d>'.repeat(depth)}x${'</d>'.repeat(depth)}`;
  assert.notEqual(parseXml(body), null);
  assert.equal(value(body, '//d[not(d)]'), 'x');
  assert.equal(parseXml(`${'<d>'.repeat(depth)}x${'</d>'.repeat(depth - 1)}`), null);
});

test('selector - an element with 20,000 attributes parses in linear time, duplicates still refused (SEL-4)', (t) => {
  const previous = setXPathLimits({ maxAttributes: 100_000 });
  t.after(() => setXPathLimits(previous));
  const count = 20_000;
  const attributes = Array.from({ length: count }, (_, i) => `a${i}="v${i}"`).join(' ');
  const started = performance.now();
  const document = parseXml(`<order ${attributes}><id>1</id></order>`);
  const elapsed = performance.now() - started;
  assert.notEqual(document, null);
  // The duplicate check compared each name with every earlier one: 20,000 took 7.6 s.
  assert.ok(elapsed < 1000, `parsing took ${Math.round(elapsed)} ms`);
  assert.equal(value(`<order ${attributes}/>`, `/order/@a${count - 1}`), `v${count - 1}`);
  // Duplicates among the first names, past them, and across the two.
  assert.equal(parseXml(`<order ${attributes} a7="x"/>`), null);
  assert.equal(parseXml(`<order ${attributes} a19999="x"/>`), null);
  assert.equal(parseXml(`<order a1="x" ${attributes}/>`), null);
  assert.equal(parseXml(`<order ${attributes} b0="x" b1="y" b0="z"/>`), null);
  // A second tag in the same body starts its own set of names.
  assert.notEqual(parseXml(`<r><order ${attributes}/><order ${attributes}/></r>`), null);
});

test('selector - a big body parses in linear time (SEL-4)', () => {
  const items = Array.from({ length: 20_000 }, (_, i) => `<item n="${i}">v${i} &amp; more</item>`).join('\n');
  const body = `<list>${items}</list>`;
  const started = performance.now();
  assert.notEqual(parseXml(body), null);
  assert.equal(value(body, '/list/item[20000]/@n'), '19999');
  assert.ok(performance.now() - started < 2000);
});
