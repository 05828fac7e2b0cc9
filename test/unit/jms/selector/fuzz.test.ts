import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidSelectorError } from '../../../../src/jms/errors.js';
import { BytesMessage } from '../../../../src/jms/message/bytes-message.js';
import type { Message } from '../../../../src/jms/message/message.js';
import { TextMessage } from '../../../../src/jms/message/text-message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';
import { FUZZ_VOCABULARY, compileAndEvaluate, message } from './helpers.js';

/** mulberry32: a small seeded PRNG, so a failure reproduces with the same seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SEED = 20240611;

const IDENTIFIERS = [
  'a',
  'b',
  'color',
  'weight',
  'big',
  'f',
  'd',
  'flag',
  'missing',
  'NOTE',
  'ORDER',
  'JMSPriority',
  'JMSType',
  'JMSCorrelationID',
  'JMSDeliveryMode',
  'JMSTimestamp',
  'JMSRedelivered',
  'JMSXDeliveryCount',
  'JMSXGroupID',
  'été',
  '$x',
  '_y',
  'XPATH',
  'JMS_BEA_SELECT',
];
const NUMBERS = [
  ...FUZZ_VOCABULARY.numbers,
  '-9223372036854775808',
  '2147483648',
  '1e3',
  '.5',
  '7.',
  '2.5f',
  '1d',
  '0.1',
  '1e-3',
  '3.4028235e38',
];
const STRINGS = [...FUZZ_VOCABULARY.strings, "'100!%'", "'PERSISTENT'", "'é😀'", "'x'"];
const XPATHS = [
  '/order/item[2]/name/text()',
  '//id',
  '/order/@id',
  'count(//item)',
  '/a/b[@x=1]',
  '//*',
  'string(/)',
  '/order/item[last()]',
  'boolean(/x)',
  '/o:x',
  '///',
  '/a[',
  '',
];
const TOKENS = [
  ...IDENTIFIERS,
  ...NUMBERS,
  ...STRINGS,
  ...FUZZ_VOCABULARY.keywords,
  'and',
  'Not',
  'null',
  ...FUZZ_VOCABULARY.operators,
  '==',
  '!=',
  '"',
  '`',
  '#',
  "'",
  '.',
  '\t',
  '\n',
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function value(random: () => number, depth: number): string {
  const roll = random();
  if (depth > 4 || roll < 0.35) return pick(random, IDENTIFIERS.slice(0, 18));
  if (roll < 0.55) return pick(random, NUMBERS);
  if (roll < 0.7) return pick(random, STRINGS);
  if (roll < 0.8)
    return `${value(random, depth + 1)} ${pick(random, ['+', '-', '*', '/'])} ${value(random, depth + 1)}`;
  if (roll < 0.85) return `-${value(random, depth + 1)}`;
  if (roll < 0.9) return `(${value(random, depth + 1)})`;
  return `JMS_BEA_SELECT('xpath', '${pick(random, XPATHS).replace(/'/g, "''")}')`;
}

function condition(random: () => number, depth: number): string {
  const roll = random();
  if (depth > 5) return `${value(random, depth)} = ${value(random, depth)}`;
  if (roll < 0.25)
    return `${value(random, depth)} ${pick(random, ['=', '<>', '<', '>', '<=', '>='])} ${value(random, depth)}`;
  if (roll < 0.32)
    return `${value(random, depth)} ${random() < 0.5 ? 'NOT ' : ''}BETWEEN ${value(random, depth)} AND ${value(random, depth)}`;
  if (roll < 0.38)
    return `${pick(random, IDENTIFIERS)} ${random() < 0.5 ? 'NOT ' : ''}IN (${Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(random, STRINGS)).join(', ')})`;
  if (roll < 0.44)
    return `${pick(random, IDENTIFIERS)} ${random() < 0.5 ? 'NOT ' : ''}LIKE ${pick(random, STRINGS)}${random() < 0.3 ? " ESCAPE '!'" : ''}`;
  if (roll < 0.5) return `${value(random, depth)} IS ${random() < 0.5 ? 'NOT ' : ''}NULL`;
  if (roll < 0.58) return `NOT ${condition(random, depth + 1)}`;
  if (roll < 0.72) return `${condition(random, depth + 1)} AND ${condition(random, depth + 1)}`;
  if (roll < 0.84) return `${condition(random, depth + 1)} OR ${condition(random, depth + 1)}`;
  if (roll < 0.9) return `(${condition(random, depth + 1)})`;
  if (roll < 0.95) return `XPATH '${pick(random, XPATHS).replace(/'/g, "''")}'`;
  return pick(random, ['TRUE', 'FALSE', 'flag', 'missing', 'JMSRedelivered']);
}

function tokenSoup(random: () => number): string {
  const length = 1 + Math.floor(random() * 12);
  return Array.from({ length }, () => pick(random, TOKENS)).join(random() < 0.8 ? ' ' : '');
}

const NOISE = [
  '(',
  ')',
  "'",
  '"',
  '=',
  '<',
  '>',
  ' ',
  '-',
  '.',
  '0',
  'e',
  'x',
  'L',
  '%',
  '_',
  '!',
  ',',
  '\u0000',
  '\u00a0',
  '😀',
  'AND',
  'NOT ',
  "''",
];

function mutate(random: () => number, text: string): string {
  let result = text;
  const edits = 1 + Math.floor(random() * 3);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (result.length + 1));
    const roll = random();
    if (roll < 0.35) result = result.slice(0, at) + result.slice(at + 1 + Math.floor(random() * 3));
    else if (roll < 0.75) result = result.slice(0, at) + pick(random, NOISE) + result.slice(at);
    else if (roll < 0.9) result = result.slice(0, at);
    else result = result.slice(0, at) + result.slice(Math.floor(random() * result.length));
  }
  return result;
}

function messages(): Message[] {
  const xml = new XMLMessage(
    '<order id="7"><item><id>1</id><name>Saw</name></item><item><id>2</id><name>Mitre Saw</name></item></order>',
  );
  const text = new TextMessage('<order><item>unterminated</order>');
  const plain = message(
    {
      a: 1,
      b: { type: 'long', value: 9223372036854775807n },
      color: 'red',
      weight: 2.5,
      big: { type: 'long', value: -9223372036854775808n },
      f: { type: 'float', value: 0.1 },
      d: { type: 'double', value: NaN },
      flag: true,
      NOTE: 'n',
      ORDER: { type: 'short', value: 3 },
    },
    (m) => {
      m.setJMSType('t');
      m.setJMSCorrelationID('c');
      m.deliveryCount = 2;
    },
  );
  const bytes = new BytesMessage(new Uint8Array([1, 2, 3]));
  bytes.setStringProperty('color', 'blue');
  return [plain, xml, text, bytes, message(), message({ a: 'str', b: false, color: 5, weight: 'heavy' })];
}

test('selector - fuzz: random and mutated selectors only ever fail with InvalidSelectorError, never at match time (SEL-1, SEL-2, SEL-5)', () => {
  const random = prng(SEED);
  const targets = messages();
  const started = performance.now();
  let valid = 0;
  let invalid = 0;
  const inputs: string[] = [];
  for (let i = 0; i < 2500; i++) inputs.push(tokenSoup(random));
  for (let i = 0; i < 2500; i++) inputs.push(condition(random, 0));
  for (let i = 0; i < 2500; i++) inputs.push(mutate(random, condition(random, 0)));
  for (const text of inputs) {
    if (compileAndEvaluate(text, targets) === 'valid') valid++;
    else invalid++;
  }
  const elapsed = performance.now() - started;
  // Both outcomes must be well represented, or the generator tests nothing.
  assert.ok(valid > 1500 && invalid > 1500, `valid ${valid}, invalid ${invalid}`);
  assert.ok(elapsed < 20_000, `fuzz took ${Math.round(elapsed)} ms`);
});

test('selector - fuzz: pathological inputs finish quickly (SEL-5)', () => {
  const started = performance.now();
  const inputs = [
    '('.repeat(100_000),
    ')'.repeat(100_000),
    "'".repeat(100_001),
    `a = '${"''".repeat(50_000)}'`,
    'NOT '.repeat(50_000),
    '- '.repeat(50_000),
    `a LIKE '${'%a'.repeat(5_000)}b'`,
    `a IN (${Array.from({ length: 20_000 }, (_, i) => `'v${i}'`).join(',')})`,
    Array.from({ length: 20_000 }, (_, i) => `a${i} = ${i}`).join(' AND '),
    '1'.repeat(100_000),
    `a = 0x${'F'.repeat(10_000)}`,
    'é'.repeat(100_000),
    '\u0000'.repeat(1000),
  ];
  for (const text of inputs) {
    try {
      const selector = parseSelector(text);
      selector.matches(message({ a: 'a'.repeat(10_000) }));
    } catch (error) {
      assert.ok(error instanceof InvalidSelectorError, `${text.slice(0, 20)}... threw ${String(error)}`);
    }
  }
  const like = parseSelector(`a LIKE '${'%a'.repeat(30)}b'`);
  assert.equal(like.matches(message({ a: 'a'.repeat(20_000) })), false, 'no catastrophic backtracking');
  assert.ok(performance.now() - started < 10_000, `took ${Math.round(performance.now() - started)} ms`);
});
