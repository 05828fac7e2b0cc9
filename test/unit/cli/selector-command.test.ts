import { test } from 'node:test';
import assert from 'node:assert/strict';
import { caret } from '../../../src/cli/selector-command.js';
import { runCli } from '../../../src/cli/program.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `jms-gateway selector <argv...>` in process, with `files` as the only readable files. */
async function run(argv: string[], files: Record<string, string> = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['selector', ...argv], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    stderrIsTty: false,
    readFile: (path) => {
      const content = files[path];
      return content === undefined
        ? Promise.reject(new Error(`ENOENT: no such file or directory, open '${path}'`))
        : Promise.resolve(content);
    },
    env: {},
    fetch: () => Promise.reject(new Error('no network in this test')),
    now: () => 0,
  });
  return { code, stdout, stderr };
}

const MESSAGE = JSON.stringify({
  type: 'xml',
  headers: { JMSPriority: 5 },
  properties: { color: 'red', weight: 12 },
});

const ORDER =
  '<order><item><id>1</id><name>Drill</name></item><item><id>2</id><name>Mitre Saw</name></item></order>';

test('selector - cli check prints ok for a valid selector (SEL-5)', async () => {
  assert.deepEqual(await run(['check', "color = 'red' AND weight > 10"]), {
    code: 0,
    stdout: 'ok\n',
    stderr: '',
  });
  const empty = await run(['check', '']);
  assert.equal(empty.code, 0);
  assert.match(empty.stdout, /empty selector selects every message/);
});

test('selector - cli check prints the error and a caret under the column, exit 1 (SEL-5)', async () => {
  const result = await run(['check', 'JMSPriority = ']);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, '');
  assert.equal(
    result.stderr,
    "invalid selector at column 14: expected a value after '=' but found end of selector\n  JMSPriority = \n               ^\n",
  );
  const multiline = await run(['check', "color = 'red'\nAND weight >> 1"]);
  assert.equal(multiline.code, 1);
  assert.match(multiline.stderr, /column 27/);
  assert.ok(multiline.stderr.endsWith('line 2: AND weight >> 1\n                    ^\n'), multiline.stderr);
});

test('selector - cli caret points at the column, tabs and all (SEL-5)', () => {
  assert.equal(caret('a = ', 5), '  a = \n      ^');
  assert.equal(caret('\ta =', 5), '   a =\n      ^');
  assert.equal(caret('x\ny = ', 7), 'line 2: y = \n            ^');
});

test('selector - cli joins an unquoted selector split by the shell (SEL-5)', async () => {
  assert.deepEqual(await run(['check', 'weight', '>', '10']), { code: 0, stdout: 'ok\n', stderr: '' });
});

test('selector - cli eval prints TRUE, selected and the explanation, exit 0 (SEL-2)', async () => {
  const result = await run(['eval', "JMSPriority > 3 AND color = 'red'", '--message', 'msg.json'], {
    'msg.json': MESSAGE,
  });
  assert.equal(result.code, 0);
  assert.equal(result.stderr, '');
  assert.equal(
    result.stdout,
    [
      'TRUE',
      'selected',
      "JMSPriority > 3 AND color = 'red'  =>  TRUE",
      '  JMSPriority > 3  =>  TRUE',
      '    JMSPriority  =>  5  (header)',
      "  color = 'red'  =>  TRUE",
      "    color  =>  'red'  (string property)",
      '',
    ].join('\n'),
  );
});

test('selector - cli eval exits 1 for FALSE and for UNKNOWN (SEL-2)', async () => {
  const falsy = await run(['eval', "color = 'blue'", '--message', 'msg.json'], { 'msg.json': MESSAGE });
  assert.equal(falsy.code, 1);
  assert.match(falsy.stdout, /^FALSE\nnot selected\n/);
  const unknown = await run(['eval', 'missing > 1 OR weight < 0', '-m', 'msg.json'], { 'msg.json': MESSAGE });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stdout, /^UNKNOWN\nnot selected\n/);
  assert.match(unknown.stdout, / {4}missing {2}=> {2}NULL {2}\(no such property\)/);
});

