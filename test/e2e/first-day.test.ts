/**
 * A user's first day, end to end: a fresh clone of this repository's HEAD, `npm install`, the
 * README's quick start as written (the gateway with `npm start`, then each `npx jms-gateway` line
 * and the metrics line), a second build, then `npm pack` and the tarball installed into an empty
 * folder, where `jms-gateway --version` runs. Slow by nature (an install with a native module):
 * everything runs from the local npm cache, better-sqlite3's native module comes as the prebuilt
 * binary its install script looks for (made from this checkout's build, as a user's install
 * downloads one) rather than compiled from source, and everything it creates is removed.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { eventually, logLines, repositoryRoot } from './gateway-harness.js';

const run = promisify(execFile);

/** Installs come from the local cache: no audit, no funding banner, no registry round trips. */
const OFFLINE = ['--prefer-offline', '--no-audit', '--no-fund'];

/**
 * This environment without what an enclosing `npm run`/`npm test` adds (npm_config_*,
 * npm_lifecycle_*), which would otherwise steer the inner npm; plus `extra`.
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
  return { ...env, ...extra };
}

/** Runs a shell line in `cwd`; resolves with its output, rejects with it on a non-zero exit. */
async function sh(
  line: string,
  cwd: string,
  env: NodeJS.ProcessEnv = cleanEnv(),
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run('sh', ['-c', line], { cwd, env, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string; code?: number };
    throw new Error(`'${line}' exited ${failed.code}:\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`, {
      cause: error,
    });
  }
}

/** The commands of the README's quick start shell block that follows `marker`. */
function readmeBlock(readme: string, marker: string): string[] {
  const start = readme.indexOf(marker);
  assert.ok(start >= 0, `README.md has no '${marker}'`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(start));
  assert.ok(block?.[1], `README.md has no sh block after '${marker}'`);
  return block[1]
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** Where `npx` keeps its install of a local folder's own bin (libnpmexec: sha512 of the path). */
function npxCacheEntry(folder: string): string {
  const hash = createHash('sha512').update(folder).digest('hex').slice(0, 16);
  return join(homedir(), '.npm', '_npx', hash);
}

/**
 * better-sqlite3's install (`prebuild-install || node-gyp rebuild`) takes a prebuilt binary from
 * the folder `npm_config_better_sqlite3_local_prebuilds` names, as it would take the one it
 * downloads, instead of compiling SQLite (minutes of both cores). This writes that folder, under
 * `space`, with this checkout's own build of the module, for this Node's ABI, platform and
 * architecture, and returns the environment that points the install at it; without a build here
 * (none made yet), none: the install compiles as before.
 */
async function prebuiltSqlite(space: string): Promise<Record<string, string>> {
  const module = join(repositoryRoot, 'node_modules', 'better-sqlite3');
  const binary = join(module, 'build', 'Release', 'better_sqlite3.node');
  if (!(await stat(binary).catch(() => undefined))?.isFile()) return {};
  const { version } = JSON.parse(await readFile(join(module, 'package.json'), 'utf8')) as { version: string };
  const folder = join(space, 'prebuilds');
  await mkdir(folder);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await sh(`tar -czf "${join(folder, name)}" build/Release/better_sqlite3.node`, module);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}

async function isExecutable(path: string): Promise<boolean> {
  return ((await stat(path)).mode & 0o111) !== 0;
}

/** `npm start -- --admin-port 0` in its own process group, resolved with the admin URL once ready. */
async function npmStart(cwd: string): Promise<{ child: ChildProcess; admin: string; output(): string }> {
  const child = spawn('npm', ['start', '--', '--admin-port', '0'], {
    cwd,
    env: cleanEnv(),
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const admin = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`npm start exited ${child.exitCode}:\n${output}`);
      const ready = logLines(output).find((line) => line.msg === 'gateway ready');
      return Promise.resolve(ready?.admin as string | undefined);
    },
    "npm start to log 'gateway ready'",
    90_000,
  );
  return { child, admin, output: () => output };
}

/**
 * Ctrl-C, as the README says: SIGINT to the whole process group. npm passes it on and then ends
 * itself by the same signal; resolves with how npm ended.
 */
function interrupt(child: ChildProcess): Promise<number | NodeJS.Signals | null> {
  const exited = new Promise<number | NodeJS.Signals | null>((done) =>
    child.once('exit', (code, signal) => done(code ?? signal)),
  );
  if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGINT');
  return exited;
}

