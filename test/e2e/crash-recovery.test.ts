/**
 * Crash recovery end to end (PER-1, PER-3): a worker process runs persistent load on a file store
 * (and, in a second test, on the PostgreSQL store)
 * and is killed with SIGKILL at random moments, then restarted on the same directory; at the end
 * a last run drains everything. The exactly-once variants (BRG-2) do the same to a gateway whose
 * exactly-once bridge moves the load from an engine queue to an engine queue or to Kafka (see
 * test/helpers/crash-bridge-worker.ts), and count every key at the target: none lost, none twice.
 * The RabbitMQ variant runs the route as deployed: the test publishes to a RabbitMQ queue (which
 * redelivers what the killed gateway had not acknowledged), one exactly-once bridge moves it into
 * a persistent engine queue and a second one on to Kafka (test/helpers/crash-rabbit-worker.ts);
 * at Kafka, read read_committed, each key must be there once and each group in order.
 * The worker records each fact in a file before going on (see
 * test/helpers/crash-worker.ts), so from those lines alone the test can check that nothing whose
 * send resolved was lost, and that nothing whose acknowledgement or commit resolved came back.
 *
 * The kill times come from a seeded PRNG (CRASH_SEED overrides the seed; it is printed), so a
 * failing run can be repeated.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TestContext, test } from 'node:test';
import { connect as amqpConnect } from 'amqplib';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import { amqpBroker, connected, kafkaBroker } from '../helpers/brokers.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { outOfOrder, publishUntilStopped, readCommittedKeys } from '../helpers/keyed-flow.js';
import { uniqueName } from '../helpers/names.js';
import { dropSchema, postgresSkip, uniqueSchema } from '../helpers/postgres.js';

const WORKER = fileURLToPath(new URL('../helpers/crash-worker.ts', import.meta.url));
const BRIDGE_WORKER = fileURLToPath(new URL('../helpers/crash-bridge-worker.ts', import.meta.url));
const RABBIT_WORKER = fileURLToPath(new URL('../helpers/crash-rabbit-worker.ts', import.meta.url));
const amqp = await amqpBroker();
const kafka = await kafkaBroker();
const postgresMissing = (await postgresSkip()) ?? false;
const ROUNDS = 4;
const MIN_RUN_MS = 500;
const MAX_RUN_MS = 2_000;
/** Generous: a cold tsx start on a loaded 2-core machine takes seconds. */
const READY_TIMEOUT_MS = 20_000;
const DRAIN_TIMEOUT_MS = 30_000;
/**
 * A drain that sends to Kafka through a transactional sink. On a newly formatted Kafka 4.1 the
 * transaction a killed producer left open is ended by its timeout (the sink's transactionTimeout,
 * 10 s in the workers, 60 s by default), not when the restarted producer fences it, and the sink's
 * sends wait for that meanwhile (docs/bridges.md, "Where exactly-once ends"). A bound, not a wait:
 * a drain ends as soon as the target has everything.
 */
const KAFKA_DRAIN_TIMEOUT_MS = 150_000;

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
function startWorker(
  dir: string,
  mode: 'load' | 'drain',
  round: number,
  store = join(dir, 'store'),
  env: Record<string, string> = {},
): Run {
  const factFile = join(dir, 'facts', `round-${round}.txt`);
  return spawnWorker([WORKER, store, mode, String(round), factFile], factFile, round, env);
}

/** Starts the exactly-once bridge worker (crash-bridge-worker.ts) for `target`. */
function startBridgeWorker(
  dir: string,
  target: 'internal' | { brokers: readonly string[]; topic: string },
  mode: 'load' | 'drain',
  round: number,
): Run {
  const factFile = join(dir, 'facts', `round-${round}.txt`);
  const where = target === 'internal' ? ['internal'] : ['kafka'];
  const kafkaArgs = target === 'internal' ? [] : [target.brokers.join(','), target.topic];
  return spawnWorker(
    [BRIDGE_WORKER, dir, ...where, mode, String(round), factFile, ...kafkaArgs],
    factFile,
    round,
  );
}

