import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { test } from 'node:test';
import fc from 'fast-check';
import { builtinRegistry } from '../../../connectors/index.js';
import { MAX_ALIASED_VALUES, MAX_CONFIG_BYTES, MAX_NESTING } from '../../../src/config/limits.js';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/load-config.js';

/** Generous for a loaded machine; the documents that took minutes before take milliseconds now. */
const TIME_BOUND_MS = 5_000;

/** What the loader did with `text`: loaded, or the problems; anything else it throws fails the test. */
function load(text: string): { ok: true } | { ok: false; problems: readonly string[]; ms: number } {
  const started = performance.now();
  try {
    parseConfig(text, 'hostile.yaml', { registry: builtinRegistry, env: { SET: 'value' } });
    const ms = performance.now() - started;
    assert.ok(ms < TIME_BOUND_MS, `loaded in ${Math.round(ms)} ms`);
    return { ok: true };
  } catch (error) {
    const ms = performance.now() - started;
    assert.ok(error instanceof ConfigError, `not a ConfigError: ${String(error)}`);
    assert.ok(ms < TIME_BOUND_MS, `refused in ${Math.round(ms)} ms`);
    for (const problem of error.problems) assert.match(problem, /^hostile\.yaml:\d+:\d+: \S/);
    assert.ok(error.problems.length > 0);
    return { ok: false, problems: error.problems, ms };
  }
}

/** `levels` anchors, each a list of `width` aliases of the one before: width^levels values. */
function aliasBomb(levels: number, width: number, at: string): string {
  const lines = ['x0: &a0 "lol"'];
  for (let level = 1; level <= levels; level++)
    lines.push(`x${level}: &a${level} [${Array.from({ length: width }, () => `*a${level - 1}`).join(', ')}]`);
  lines.push(`${at}: *a${levels}`);
  return `${lines.join('\n')}\n`;
}

const aliasBombs = fc
  .record({
    levels: fc.integer({ min: 2, max: 12 }),
    width: fc.integer({ min: 2, max: 12 }),
    at: fc.constantFrom('bridges', 'destinations', 'extra'),
  })
  .map(({ levels, width, at }) => aliasBomb(levels, width, at));

/** Many aliases of one small anchor, or many anchors: each alias resolved by a search is quadratic. */
const manyAliases = fc
  .record({ count: fc.integer({ min: 1, max: 20_000 }), anchors: fc.boolean() })
  .map(({ count, anchors }) =>
    anchors
      ? `bridges: [${Array.from({ length: count }, (_, i) => `&a${i} ${i}`).join(', ')}, *a0]\n`
      : `x: &a 1\nbridges: [${Array.from({ length: count }, () => '*a').join(', ')}]\n`,
  );

const deepNesting = fc
  .record({
    depth: fc.integer({ min: 1, max: 5_000 }),
    open: fc.constantFrom('[', '{a: ', '- ', '{? '),
  })
  .map(({ depth, open }) =>
    open === '- '
      ? `bridges:\n${Array.from({ length: Math.min(depth, 300) }, (_, i) => `${' '.repeat(i * 2)}-`).join('\n')} x\n`
      : `bridges: ${open.repeat(depth)}1${(open === '[' ? ']' : '}').repeat(depth)}\n`,
  );

const hugeScalars = fc
  .record({ size: fc.integer({ min: 1, max: 2 * MAX_CONFIG_BYTES }), quoted: fc.boolean() })
  .map(({ size, quoted }) => {
    const value = 'x'.repeat(size);
    return `bridges:\n  - name: ${quoted ? `"${value}"` : value}\n`;
  });

const duplicateKeys = fc
  .array(fc.constantFrom('store', 'admin', 'bridges', 'name', 'path', 'memory'), {
    minLength: 2,
    maxLength: 8,
  })
  .map(
    (keys) =>
      `store:\n${keys.map((key, i) => `  ${key}: ${i}`).join('\n')}\n${keys.map((k) => `${k}: {}`).join('\n')}\n`,
  );

const oddTags = fc
  .array(
    fc.constantFrom(
      '!!binary aGVsbG8=',
      '!!set { a, b }',
      '!!omap [ a: 1 ]',
      '!!timestamp 2001-12-14',
      '!foo bar',
      '!!python/object:os.system ls',
      '!<tag:yaml.org,2002:str> x',
      '!!map {}',
      '!!seq []',
      '!!int "12"',
      '!!float .inf',
      '!!null ~',
      '&anchor 1',
      '*missing',
    ),
    { minLength: 1, maxLength: 6 },
  )
  .chain((values) =>
    fc
      .constantFrom('', '%YAML 1.1\n---\n', '%TAG !e! tag:example.com,2000:\n---\n')
      .map(
        (directive) =>
          `${directive}store:\n  path: ${values[0]}\nbridges:\n${values.map((v) => `  - name: ${v}`).join('\n')}\n<<: ${values.at(-1)}\n`,
      ),
  );

const binaryJunk = fc
  .uint8Array({ maxLength: 4_000 })
  .chain((bytes) =>
    fc.constantFrom(Buffer.from(bytes).toString('latin1'), Buffer.from(bytes).toString('utf8')),
  );

