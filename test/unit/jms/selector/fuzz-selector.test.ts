/**
 * Property and fuzz tests of the selector language with fast-check, on a fixed seed so a failure
 * reproduces (fast-check prints the counterexample and the path to replay it). Every input must
 * compile or be refused with an InvalidSelectorError, and answer within {@link BOUND_MS}.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { InvalidSelectorError } from '../../../../src/jms/errors.js';
import type { Message } from '../../../../src/jms/message/message.js';
import { XMLMessage } from '../../../../src/jms/message/xml-message.js';
import { SubscriberIndex, parseSelector } from '../../../../src/jms/selector/index.js';
import { FUZZ_VOCABULARY, compileAndEvaluate, message } from './helpers.js';

const SEED = 20261201;
/** The most one input may take, compile and every evaluation together; generous for a busy CI machine. */
const BOUND_MS = 2000;

const IDENTIFIERS = [
  'a',
  'b',
  's',
  'n',
  'l',
  'd',
  'f',
  'flag',
  'missing',
  'JMSPriority',
  'JMSType',
  'JMS_bytes',
  'été',
];
const NUMBERS = [...FUZZ_VOCABULARY.numbers, '1e3', '.5', '7.', '2.5f', '0.1', '1e308'];
const STRINGS = [...FUZZ_VOCABULARY.strings, "'5'", "'é😀'"];
const KEYWORDS = [...FUZZ_VOCABULARY.keywords, 'XPATH'];
const PUNCTUATION = [...FUZZ_VOCABULARY.operators, "'", '"', '!=', '=='];

/** Messages with every kind of value a selector meets, and one without properties. */
function targets(): Message[] {
  const typed = message(
    {
      a: 1,
      b: { type: 'long', value: 9223372036854775807n },
      s: '5',
      n: 5,
      l: { type: 'long', value: 5n },
      d: { type: 'double', value: Number.NaN },
      f: { type: 'float', value: 0.1 },
      flag: true,
    },
    (m) => {
      m.setJMSType('t');
      m.setProviderProperty('JMS_bytes', { type: 'bytes', value: new Uint8Array([1]) });
    },
  );
  return [
    typed,
    message({ a: 'x', s: 5, n: 'five', flag: 1 }),
    message(),
    new XMLMessage('<o><id>1</id></o>'),
  ];
}

const value: fc.Arbitrary<string> = fc.letrec<{ value: string; condition: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...IDENTIFIERS),
    fc.constantFrom(...NUMBERS),
    fc.constantFrom(...STRINGS),
    fc
      .tuple(tie('value'), fc.constantFrom('+', '-', '*', '/'), tie('value'))
      .map(([x, o, y]) => `${x} ${o} ${y}`),
    tie('value').map((x) => `-${x}`),
    tie('value').map((x) => `(${x})`),
    fc.constantFrom('/o/id', '//id', 'count(//*)', '/o[', '').map((x) => `JMS_BEA_SELECT('xpath', '${x}')`),
  ),
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(tie('value'), fc.constantFrom('=', '<>', '<', '>', '<=', '>='), tie('value'))
      .map((p) => p.join(' ')),
    fc
      .tuple(tie('value'), fc.boolean(), tie('value'), tie('value'))
      .map(([x, not, lo, hi]) => `${x} ${not ? 'NOT ' : ''}BETWEEN ${lo} AND ${hi}`),
    fc
      .tuple(
        fc.constantFrom(...IDENTIFIERS),
        fc.boolean(),
        fc.array(fc.constantFrom(...STRINGS), { minLength: 1, maxLength: 4 }),
      )
      .map(([x, not, list]) => `${x} ${not ? 'NOT ' : ''}IN (${list.join(', ')})`),
    fc
      .tuple(fc.constantFrom(...IDENTIFIERS), fc.boolean(), fc.constantFrom(...STRINGS), fc.boolean())
      .map(
        ([x, not, pattern, escape]) =>
          `${x} ${not ? 'NOT ' : ''}LIKE ${pattern}${escape ? " ESCAPE '!'" : ''}`,
      ),
    fc.tuple(tie('value'), fc.boolean()).map(([x, not]) => `${x} IS ${not ? 'NOT ' : ''}NULL`),
    tie('condition').map((x) => `NOT ${x}`),
    fc.tuple(tie('condition'), fc.constantFrom('AND', 'OR'), tie('condition')).map((p) => p.join(' ')),
    tie('condition').map((x) => `(${x})`),
    fc.constantFrom('TRUE', 'FALSE', 'flag', 'missing', "XPATH '/o/id'", "XPATH 'count(//*) > 1'"),
  ),
})).condition;

