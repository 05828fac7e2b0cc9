/**
 * Crash recovery end to end (PER-1, PER-3): a worker process runs persistent load on a file store
 * and is killed with SIGKILL at random moments, then restarted on the same directory; at the end
 * a last run drains everything. The worker records each fact in a file before going on (see
 * test/helpers/crash-worker.ts), so from those lines alone the test can check that nothing whose
 * send resolved was lost, and that nothing whose acknowledgement or commit resolved came back.
 *
 * The kill times come from a seeded PRNG (CRASH_SEED overrides the seed; it is printed), so a
 * failing run can be repeated.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';

const WORKER = fileURLToPath(new URL('../helpers/crash-worker.ts', import.meta.url));
const ROUNDS = 4;
const MIN_RUN_MS = 500;
const MAX_RUN_MS = 2_000;
/** Generous: a cold tsx start on a loaded 2-core machine takes seconds. */
const READY_TIMEOUT_MS = 20_000;
const DRAIN_TIMEOUT_MS = 30_000;

/** mulberry32: a small seeded PRNG, so kill times can be replayed. */
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

interface Run {
  /** The worker's fact file (see crash-worker.ts). */
  factFile: string;
  stderr: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  ready: Promise<void>;
  child: ChildProcessWithoutNullStreams;
}

/** Starts the worker; `ready` resolves on its READY line and rejects if it exits or hangs before. */
function startWorker(dir: string, mode: 'load' | 'drain', round: number): Run {
  const factFile = join(dir, 'facts', `round-${round}.txt`);
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', WORKER, join(dir, 'store'), mode, String(round), factFile],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const run: Partial<Run> & { stderr: string } = { factFile, stderr: '', child };
  let stdout = '';
  let onReady: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.split('\n').includes('READY')) onReady?.();
  });
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()));
  run.exit = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  run.ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`worker round ${round} not ready after ${READY_TIMEOUT_MS} ms:\n${run.stderr}`));
    }, READY_TIMEOUT_MS);
    onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    void run.exit!.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`worker round ${round} exited (${code ?? signal}) before ready:\n${run.stderr}`));
    });
  });
  return run as Run;
}

/** The facts a run recorded. Only whole lines count: a line cut off by the kill was never claimed. */
async function factsOf(run: Run): Promise<string[]> {
  const lines = (await readFile(run.factFile, 'utf8').catch(() => '')).split('\n');
  lines.pop(); // empty after the last newline, or a line the kill cut short
  return lines;
}

/**
 * What the runs' lines say, read in the order they were written. A message counts as consumed
 * once an ACK says so, or once it was received (GOT) and never came back: the kill fell between
 * its acknowledgement and the ACK line, so the acknowledgement may well be stored ("in doubt";
 * bounded by what the consumers hold at a time).
 */
function analyse(runs: readonly string[][]) {
  const groups = { q: newGroup(), t: newGroup() };
  const resurrected: string[] = [];
  runs.forEach((lines, round) => {
    for (const line of lines) {
      const [kind, who, key] = line.split(' ') as [string, string, string];
      if (kind === 'SENT') groups[who as 'q' | 't'].sent.add(key);
      if (kind !== 'GOT' && kind !== 'ACK') continue;
      const group = groups[who === 'dur' ? 't' : 'q'];
      // Once its acknowledgement or commit resolved, a message must never be seen again.
      if (group.acked.has(key)) resurrected.push(`round ${round + 1}: ${line}`);
      if (kind === 'GOT') group.got.set(key, (group.got.get(key) ?? 0) + 1);
      else group.acked.add(key);
    }
  });
  const count = (fn: (group: ReturnType<typeof newGroup>) => number) => fn(groups.q) + fn(groups.t);
  const lost = [groups.q, groups.t].flatMap((g) =>
    [...g.sent].filter((k) => !g.acked.has(k) && !g.got.has(k)),
  );
  return {
    sentQueue: groups.q.sent.size,
    sentTopic: groups.t.sent.size,
    consumed: count((g) => new Set([...g.acked, ...g.got.keys()]).size),
    lost,
    resurrected,
    redelivered: count((g) => [...g.got.values()].reduce((n, times) => n + times - 1, 0)),
    inDoubt: count((g) => [...g.got.keys()].filter((k) => !g.acked.has(k)).length),
    unconfirmed: count((g) => [...g.acked].filter((k) => !g.sent.has(k)).length),
  };
}

function newGroup() {
  return { sent: new Set<string>(), got: new Map<string, number>(), acked: new Set<string>() };
}

test(
  'file store - kill -9 under load loses no sent message and brings back no acknowledged one (PER-1, PER-3)',
  { timeout: 120_000 },
  async (t) => {
    const seed = Number(process.env.CRASH_SEED ?? 20_260_101);
    const random = prng(seed);
    const dir = await mkdtemp(join(tmpdir(), 'crash-recovery-'));
    await mkdir(join(dir, 'store'));
    await mkdir(join(dir, 'facts'));
    const runs: string[][] = [];
    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const run = startWorker(dir, 'load', round);
        await run.ready;
        const after = Math.round(MIN_RUN_MS + random() * (MAX_RUN_MS - MIN_RUN_MS));
        await new Promise((resolve) => setTimeout(resolve, after));
        run.child.kill('SIGKILL');
        const { signal } = await run.exit;
        assert.equal(signal, 'SIGKILL', `round ${round} should still be running when killed:\n${run.stderr}`);
        runs.push(await factsOf(run));
        t.diagnostic(`round ${round}: killed after ${after} ms, ${runs.at(-1)!.length} facts`);
      }
      const drain = startWorker(dir, 'drain', ROUNDS + 1);
      let drainTimer: NodeJS.Timeout | undefined;
      const exited = await Promise.race([
        drain.exit,
        new Promise<never>((_, reject) => {
          drainTimer = setTimeout(
            () => reject(new Error(`drain did not finish in ${DRAIN_TIMEOUT_MS} ms:\n${drain.stderr}`)),
            DRAIN_TIMEOUT_MS,
          );
        }),
      ]).finally(() => {
        clearTimeout(drainTimer);
        drain.child.kill('SIGKILL');
      });
      assert.equal(exited.code, 0, `the drain run failed:\n${drain.stderr}`);
      runs.push(await factsOf(drain));
      assert.equal(runs.at(-1)!.at(-1), 'DRAINED 0 0', 'the drain leaves nothing behind');

      const result = analyse(runs);
      const summary =
        `seed ${seed}: sent ${result.sentQueue} to the queue and ${result.sentTopic} to the topic, ` +
        `consumed ${result.consumed}, lost ${result.lost.length}, redelivered ${result.redelivered}, ` +
        `came back after acknowledgement ${result.resurrected.length}, ` +
        `acknowledged as the kill came (in doubt) ${result.inDoubt}, ` +
        `consumed although the send never reported ${result.unconfirmed}`;
      console.log(`crash recovery: ${summary}`);
      t.diagnostic(summary);
      assert.ok(result.sentQueue > 0 && result.sentTopic > 0, 'the load ran');
      assert.deepEqual(
        result.lost.slice(0, 10),
        [],
        `lost ${result.lost.length} messages whose send had resolved`,
      );
      assert.deepEqual(result.resurrected.slice(0, 10), [], 'acknowledged or committed messages came back');
      // Per kill at most: one message per AUTO listener, a transaction of 5, one durable receive.
      assert.ok(
        result.inDoubt <= ROUNDS * (2 + 5 + 1),
        `${result.inDoubt} messages in doubt is more than consumers hold`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);