test('selector - cli eval with --body shows what XPath found (SEL-4)', async () => {
  const selector = "JMS_BEA_SELECT('xpath', '/order/item[2]/name/text()') = 'Mitre Saw'";
  const result = await run(['eval', selector, '--message', 'msg.json', '--body', 'order.xml'], {
    'msg.json': MESSAGE,
    'order.xml': ORDER,
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /^TRUE\nselected\n/);
  assert.match(
    result.stdout,
    /=> {2}'Mitre Saw' {2}\(XPath \/order\/item\[2\]\/name\/text\(\) found "Mitre Saw"\)/,
  );
  const malformed = await run(['eval', selector, '--message', 'msg.json', '--body', 'bad.xml'], {
    'msg.json': '{}',
    'bad.xml': '<order>',
  });
  assert.equal(malformed.code, 1);
  assert.match(malformed.stdout, /^UNKNOWN\nnot selected\n/);
  assert.match(malformed.stdout, /not well-formed XML or has a DTD/);
  const missing = await run(['eval', selector, '--message', 'msg.json', '--body', 'order.xml'], {
    'msg.json': '{}',
    'order.xml': '<order/>',
  });
  assert.match(missing.stdout, /found nothing with a value/);
});

test('selector - cli eval reports bad inputs with exit 2 (SEL-5)', async () => {
  const invalid = await run(['eval', 'a =', '--message', 'msg.json'], { 'msg.json': MESSAGE });
  assert.equal(invalid.code, 2);
  assert.match(invalid.stderr, /^invalid selector at column 4/);
  const noFile = await run(['eval', 'a = 1', '--message', 'nope.json']);
  assert.equal(noFile.code, 2);
  assert.match(noFile.stderr, /^cannot read message file 'nope.json': ENOENT/);
  const notJson = await run(['eval', 'a = 1', '--message', 'msg.json'], { 'msg.json': '{ nope' });
  assert.equal(notJson.code, 2);
  assert.match(notJson.stderr, /^message file 'msg.json' is not valid JSON/);
  const badShape = await run(['eval', 'a = 1', '--message', 'msg.json'], {
    'msg.json': '{"properties":{"a":[1]}}',
  });
  assert.equal(badShape.code, 2);
  assert.match(badShape.stderr, /^message file 'msg.json': properties\.a: expected/);
  const mapBody = await run(['eval', 'a = 1', '--message', 'msg.json', '--body', 'b.xml'], {
    'msg.json': '{"type":"map"}',
    'b.xml': '<a/>',
  });
  assert.equal(mapBody.code, 2);
  assert.match(mapBody.stderr, /--body needs a text or xml message/);
  const noBody = await run(['eval', 'a = 1', '--message', 'msg.json', '--body', 'b.xml'], {
    'msg.json': '{}',
  });
  assert.equal(noBody.code, 2);
  assert.match(noBody.stderr, /^cannot read body file 'b.xml'/);
});

test('selector - cli usage errors exit 2 with one line naming the problem (SEL-5)', async () => {
  for (const [argv, problem] of [
    [['check'], /missing required argument 'selector'/],
    [['eval', 'a = 1'], /required option '-m, --message <file>' not specified/],
    [['frobnicate', 'a = 1'], /unknown command 'frobnicate'/],
    [['check', 'a = 1', '--message', 'm.json'], /unknown option '--message'/],
    [['check', '--nope', 'a'], /unknown option '--nope'/],
  ] as const) {
    const result = await run([...argv]);
    assert.equal(result.code, 2, argv.join(' '));
    assert.match(result.stderr, problem);
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.equal(result.stdout, '');
  }
  const missing = await run([]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /Usage: jms-gateway selector/);
  const help = await run(['check', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Exit status: 0 valid, 1 invalid, 2 usage error/);
  assert.match(help.stdout, /Examples:/);
  // '--' makes an operand of what looks like an option.
  assert.equal((await run(['check', '--', '-1 < a'])).code, 0);
  const dashed = await run(['check', '--', '-qty']);
  assert.equal(dashed.code, 1, 'checked as a selector (and not a valid one)');
  assert.match(dashed.stderr, /^invalid selector at column 1/);
});

test('selector - cli reads an operand starting with - as the selector, before or after options (SEL-5)', async () => {
  assert.deepEqual(await run(['check', '-qty * 2 > 1']), { code: 0, stdout: 'ok\n', stderr: '' });
  const evaluated = await run(['eval', "-weight < -10 OR color = 'red'", '--message', 'msg.json'], {
    'msg.json': MESSAGE,
  });
  assert.equal(evaluated.code, 0, evaluated.stderr);
  assert.match(evaluated.stdout, /^TRUE\nselected\n/);
  const after = await run(['eval', '--message', 'msg.json', '-weight > 0'], { 'msg.json': MESSAGE });
  assert.equal(after.code, 1, after.stderr);
  assert.match(after.stdout, /^FALSE\n/);
  // A word shaped like an option is one.
  const optionLike = await run(['check', '-qty']);
  assert.equal(optionLike.code, 2);
  assert.match(optionLike.stderr, /^error: unknown option '-qty'\n$/);
});