/** A text with a few characters cut, inserted or replaced: near-misses of valid selectors. */
const mutated = fc
  .tuple(
    value,
    fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 3 }),
  )
  .map(([text, edits]) =>
    edits.reduce((result, [at, cut, insert]) => {
      const position = at % (result.length + 1);
      return result.slice(0, position) + insert + result.slice(position + cut);
    }, text),
  );

const tokenSoup = fc
  .array(fc.constantFrom(...IDENTIFIERS, ...NUMBERS, ...STRINGS, ...KEYWORDS, ...PUNCTUATION), {
    maxLength: 15,
  })
  .chain((tokens) => fc.constantFrom(' ', '', '\t\n').map((separator) => tokens.join(separator)));

/** Inputs built to be expensive: deep nesting, huge literals, long lists, pathological patterns. */
const adversarial = fc.oneof(
  fc.integer({ min: 1, max: 3000 }).map((depth) => `${'('.repeat(depth)}a = 1${')'.repeat(depth)}`),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `${'NOT '.repeat(depth)}a = 1`),
  fc.integer({ min: 1, max: 3000 }).map((depth) => `a = ${'-'.repeat(depth)}1`),
  fc
    .integer({ min: 1, max: 3000 })
    .map((count) => Array.from({ length: count }, (_, i) => `a${i}`).join(' + ') + ' > 0'),
  fc.integer({ min: 1, max: 100_000 }).map((length) => `s = '${'x'.repeat(length)}'`),
  fc.integer({ min: 1, max: 100_000 }).map((length) => `n = ${'9'.repeat(length)}`),
  fc
    .integer({ min: 1, max: 5000 })
    .map((count) => `s IN (${Array.from({ length: count }, (_, i) => `'v${i}'`).join(',')})`),
  fc
    .array(fc.constantFrom('%', '_', 'a', '!', '%a', "''"), { maxLength: 300 })
    .map((parts) => `s LIKE '${parts.join('')}b' ESCAPE '!'`),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom('\u0000', '\u00a0', '\u2028', '\ufeff', '\ud800', '😀', '’', '`', "'"),
    maxLength: 50,
  }),
);

/** Compiles and evaluates `text` on every target; fails on anything but a value or an InvalidSelectorError. */
function exercise(text: string, messages: readonly Message[]): void {
  const started = performance.now();
  compileAndEvaluate(text, messages);
  assertWithinBound(started, text);
}

function assertWithinBound(started: number, text: string): void {
  const elapsed = performance.now() - started;
  assert.ok(elapsed < BOUND_MS, `${JSON.stringify(text.slice(0, 80))} took ${Math.round(elapsed)} ms`);
}

test('selector - fuzz (fast-check): random, mutated and adversarial selectors compile or throw InvalidSelectorError, in bounded time (SEL-1, SEL-2, SEL-5)', () => {
  const messages = targets();
  const input = fc.oneof(value, mutated, tokenSoup, adversarial);
  fc.assert(
    fc.property(input, (text) => exercise(text, messages)),
    { seed: SEED, numRuns: 1500 },
  );
});

// --- the compiled fast paths agree with the definitions ---

/** A property value of every kind, or absent. */
const propertyValue = fc.oneof(
  fc.constant(undefined),
  fc.integer({ min: -3, max: 3 }).map((value) => ({ type: 'int', value })),
  fc.bigInt({ min: -3n, max: 3n }).map((value) => ({ type: 'long', value })),
  fc.constantFrom(-1.5, 0, 2, 2.5, Number.NaN).map((value) => ({ type: 'double', value })),
  fc.constantFrom('a', 'b', '2', '').map((value) => ({ type: 'string', value })),
  fc.boolean().map((value) => ({ type: 'boolean', value })),
);
const literal = fc.constantFrom('2', '-1', '2.5', '0.0', "'a'", "'2'", 'TRUE', 'FALSE');
const operator = fc.constantFrom('=', '<>', '<', '>', '<=', '>=');
const MIRROR: Record<string, string> = { '=': '=', '<>': '<>', '<': '>', '>': '<', '<=': '>=', '>=': '<=' };

