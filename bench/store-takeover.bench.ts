/**
 * Takeover time of an active/standby group on the PostgreSQL store (`npm run bench store` runs it
 * with the stores' benchmarks): two `jms-gateway run` processes with the default lease settings
 * (a 6 s grant renewed every 2 s, claims every second) and a queue holding 2,000 persistent
 * messages; the active is killed (kill -9) 10 times, and each time the time from the kill to the
 * other instance answering `/ready` with 200 is measured (detection, recovery of the store, the
 * admin API). A killed instance is started again as the standby. Target: every takeover within
 * 10 s; p50 and max printed.
 *
 * PG_URL picks the server (default postgres://postgres@127.0.0.1:5432/test); the benchmark works
 * in a schema of its own and drops it. Without a server it says so and passes, measuring nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { printJson, printTable, target } from './lib.js';

const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const KILLS = 10;
const BACKLOG = 2_000;
const TARGET_MS = 10_000;
/** The compiled command, next to the compiled benchmark (dist/bench → dist/src). */
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js');

interface Instance {
  readonly child: ChildProcess;
  readonly admin: string;
}

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Starts an instance; resolves with its admin address once it logged `gateway ready`. */
function start(dir: string): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN, 'run', '--config', 'gateway.yaml', '--admin-port', '0'], {
    cwd: dir,
    env: { ...process.env, PG_URL },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no 'gateway ready' within 60 s:\n${output}`)), 60_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes('"gateway ready"')) continue;
        clearTimeout(timer);
        resolve({ child, admin: (JSON.parse(line) as { admin: string }).admin });
        return;
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the gateway exited (${String(code)}) before it was ready:\n${output}`));
    });
  });
}

async function ready(instance: Instance): Promise<boolean> {
  const answer = await fetch(`${instance.admin}/ready`).catch(() => undefined);
  return answer?.status === 200;
}

/** Polls every 20 ms until one instance is ready; that is the measurement's resolution. */
async function activeOf(instances: readonly Instance[], timeoutMs = 60_000): Promise<Instance> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const instance of instances) if (await ready(instance)) return instance;
    if (Date.now() > deadline) throw new Error('no instance became active');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function fillBacklog(admin: string): Promise<void> {
  for (let sent = 0; sent < BACKLOG; sent += 100) {
    await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${admin}/destinations/queue/orders/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 'text', body: 'x'.repeat(1024) }),
        }).then((answer) => {
          if (!answer.ok) throw new Error(`send refused: ${answer.status}`);
        }),
      ),
    );
  }
}

async function main(): Promise<void> {
  try {
    await sql('SELECT 1');
  } catch (error) {
    console.log(`no PostgreSQL at ${new URL(PG_URL).host} (${(error as Error).message}): nothing measured`);
    return;
  }
  const schema = `bench_ha_${randomBytes(3).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'bench-takeover-'));
  await writeFile(
    join(dir, 'gateway.yaml'),
    [
      'store: { type: postgres, url: "${PG_URL}", schema: ' + schema + ' }',
      'ha: { enabled: true, group: bench }',
      'destinations:',
      '  queues: [{ name: orders }]',
      '',
    ].join('\n'),
  );
  const instances: Instance[] = [];
  try {
    instances.push(await start(dir));
    instances.push(await start(dir));
    await fillBacklog((await activeOf(instances)).admin);
    const takeovers: number[] = [];
    for (let kill = 1; kill <= KILLS; kill++) {
      const active = await activeOf(instances);
      const others = instances.filter((instance) => instance !== active);
      const killedAt = Date.now();
      active.child.kill('SIGKILL');
      await activeOf(others);
      takeovers.push(Date.now() - killedAt);
      instances.splice(instances.indexOf(active), 1);
      instances.push(await start(dir));
    }
    const sorted = [...takeovers].sort((a, b) => a - b);
    const p50 = sorted[Math.floor((sorted.length - 1) / 2)]!;
    const max = sorted.at(-1)!;
    printTable(
      `takeover after kill -9 of the active (default lease: 6 s, renewed every 2 s, claims every 1 s; ${BACKLOG.toLocaleString('en-US')} messages to recover)`,
      takeovers.map((ms, i) => ({ kill: i + 1, 'takeover ms': ms })),
    );
    console.log(`p50 ${p50} ms, max ${max} ms`);
    target(`every takeover within ${TARGET_MS.toLocaleString('en-US')} ms (max ${max} ms)`, max <= TARGET_MS);
    printJson('store-takeover', { takeovers, p50, max });
  } finally {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
    await sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  }
}

await main();