function spawnWorker(
  args: readonly string[],
  factFile: string,
  round: number,
  env: Record<string, string> = {},
): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
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
  const badBodies: string[] = [];
  runs.forEach((lines, round) => {
    for (const line of lines) {
      const [kind, who, key] = line.split(' ') as [string, string, string];
      if (kind === 'BAD') badBodies.push(`round ${round + 1}: ${who}`);
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
    badBodies,
    redelivered: count((g) => [...g.got.values()].reduce((n, times) => n + times - 1, 0)),
    inDoubt: count((g) => [...g.got.keys()].filter((k) => !g.acked.has(k)).length),
    unconfirmed: count((g) => [...g.acked].filter((k) => !g.sent.has(k)).length),
  };
}

function newGroup() {
  return { sent: new Set<string>(), got: new Map<string, number>(), acked: new Set<string>() };
}

/** Where {@link crashUnderLoad} runs its worker's engine. */
interface CrashStore {
  /** In the console line: '' or ' (…)'. */
  label: string;
  /** The worker's store argument: the file store's directory (ending in `/`), or `postgres:<schema>`. */
  store(dir: string): string;
  /** Goes to the worker (CRASH_LARGE_BODY_BYTES puts file store bodies in files of their own). */
  env?: Record<string, string>;
  /** Checks on the store once drained. */
  drained?(dir: string): void;
  cleanup?(): Promise<void>;
}

/** Kills a worker under load {@link ROUNDS} times, drains it, and checks what its lines say. */
async function crashUnderLoad(t: TestContext, on: CrashStore): Promise<void> {
  const seed = Number(process.env.CRASH_SEED ?? 20_260_101);
  const random = prng(seed);
  const dir = await mkdtemp(join(tmpdir(), 'crash-recovery-'));
  await mkdir(join(dir, 'facts'));
  try {
    const runs = await killRounds(
      t,
      (mode, round) => startWorker(dir, mode, round, on.store(dir), on.env),
      random,
      { rounds: ROUNDS },
    );
    on.drained?.(dir);
    const result = analyse(runs);
    const summary =
      `seed ${seed}: sent ${result.sentQueue} to the queue and ${result.sentTopic} to the topic, ` +
      `consumed ${result.consumed}, lost ${result.lost.length}, redelivered ${result.redelivered}, ` +
      `came back after acknowledgement ${result.resurrected.length}, ` +
      `acknowledged as the kill came (in doubt) ${result.inDoubt}, ` +
      `consumed although the send never reported ${result.unconfirmed}`;
    console.log(`crash recovery${on.label}: ${summary}`);
    t.diagnostic(summary);
    assert.ok(result.sentQueue > 0 && result.sentTopic > 0, 'the load ran');
    assert.deepEqual(
      result.lost.slice(0, 10),
      [],
      `lost ${result.lost.length} messages whose send had resolved`,
    );
    assert.deepEqual(result.resurrected.slice(0, 10), [], 'acknowledged or committed messages came back');
    assert.deepEqual(result.badBodies.slice(0, 10), [], 'messages came back with another body');
    // Per kill at most: one message per AUTO listener, a transaction of 5, one durable receive.
    assert.ok(
      result.inDoubt <= ROUNDS * (2 + 5 + 1),
      `${result.inDoubt} messages in doubt is more than consumers hold`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    await on.cleanup?.();
  }
}

test(
  'file store - kill -9 under load loses no sent message and brings back no acknowledged one (PER-1, PER-3)',
  { timeout: 120_000 },
  (t) => crashUnderLoad(t, { label: '', store: (dir) => `${join(dir, 'store')}/` }),
);

test(
  'file store, every body in a file of its own - kill -9 under load loses no sent message, no body, and brings back no acknowledged one (PER-1, PER-3)',
  { timeout: 120_000 },
  (t) =>
    crashUnderLoad(t, {
      label: ' (bodies in files)',
      store: (dir) => `${join(dir, 'store')}/`,
      env: { CRASH_LARGE_BODY_BYTES: '1' },
      // Drained, the store holds no message: no body file either, neither a deleted message's nor
      // one a kill left without its commit (swept when the next run opened the store).
      drained(dir) {
        const bodies = join(dir, 'store', 'gateway.db-bodies');
        assert.ok(existsSync(bodies), 'bodies went to files');
        assert.deepEqual(readdirSync(bodies), [], 'body files left after the drain');
      },
    }),
);

test(
  'postgres store - kill -9 under load loses no sent message and brings back no acknowledged one (PER-1, PER-3)',
  { timeout: 120_000, skip: postgresMissing },
  (t) => {
    const schema = uniqueSchema('crash');
    return crashUnderLoad(t, {
      label: ' (postgres)',
      store: () => `postgres:${schema}`,
      cleanup: () => dropSchema(schema),
    });
  },
);

const EXACTLY_ONCE_ROUNDS = 3;

/** Starts one run of a worker killed by {@link killRounds}. */
type StartRun = (mode: 'load' | 'drain', round: number) => Run;

/** How {@link killRounds} runs a worker: how often it kills it, when, and how long the drain may take. */
interface KillPlan {
  /** Runs killed before the drain. Default EXACTLY_ONCE_ROUNDS. */
  rounds?: number;
  /** Each run lasts a seeded time in this range before its kill, ms. */
  runMs?: { min: number; max: number };
  /** Runs after the last kill, before the drain starts. */
  beforeDrain?: () => Promise<void>;
  /** Default DRAIN_TIMEOUT_MS. */
  drainTimeoutMs?: number;
}

/**
 * Runs seeded kills of a worker and then a drain run, which must end by itself leaving nothing
 * behind; returns every run's fact lines.
 */
async function killRounds(
  t: { diagnostic(message: string): void },
  start: StartRun,
  random: () => number,
  plan: KillPlan = {},
): Promise<string[][]> {
  const rounds = plan.rounds ?? EXACTLY_ONCE_ROUNDS;
  const runMs = plan.runMs ?? { min: MIN_RUN_MS, max: MAX_RUN_MS };
  const drainTimeoutMs = plan.drainTimeoutMs ?? DRAIN_TIMEOUT_MS;
  const runs: string[][] = [];
  for (let round = 1; round <= rounds; round++) {
    const run = start('load', round);
    await run.ready;
    const after = Math.round(runMs.min + random() * (runMs.max - runMs.min));
    await new Promise((resolve) => setTimeout(resolve, after));
    run.child.kill('SIGKILL');
    const { signal } = await run.exit;
    assert.equal(signal, 'SIGKILL', `round ${round} should still be running when killed:\n${run.stderr}`);
    runs.push(await factsOf(run));
    t.diagnostic(`round ${round}: killed after ${after} ms, ${runs.at(-1)!.length} facts`);
  }
  await plan.beforeDrain?.();
  const drain = start('drain', rounds + 1);
  let drainTimer: NodeJS.Timeout | undefined;
  const exited = await Promise.race([
    drain.exit,
    new Promise<never>((_, reject) => {
      drainTimer = setTimeout(
        () => reject(new Error(`drain did not finish in ${drainTimeoutMs} ms:\n${drain.stderr}`)),
        drainTimeoutMs,
      );
    }),
  ]).finally(() => {
    clearTimeout(drainTimer);
    drain.child.kill('SIGKILL');
  });
  assert.equal(exited.code, 0, `the drain run failed:\n${drain.stderr}`);
  runs.push(await factsOf(drain));
  assert.equal(runs.at(-1)!.at(-1), 'DRAINED 0 0', 'the drain leaves nothing behind');
  return runs;
}

/**
 * Each key sent against what reached the target: lost (sent, never there), twice (there more than
 * once), and unconfirmed (there, though the kill came before its SENT line: at most one per
 * producer per kill).
 */
function compare(runs: readonly string[][], atTarget: readonly string[]) {
  const sent = new Set(runs.flat().flatMap((line) => (line.startsWith('SENT ') ? [line.slice(5)] : [])));
  const times = new Map<string, number>();
  for (const key of atTarget) times.set(key, (times.get(key) ?? 0) + 1);
  return {
    sent: sent.size,
    lost: [...sent].filter((key) => !times.has(key)),
    twice: [...times].filter(([, n]) => n > 1).map(([key, n]) => `${key} x${n}`),
    unconfirmed: [...times.keys()].filter((key) => !sent.has(key)).length,
  };
}

function assertExactlyOnce(
  t: { diagnostic(message: string): void },
  seed: number,
  result: ReturnType<typeof compare>,
) {
  const summary =
    `seed ${seed}: sent ${result.sent}, lost ${result.lost.length}, twice ${result.twice.length}, ` +
    `at the target although the send never reported ${result.unconfirmed}`;
  console.log(`exactly-once crash: ${summary}`);
  t.diagnostic(summary);
  assert.ok(result.sent > 0, 'the load ran');
  assert.deepEqual(
    result.lost.slice(0, 10),
    [],
    `lost ${result.lost.length} messages whose send had resolved`,
  );
  assert.deepEqual(result.twice.slice(0, 10), [], `${result.twice.length} messages reached the target twice`);
  assert.ok(
    result.unconfirmed <= EXACTLY_ONCE_ROUNDS * 4,
    `${result.unconfirmed} unconfirmed is more than the producers hold`,
  );
}

test(
  'bridge - exactly-once into an engine queue under kill -9 delivers every message once (BRG-2, PER-1)',
  { timeout: 120_000 },
  async (t) => {
    const seed = Number(process.env.CRASH_SEED ?? 20_260_102);
    const dir = await mkdtemp(join(tmpdir(), 'crash-exactly-once-'));
    await mkdir(join(dir, 'facts'));
    try {
      const runs = await killRounds(
        t,
        (mode, round) => startBridgeWorker(dir, 'internal', mode, round),
        prng(seed),
      );
      const atTarget = runs.at(-1)!.flatMap((line) => (line.startsWith('OUT ') ? [line.slice(4)] : []));
      assertExactlyOnce(t, seed, compare(runs, atTarget));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

test(
  'bridge - exactly-once to kafka under kill -9 delivers every message once (BRG-2)',
  { skip: kafka.skip, timeout: 240_000 },
  async (t) => {
    const seed = Number(process.env.CRASH_SEED ?? 20_260_103);
    const { brokers } = connected(kafka);
    const topic = uniqueName('t-crash-eo');
    const admin = new Kafka({ brokers: [...brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const dir = await mkdtemp(join(tmpdir(), 'crash-exactly-once-kafka-'));
    await mkdir(join(dir, 'facts'));
    try {
      await createKafkaTopics(admin, [{ topic, numPartitions: 2, replicationFactor: 1 }]);
      // A transaction per message is slower than a store commit: longer runs for as many kills.
      const runs = await killRounds(
        t,
        (mode, round) => startBridgeWorker(dir, { brokers, topic }, mode, round),
        prng(seed),
        { runMs: { min: 2_000, max: 4_000 }, drainTimeoutMs: KAFKA_DRAIN_TIMEOUT_MS },
      );
      assertExactlyOnce(t, seed, compare(runs, await readCommittedKeys(brokers, topic)));
    } finally {
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await rm(dir, { recursive: true, force: true });
    }
  },
);

/** Starts the RabbitMQ → queue://mid → Kafka worker (crash-rabbit-worker.ts). */
function startRabbitWorker(
  dir: string,
  route: { url: string; queue: string; brokers: readonly string[]; topic: string },
  mode: 'load' | 'drain',
  round: number,
): Run {
  const factFile = join(dir, 'facts', `round-${round}.txt`);
  return spawnWorker(
    [RABBIT_WORKER, dir, mode, factFile, route.url, route.queue, route.brokers.join(','), route.topic],
    factFile,
    round,
  );
}

test(
  'bridge - exactly-once from rabbitmq through an engine queue to kafka under kill -9 delivers every message once, in order (BRG-2, ORD-3)',
  { skip: amqp.skip || kafka.skip, timeout: 300_000 },
  async (t) => {
    const seed = Number(process.env.CRASH_SEED ?? 20_260_104);
    const { url } = connected(amqp);
    const { brokers } = connected(kafka);
    const queue = uniqueName('q-crash-rabbit');
    const topic = uniqueName('t-crash-rabbit');
    const rabbit = await amqpConnect(url);
    const setup = await rabbit.createChannel();
    const admin = new Kafka({ brokers: [...brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const dir = await mkdtemp(join(tmpdir(), 'crash-exactly-once-rabbit-'));
    await mkdir(join(dir, 'facts'));
    try {
      await setup.assertQueue(queue, { durable: true });
      await createKafkaTopics(admin, [{ topic, numPartitions: 2, replicationFactor: 1 }]);
      const route = { url, queue, brokers, topic };
      const publisher = await publishUntilStopped(url, queue);
      let sent: string[] = [];
      const runs = await killRounds(
        t,
        (mode, round) => startRabbitWorker(dir, route, mode, round),
        prng(seed),
        {
          runMs: { min: 2_000, max: 5_000 },
          beforeDrain: async () => {
            sent = await publisher.stop();
          },
          // Two bridges' backlog, the second one transaction per message, after the wait above.
          drainTimeoutMs: KAFKA_DRAIN_TIMEOUT_MS + DRAIN_TIMEOUT_MS,
        },
      ).finally(() => publisher.stop());
      const atTarget = await readCommittedKeys(brokers, topic);
      const result = compare([...runs, sent], atTarget);
      const late = outOfOrder(atTarget);
      // The last DROPPED line of each run: redelivered copies the two windows recognised.
      const dropped = runs.map(
        (lines) => lines.findLast((line) => line.startsWith('DROPPED ')) ?? 'DROPPED 0 0',
      );
      const [intoMid, intoKafka] = [1, 2].map((column) =>
        dropped.reduce((n, line) => n + Number(line.split(' ')[column]), 0),
      );
      t.diagnostic(
        `seed ${seed}: ${atTarget.length} records at kafka, ${late.length} out of order; redelivered ` +
          `copies dropped: ${intoMid} from rabbitmq, ${intoKafka} from queue://mid`,
      );
      assertExactlyOnce(t, seed, result);
      assert.deepEqual(
        late.slice(0, 10),
        [],
        `${late.length} messages reached kafka behind a later one of their group`,
      );
    } finally {
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
      await setup.deleteQueue(queue).catch(() => undefined);
      await rabbit.close().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  },
);