/** The literal as a typed property, so the general comparator sees what the specialised closure sees. */
function asProperty(text: string): unknown {
  if (text.startsWith("'")) return text.slice(1, -1);
  if (text === 'TRUE' || text === 'FALSE') return text === 'TRUE';
  return text.includes('.') ? { type: 'double', value: Number(text) } : { type: 'long', value: BigInt(text) };
}

function evaluateOrInvalid(text: string, target: Message): boolean | null | 'invalid' {
  try {
    return parseSelector(text).evaluate(target);
  } catch (error) {
    assert.ok(error instanceof InvalidSelectorError, String(error));
    return 'invalid';
  }
}

test('selector - property: constant comparisons, their mirror and the general comparator agree on every kind (SEL-2)', () => {
  fc.assert(
    fc.property(propertyValue, operator, literal, (x, op, constant) => {
      const target = message({ ...(x === undefined ? {} : { x }), c: asProperty(constant) });
      const specialised = evaluateOrInvalid(`x ${op} ${constant}`, target);
      // Statically refused shapes (`x < 'a'`) have no run-time answer to compare.
      if (specialised === 'invalid') return;
      assert.equal(evaluateOrInvalid(`${constant} ${MIRROR[op]!} x`, target), specialised, 'mirrored');
      assert.equal(evaluateOrInvalid(`x ${op} c`, target), specialised, 'general');
      // Only NULL makes a comparison UNKNOWN; unlike kinds are FALSE.
      assert.equal(specialised === null, x === undefined);
    }),
    { seed: SEED, numRuns: 600 },
  );
});

test('selector - property: BETWEEN, IN and LIKE are what JMS defines them as, NOT forms included (SEL-2)', () => {
  const bound = fc.constantFrom('-1', '2', '2.5');
  const strings = fc.array(fc.constantFrom("'a'", "'b'", "'2'"), { minLength: 1, maxLength: 3 });
  fc.assert(
    fc.property(
      propertyValue,
      bound,
      bound,
      strings,
      fc.constantFrom("'a%'", "'_'", "'%'"),
      (x, lo, hi, list, pattern) => {
        const target = message({ ...(x === undefined ? {} : { x }), lo: asProperty(lo), hi: asProperty(hi) });
        const same = (a: string, b: string) =>
          assert.equal(evaluateOrInvalid(a, target), evaluateOrInvalid(b, target), `${a} vs ${b}`);
        same(`x BETWEEN ${lo} AND ${hi}`, `x >= ${lo} AND x <= ${hi}`);
        same(`x NOT BETWEEN ${lo} AND ${hi}`, `x < ${lo} OR x > ${hi}`);
        same(`x BETWEEN lo AND hi`, `x >= lo AND x <= hi`);
        same(`x IN (${list.join(', ')})`, list.map((item) => `x = ${item}`).join(' OR '));
        same(`x NOT IN (${list.join(', ')})`, `NOT (x IN (${list.join(', ')}))`);
        same(`x NOT LIKE ${pattern}`, `NOT (x LIKE ${pattern})`);
        // LIKE on another kind is FALSE, on NULL UNKNOWN.
        const like = evaluateOrInvalid(`x LIKE ${pattern}`, target);
        if (x === undefined) assert.equal(like, null);
        else if (typeof x === 'object' && x.type !== 'string') assert.equal(like, false);
      },
    ),
    { seed: SEED, numRuns: 400 },
  );
});

test('selector - property: the subscriber index selects exactly what each selector matches (SEL-2, SEL-6)', () => {
  const selectorText = fc.oneof(
    fc.constantFrom('x IS NOT NULL', 'y IS NOT NULL', 'JMSType IS NOT NULL'),
    fc.tuple(fc.constantFrom('x', 'y'), operator, literal).map((parts) => parts.join(' ')),
    fc.tuple(fc.constantFrom('x', 'y'), operator, literal).map((parts) => `NOT (${parts.join(' ')})`),
  );
  fc.assert(
    fc.property(fc.array(selectorText, { maxLength: 12 }), propertyValue, propertyValue, (texts, x, y) => {
      const selectors = texts.flatMap((text) => {
        try {
          return [parseSelector(text)];
        } catch {
          return [];
        }
      });
      const index = new SubscriberIndex<number>();
      selectors.forEach((selector, i) => index.add(i, selector));
      const target = message({ ...(x === undefined ? {} : { x }), ...(y === undefined ? {} : { y }) });
      const expected = selectors.flatMap((selector, i) => (selector.matches(target) ? [i] : []));
      assert.deepEqual(index.match(target), expected);
    }),
    { seed: SEED, numRuns: 300 },
  );
});