/** Names of Object.prototype where the schema looks names up: connector types, retry kinds, keys. */
const prototypeNames = fc
  .tuple(
    ...Array.from({ length: 3 }, () =>
      fc.constantFrom('constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', 'jms', 'fixed'),
    ),
  )
  .map(
    ([type, key, kind]) =>
      `bridges:\n  - name: x\n    source: { type: ${type}, ${key}: 1 }\n    target: { type: jms, destination: queue://y }\n    retry: { delay: { kind: ${kind} } }\nstore: { ${key}: 1 }\n`,
  );

const tokenSoup = fc
  .array(
    fc.constantFrom(
      'bridges:',
      'destinations:',
      'queues:',
      'name: ',
      'source:',
      'type: jms',
      'constructor:',
      '__proto__:',
      'toString: x',
      'a:',
      ' ',
      '  ',
      '\n',
      '\t',
      '- ',
      '[',
      ']',
      '{',
      '}',
      ',',
      ': ',
      '&x ',
      '*x',
      '!!str ',
      '? ',
      '"',
      "'",
      '# c',
      '|',
      '>',
      '---',
      '...',
      '${SET}',
      '${UNSET}',
      '$${',
      '<<: *x',
      '~',
      'null',
      '1e400',
      '0x1F',
      '-.inf',
      '\u0000',
      '\ufeff',
      '%YAML 1.1',
      'queue://q',
      'type: ',
      'kind: ',
    ),
    { maxLength: 80 },
  )
  .map((tokens) => tokens.join(''));

test('config loader - hostile documents load or fail with positioned problems, within a time bound, never another exception', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        aliasBombs,
        manyAliases,
        deepNesting,
        hugeScalars,
        duplicateKeys,
        oddTags,
        prototypeNames,
        binaryJunk,
        tokenSoup,
      ),
      (text) => {
        load(text);
      },
    ),
    { seed: 20261201, numRuns: 300 },
  );
});

test('config loader - an alias bomb fails fast naming the alias and the limit, at its position', () => {
  const result = load(aliasBomb(10, 9, 'bridges'));
  assert.equal(result.ok, false);
  if (result.ok) return;
  assert.equal(result.problems.length, 1);
  assert.match(
    result.problems[0]!,
    new RegExp(
      `^hostile\\.yaml:\\d+:\\d+: alias '\\*a\\d' takes the values aliases stand for past the limit of ${MAX_ALIASED_VALUES}`,
    ),
  );
  assert.ok(result.ms < 1_000, `${Math.round(result.ms)} ms`);
});

test('config loader - aliases for shared settings still load', () => {
  const text = [
    'x-retry: &retry { limit: 3, delay: { kind: fixed, ms: 10 } }',
    'bridges:',
    ...Array.from({ length: 50 }, (_, i) =>
      [
        `  - name: b${i}`,
        `    source: { type: jms, destination: queue://in${i} }`,
        `    target: { type: jms, destination: queue://out${i} }`,
        '    retry: *retry',
      ].join('\n'),
    ),
    '',
  ].join('\n');
  const result = load(text);
  // The anchor's own key is not a setting; everything the aliases stand for is validated.
  assert.deepEqual(result.ok ? [] : result.problems, [
    'hostile.yaml:1:1: x-retry: unknown setting (known: admin, bridges, connectionFactory, connections, destinations, engine, ha, log, security, shutdown, store)',
  ]);
});

test('config loader - a file over the size limit, deep nesting and repeated keys are refused with their place', () => {
  const bigText = `store:\n  path: "${'x'.repeat(MAX_CONFIG_BYTES)}"\n`;
  const big = load(bigText);
  assert.deepEqual(big.ok ? [] : big.problems, [
    `hostile.yaml:1:1: the configuration is ${Buffer.byteLength(bigText)} bytes, more than the limit of ${MAX_CONFIG_BYTES} bytes (512 KiB): remove what is not needed, or use aliases for repeated settings`,
  ]);
  const deep = load(`bridges: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
  assert.deepEqual(deep.ok ? [] : deep.problems, [
    `hostile.yaml:1:${'bridges: '.length + MAX_NESTING + 1}: values are nested more than ${MAX_NESTING} levels deep here: no setting of the configuration is that deep`,
  ]);
  const repeated = load('store:\n  path: a\n  memory: true\n  path: b\n');
  assert.deepEqual(repeated.ok ? [] : repeated.problems, [
    "hostile.yaml:4:3: key 'path' appears twice in this mapping (remove or rename one of them)",
  ]);
});

test('config loader - a file that never ends is refused at the size limit, not read into memory', async () => {
  // A device that reads as an endless run of zero bytes; only where there is one.
  const endless = '/dev/zero';
  if (
    !(await stat(endless).then(
      (info) => info.isCharacterDevice(),
      () => false,
    ))
  )
    return;
  await assert.rejects(loadConfig(endless, { registry: builtinRegistry, env: {} }), (error: unknown) => {
    assert.ok(error instanceof ConfigError);
    assert.deepEqual(error.problems, [
      `/dev/zero:1:1: the configuration is longer than the limit of ${MAX_CONFIG_BYTES} bytes (512 KiB): remove what is not needed, or use aliases for repeated settings`,
    ]);
    return true;
  });
});
