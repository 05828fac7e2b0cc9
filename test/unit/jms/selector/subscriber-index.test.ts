import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Message } from '../../../../src/jms/message/message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { SubscriberIndex, parseSelector, type MessageSelector } from '../../../../src/jms/selector/index.js';
import { message } from './helpers.js';

function indexOf(entries: [string, string | null][]): SubscriberIndex<string> {
  const index = new SubscriberIndex<string>();
  for (const [name, selector] of entries) index.add(name, parseSelector(selector));
  return index;
}

test('selector - the subscriber index delivers to Fred and Wilma as in the WebLogic guide (SEL-6)', () => {
  const index = indexOf([
    ['wilma', 'Wilma IS NOT NULL'],
    ['fred', 'Fred IS NOT NULL'],
    ['barney', 'Barney IS NOT NULL'],
  ]);
  const target = message({ Fred: true, Wilma: true });
  assert.deepEqual(index.match(target), ['wilma', 'fred']);
  assert.deepEqual(index.match(message({ Barney: 'yes' })), ['barney']);
  assert.deepEqual(index.match(message({ Dino: true })), []);
  assert.deepEqual(index.match(message()), []);
});

test('selector - indexed and non-indexed subscribers mix, in insertion order (SEL-6)', () => {
  const index = indexOf([
    ['a', "color = 'red'"],
    ['b', 'Wilma IS NOT NULL'],
    ['c', null],
    ['d', 'Fred IS NOT NULL'],
    ['e', 'Wilma IS NOT NULL'],
    ['f', 'Wilma IS NOT NULL AND weight > 1'],
    ['g', 'Fred IS NULL'],
  ]);
  assert.deepEqual(index.match(message({ Wilma: 1, Fred: 1, color: 'red', weight: 2 })), [
    'a',
    'b',
    'c',
    'd',
    'e',
    'f',
  ]);
  assert.deepEqual(index.match(message({ Fred: 1 })), ['c', 'd']);
  assert.deepEqual(index.match(message({ Wilma: 1 })), ['b', 'c', 'e', 'g']);
  assert.deepEqual(index.match(message({ color: 'blue' })), ['c', 'g']);
  // The index gives the same answer as testing every selector, in the same order.
  const selectors: [string, MessageSelector][] = [];
  const all = new SubscriberIndex<string>();
  for (let i = 0; i < 200; i++) {
    const selector = parseSelector(
      i % 3 === 0
        ? `p${i % 17} IS NOT NULL`
        : i % 3 === 1
          ? `p${i % 11} = ${i % 5}`
          : `JMSPriority > ${i % 9}`,
    );
    selectors.push([`s${i}`, selector]);
    all.add(`s${i}`, selector);
  }
  for (let m = 0; m < 50; m++) {
    const properties: Record<string, number> = {};
    for (let p = 0; p < 17; p++) if ((m * 7 + p) % 4 === 0) properties[`p${p}`] = (m + p) % 5;
    const target = message(properties, (x) => x.setJMSPriority(m % 10));
    assert.deepEqual(
      all.match(target),
      selectors.filter(([, s]) => s.matches(target)).map(([name]) => name),
    );
  }
});

test('selector - remove takes subscribers out of every kind of bucket (SEL-6)', () => {
  const index = indexOf([
    ['a', 'Wilma IS NOT NULL'],
    ['b', 'Wilma IS NOT NULL'],
    ['c', 'JMSCorrelationID IS NOT NULL'],
    ['d', 'TRUE'],
  ]);
  const target = message({ Wilma: 1 }, (m) => m.setJMSCorrelationID('x'));
  assert.deepEqual(index.match(target), ['a', 'b', 'c', 'd']);
  assert.equal(index.remove('a'), true);
  assert.equal(index.remove('a'), false);
  assert.deepEqual(index.match(target), ['b', 'c', 'd']);
  index.remove('b');
  index.remove('c');
  index.remove('d');
  assert.deepEqual(index.match(target), []);
  assert.equal(index.size, 0);
  assert.equal(index.remove('nobody'), false);
});