test(
  'first day - a fresh clone installs, runs the README quick start verbatim, and packs into an installable package',
  { timeout: 900_000 },
  async (t) => {
    const space = await mkdtemp(join(tmpdir(), 'jms-gateway-first-day-'));
    const clone = join(space, 'jms-gateway');
    const running: { gateway?: ChildProcess } = {};
    t.after(async () => {
      const { gateway } = running;
      if (gateway?.pid !== undefined && gateway.exitCode === null && gateway.signalCode === null)
        process.kill(-gateway.pid, 'SIGKILL');
      await rm(npxCacheEntry(clone), { recursive: true, force: true });
      await rm(space, { recursive: true, force: true });
    });

    await sh(`git clone --quiet "${repositoryRoot}" "${clone}"`, space);
    await sh(`npm install ${OFFLINE.join(' ')}`, clone, cleanEnv(await prebuiltSqlite(space)));
    const pkg = JSON.parse(await readFile(join(clone, 'package.json'), 'utf8')) as {
      version: string;
      bin: Record<string, string>;
    };
    const bin = join(clone, pkg.bin['jms-gateway']!);
    assert.ok(await isExecutable(bin), `npm install left ${bin} without its execute bit`);

    const readme = await readFile(join(clone, 'README.md'), 'utf8');
    const [install] = readmeBlock(readme, '## Quick start');
    assert.match(install ?? '', /^npm install && npm start\b/);
    const started = await npmStart(clone);
    running.gateway = started.child;
    const env = cleanEnv({ JMS_GATEWAY_ADMIN_URL: started.admin });
    for (const line of readmeBlock(readme, 'from another shell')) {
      if (line.startsWith('curl')) {
        // The metrics line, with fetch: the demo queues are there.
        const metrics = await (await fetch(`${started.admin}/metrics`)).text();
        assert.match(metrics, /destination="queue:\/\/demo\.out"/);
        continue;
      }
      // As written; JMS_GATEWAY_ADMIN_URL points them at the gateway's free port instead of 8161.
      const command = line;
      if (command.includes(' browse ')) {
        // The demo bridge moves the message sent by the line before.
        const listing = await eventually(async () => {
          const { stdout } = await sh(command, clone, env);
          return stdout.includes('<order id="1"/>') ? stdout : undefined;
        }, `'${command}' to list the message the demo bridge moved`);
        assert.match(listing, /region=eu/);
      } else {
        const { stdout } = await sh(command, clone, env);
        if (command.includes(' status')) assert.match(stdout, /demo/);
      }
    }
    const ended = await interrupt(started.child);
    assert.ok(ended === 0 || ended === 'SIGINT', started.output());
    const last = logLines(started.output()).at(-1);
    assert.deepEqual([last?.msg, last?.clean], ['stopped', true], started.output());

    // tsc rewrites the bin on every build; the build must set its mode again.
    await sh('npm run build', clone);
    assert.ok(await isExecutable(bin), `a second build left ${bin} without its execute bit`);
    assert.equal((await sh('npx jms-gateway --version', clone)).stdout.trim(), pkg.version);

    // dist/ is already built from this commit by the install; pack it without building again.
    const { stdout: packed } = await sh('npm pack --ignore-scripts --silent', clone);
    const tarball = join(clone, packed.trim().split('\n').at(-1)!);
    const { stdout: listing } = await sh(`tar -tzf "${tarball}"`, clone);
    const files = listing.split('\n').filter((name) => name !== '');
    for (const wanted of ['package/dist/src/cli/main.js', 'package/config/gateway.yaml', 'package/README.md'])
      assert.ok(files.includes(wanted), `the package lacks ${wanted}`);
    const extra = files.filter((name) =>
      /^package\/(test|bench|src|connectors|dist\/test|dist\/bench)\//.test(name),
    );
    assert.deepEqual(extra, [], 'the package holds tests, benchmarks or TypeScript sources');

    const empty = join(space, 'consumer');
    await mkdir(empty);
    // Without install scripts: better-sqlite3's native build is not what this checks, and
    // `--version` does not open a store.
    await sh(`npm install ${OFFLINE.join(' ')} --ignore-scripts "${tarball}"`, empty);
    assert.ok((await readdir(join(empty, 'node_modules'))).includes('jms-gateway'));
    // The installed command itself, as a project depending on the package runs it.
    const path = `${join(empty, 'node_modules', '.bin')}:${process.env.PATH ?? ''}`;
    assert.equal(
      (await sh('jms-gateway --version', empty, cleanEnv({ PATH: path }))).stdout.trim(),
      pkg.version,
    );
  },
);
