import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledXPath } from '../../../../src/jms/selector/xpath/compiled-xpath.js';
import { parseXml } from '../../../../src/jms/selector/xpath/xml-document.js';
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

test('selector - very deep documents parse without overflowing the stack (SEL-4)', () => {
  const depth = 20_000;
  const body = `${'<d>'.repeat(depth)}x${'</d>'.repeat(depth)}`;
  assert.notEqual(parseXml(body), null);
  assert.equal(value(body, '//d[not(d)]'), 'x');
  assert.equal(parseXml(`${'<d>'.repeat(depth)}x${'</d>'.repeat(depth - 1)}`), null);
});

test('selector - a big body parses in linear time (SEL-4)', () => {
  const items = Array.from({ length: 20_000 }, (_, i) => `<item n="${i}">v${i} &amp; more</item>`).join('\n');
  const body = `<list>${items}</list>`;
  const started = performance.now();
  assert.notEqual(parseXml(body), null);
  assert.equal(value(body, '/list/item[20000]/@n'), '19999');
  assert.ok(performance.now() - started < 2000);
});