test('selector - adding a subscriber again replaces its selector and moves it last (SEL-6)', () => {
  const index = indexOf([
    ['a', 'Wilma IS NOT NULL'],
    ['b', 'TRUE'],
  ]);
  index.add('a', parseSelector('Fred IS NOT NULL'));
  assert.equal(index.size, 2);
  assert.deepEqual(index.match(message({ Wilma: 1 })), ['b']);
  assert.deepEqual(index.match(message({ Fred: 1 })), ['b', 'a']);
  assert.deepEqual(index.subscribers(), ['b', 'a']);
  assert.equal(index.has('a'), true);
});

test('selector - header identifiers in the indexed form test the header, not a property (SEL-6, SEL-3)', () => {
  const index = indexOf([
    ['corr', 'JMSCorrelationID IS NOT NULL'],
    ['type', 'JMSType IS NOT NULL'],
    ['prio', 'JMSPriority IS NOT NULL'],
    ['mid', 'JMSMessageID IS NOT NULL'],
    ['prop', 'Wilma IS NOT NULL'],
  ]);
  const plain = new Message();
  assert.deepEqual(index.match(plain), ['prio'], 'JMSPriority is never NULL');
  const withHeaders = new Message();
  withHeaders.setJMSCorrelationID('c');
  withHeaders.setJMSType('t');
  assert.deepEqual(index.match(withHeaders), ['corr', 'type', 'prio']);
  withHeaders.setJMSMessageID('ID:1');
  withHeaders.setStringProperty('Wilma', 'x');
  assert.deepEqual(index.match(withHeaders), ['corr', 'type', 'prio', 'mid', 'prop']);
});

test('selector - JMSX properties are indexed like other properties (SEL-6)', () => {
  const index = indexOf([
    ['group', 'JMSXGroupID IS NOT NULL'],
    ['count', 'JMSXDeliveryCount IS NOT NULL'],
  ]);
  const target = message({ JMSXGroupID: 'g' });
  assert.deepEqual(index.match(target), ['group']);
  target.deliveryCount = 1;
  assert.deepEqual(index.match(target), ['group', 'count']);
});

test('selector - forEachMatch visits matches in order; XPath selectors share one parse (SEL-6, SEL-4)', () => {
  const index = new SubscriberIndex<number>();
  for (let i = 0; i < 10; i++) index.add(i, parseSelector(`JMS_BEA_SELECT('xpath', '/a/@n') = '${i % 3}'`));
  const target = new XMLMessage('<a n="1"/>');
  const seen: number[] = [];
  index.forEachMatch(target, (subscriber) => seen.push(subscriber));
  assert.deepEqual(seen, [1, 4, 7]);
});

test('selector - indexed publish cost does not grow with indexed subscribers (SEL-6)', () => {
  const index = new SubscriberIndex<number>();
  let evaluations = 0;
  for (let i = 0; i < 50_000; i++) {
    const selector = parseSelector(`user${i} IS NOT NULL`);
    // A spy: the index must not call matches on indexed property subscribers.
    index.add(i, {
      ...selector,
      matches: (m) => {
        evaluations++;
        return selector.matches(m);
      },
    });
  }
  const target = message({ user7: true, user49999: true, other: 1 });
  assert.deepEqual(index.match(target), [7, 49999]);
  assert.equal(evaluations, 0);
});

test('selector - subscribers sharing an identifier keep their order through removes and re-adds (SEL-6)', () => {
  const index = indexOf([
    ['a', 'sell IS NOT NULL'],
    ['b', 'sell IS NOT NULL'],
    ['c', 'sell IS NOT NULL'],
    ['x', 'buy IS NOT NULL'],
  ]);
  const sell = message({ sell: 1, buy: 1 });
  assert.deepEqual(index.match(sell), ['a', 'b', 'c', 'x']);
  index.remove('b');
  assert.deepEqual(index.match(sell), ['a', 'c', 'x']);
  index.remove('a');
  assert.deepEqual(index.match(sell), ['c', 'x']);
  index.add('b', parseSelector('sell IS NOT NULL'));
  index.add('a', parseSelector('sell IS NOT NULL'));
  assert.deepEqual(index.match(sell), ['c', 'x', 'b', 'a']);
  index.remove('c');
  index.remove('b');
  index.remove('a');
  assert.deepEqual(index.match(sell), ['x']);
});
