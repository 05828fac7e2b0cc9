/**
 * The published declarations (what `npm run build` ships as dist/src/*.d.ts) show the public API
 * and nothing else: no member marked `@internal` survives, every module a published file reaches
 * is one src/index.ts exports from, no published file names the engine's
 * units or the client objects' internal links, and the client objects an application gets from
 * its parent (Connection, Session, MessageConsumer, MessageProducer, QueueBrowser) cannot be
 * constructed by it. The declarations are built as the package build builds them
 * (tsconfig.build.json, stripInternal), into a directory of their own.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const projectRoot = fileURLToPath(new URL('../../..', import.meta.url));
const tsc = path.join(projectRoot, 'node_modules/typescript/bin/tsc');

/** The client objects that only their parent creates. */
const PARENT_MADE = {
  Connection: 'src/jms/client/connection.d.ts',
  Session: 'src/jms/client/session.d.ts',
  MessageConsumer: 'src/jms/client/consumer.d.ts',
  MessageProducer: 'src/jms/client/producer.d.ts',
  QueueBrowser: 'src/jms/client/queue-browser.d.ts',
} as const;

/**
 * Modules that no published file may reach: the engine's units (behind the facade, engine.ts)
 * and the client files that only connect the client objects to each other and to the engine.
 */
const PRIVATE_MODULE =
  /^src\/jms\/engine\/|^src\/jms\/client\/(client-links|client-ids|listener-call|listener-pipeline|setting-checks)\.d\.ts$/;

let outDir: string;

before(async () => {
  outDir = await mkdtemp(path.join(tmpdir(), 'published-types-'));
  await run(
    process.execPath,
    [
      tsc,
      '-p',
      'tsconfig.build.json',
      '--emitDeclarationOnly',
      '--declarationMap',
      'false',
      '--outDir',
      outDir,
    ],
    { cwd: projectRoot, timeout: 180_000 },
  );
});

test.after(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

/** The relative module specifiers a declaration file imports or re-exports, as .d.ts paths from the output root. */
function localImports(file: string, text: string, reExportsOnly = false): string[] {
  const pattern = reExportsOnly
    ? /^export\s[^;]*?\sfrom\s+'([^']+)'/gms
    : /(?:\sfrom\s+|import\s*\(\s*|^import\s+)'([^']+)'/gm;
  return [...text.matchAll(pattern)]
    .map((match) => match[1]!)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => path.posix.join(path.posix.dirname(file), specifier.replace(/\.js$/, '.d.ts')));
}

/** Every declaration file reachable from `start` along `next`, with its text. */
async function closure(
  start: string,
  next: (file: string, text: string) => string[],
): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const pending = [start];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (texts.has(file)) continue;
    const text = await readFile(path.join(outDir, file), 'utf8');
    texts.set(file, text);
    pending.push(...next(file, text));
  }
  return texts;
}

/** The public modules: the index and what it re-exports from, following re-exports only. */
async function publicModules(): Promise<Set<string>> {
  const modules = await closure('src/index.d.ts', (file, text) => localImports(file, text, true));
  return new Set(modules.keys());
}

test('no published declaration keeps a member marked @internal', async () => {
  const reachable = await closure('src/index.d.ts', (file, text) => localImports(file, text));
  const marked = [...reachable].filter(([, text]) => text.includes('@internal')).map(([file]) => file);
  assert.deepEqual(marked, []);
});

test('no published declaration reaches the engine units or the client internals', async () => {
  const reachable = await closure('src/index.d.ts', (file, text) => localImports(file, text));
  const publicSet = await publicModules();
  const offending = [...reachable.keys()].filter((file) => PRIVATE_MODULE.test(file));
  assert.deepEqual(offending, [], 'private modules reached from src/index.d.ts');
  const nonPublic = [...reachable.keys()].filter((file) => !publicSet.has(file)).sort();
  assert.deepEqual(
    nonPublic,
    [],
    'modules reached from src/index.d.ts that src/index.ts does not export from',
  );
  for (const file of Object.values(PARENT_MADE)) {
    const imported = localImports(file, reachable.get(file)!).filter((target) => !publicSet.has(target));
    assert.deepEqual(imported, [], `${file} imports non-public modules`);
  }
});

test('the client objects declare only a private constructor', async () => {
  for (const [name, file] of Object.entries(PARENT_MADE)) {
    const text = await readFile(path.join(outDir, file), 'utf8');
    const constructors = [...text.matchAll(/^\s*(.*\bconstructor\b.*)$/gm)]
      .map((match) => match[1]!)
      .filter((line) => !/^(\*|\/\/|\/\*)/.test(line));
    assert.deepEqual(constructors, ['private constructor();'], `${name} in ${file}`);
  }
});

test('an application compiled against the published types cannot construct them but uses them', async () => {
  const user = [
    "import { Connection, MessageConsumer, MessageProducer, QueueBrowser, Session } from './src/index.js';",
    'new Connection();',
    'new Session();',
    'new MessageConsumer();',
    'new MessageProducer();',
    'new QueueBrowser();',
    'export const mode: number = Session.AUTO_ACKNOWLEDGE + Session.SESSION_TRANSACTED;',
    'export const isSession = (value: unknown): boolean => value instanceof Session;',
    '',
  ].join('\n');
  await writeFile(path.join(outDir, 'application.ts'), user);
  const compiled = await run(
    process.execPath,
    [
      tsc,
      '--noEmit',
      '--strict',
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--target',
      'ES2022',
      '--skipLibCheck',
      path.join(outDir, 'application.ts'),
    ],
    { cwd: projectRoot, timeout: 120_000 },
  ).then(
    // tsc exits non-zero when it reports errors, which is what this test expects; a tsc that
    // could not run (no output) fails the test as it is.
    () => '',
    (error: Error & { stdout?: string }) => {
      if (!error.stdout) throw error;
      return error.stdout;
    },
  );
  const errors = compiled.split('\n').filter((line) => line.includes('error TS'));
  const privateConstructor = errors.filter((line) => line.includes('TS2673'));
  assert.equal(privateConstructor.length, 5, compiled);
  assert.deepEqual(
    errors.filter((line) => !line.includes('TS2673')),
    [],
    'only the five constructions are refused',
  );
  for (const name of Object.keys(PARENT_MADE)) {
    assert.ok(
      privateConstructor.some((line) => line.includes(`class '${name}'`)),
      `${name}: ${compiled}`,
    );
  }
});
