import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector, type Explanation } from '../../../../src/jms/selector/index.js';
import { message } from './helpers.js';

function flatten(explanation: Explanation, depth = 0): string[] {
  return [
    `${'  '.repeat(depth)}${explanation.text} => ${explanation.value}`,
    ...explanation.children.flatMap((child) => flatten(child, depth + 1)),
  ];
}

test('selector - explain shows every sub-expression with TRUE/FALSE/UNKNOWN or its value (SEL-2)', () => {
  const selector = parseSelector(
    "JMSPriority > 3 AND (color = 'red' OR weight BETWEEN 10 AND 20) AND NOT missing = 1",
  );
  const explanation = selector.explain(message({ weight: 15 }, (m) => m.setJMSPriority(5)));
  assert.deepEqual(flatten(explanation), [
    "JMSPriority > 3 AND (color = 'red' OR weight BETWEEN 10 AND 20) AND NOT missing = 1 => UNKNOWN",
    '  JMSPriority > 3 => TRUE',
    '    JMSPriority => 5',
    "  (color = 'red' OR weight BETWEEN 10 AND 20) => TRUE",
    "    color = 'red' => UNKNOWN",
    '      color => NULL',
    '    weight BETWEEN 10 AND 20 => TRUE',
    '      weight => 15',
    '  NOT missing = 1 => UNKNOWN',
    '    missing = 1 => UNKNOWN',
    '      missing => NULL',
  ]);
  assert.equal(explanation.condition, true);
  const priority = explanation.children[0]!.children[0]!;
  assert.equal(priority.condition, false);
  assert.equal(priority.type, 'header');
  assert.equal(explanation.children[1]!.children[1]!.children[0]!.type, 'int');
  assert.equal(explanation.children[1]!.children[0]!.children[0]!.type, 'absent');
});

test('selector - explain shows what XPath found and whether the body parsed (SEL-4)', () => {
  const selector = parseSelector(
    "JMS_BEA_SELECT('xpath', '/order/item[2]/name/text()') = 'Mitre Saw' OR XPATH '/order/rush'",
  );
  const good = selector.explain(
    new XMLMessage('<order><item><name>Drill</name></item><item><name>Mitre Saw</name></item></order>'),
  );
  assert.equal(good.value, 'TRUE');
  const select = good.children[0]!.children[0]!;
  assert.equal(select.value, "'Mitre Saw'");
  assert.deepEqual(select.xpath, {
    expression: '/order/item[2]/name/text()',
    found: 'Mitre Saw',
    body: 'xml',
  });
  assert.deepEqual(good.children[1]!.xpath, { expression: '/order/rush', body: 'xml' });
  assert.equal(good.children[1]!.value, 'FALSE');
  const bad = selector.explain(new XMLMessage('<order>'));
  assert.equal(bad.value, 'UNKNOWN');
  assert.deepEqual(bad.children[0]!.children[0]!.xpath, {
    expression: '/order/item[2]/name/text()',
    found: null,
    body: 'malformed',
  });
  assert.equal(selector.explain(message()).children[1]!.xpath?.body, 'not-text');
});

test('selector - explain of an empty selector and of a bare boolean property (SEL-1)', () => {
  assert.deepEqual(parseSelector('').explain(message()), {
    text: '',
    value: 'TRUE',
    condition: true,
    children: [],
  });
  const bare = parseSelector('flag AND other').explain(message({ flag: true, other: 'yes' }));
  assert.deepEqual(flatten(bare), ['flag AND other => UNKNOWN', '  flag => TRUE', '  other => UNKNOWN']);
});

test('selector - explain formats values in selector syntax (SEL-2)', () => {
  const target = message({ s: "it's", l: { type: 'long', value: 9007199254740993n }, d: 2.5, b: false });
  const values = (text: string) => parseSelector(text).explain(target).children[0]!.value;
  assert.equal(values("s = 'x'"), "'it''s'");
  assert.equal(values('l = 1'), '9007199254740993');
  assert.equal(values('d = 1'), '2.5');
  assert.equal(values('b = TRUE'), 'FALSE');
  assert.equal(values('l + 1 = 0'), '9007199254740994');
});
