/**
 * File store benchmarks (PER-1), each next to its baseline in the same run:
 *
 * (a) persistent sends of 1 KB TextMessages to a queue through the JMS API with 1, 8 and 64
 *     concurrent producers (each awaiting its own sends in a loop), next to the limit: a loop of
 *     raw better-sqlite3 inserts into the same tables (a message row and a reference row per
 *     message, pre-serialized), on the same settings (WAL, synchronous=FULL, exclusive locking),
 *     one transaction per N messages for N producers — the batch group commit can form at best.
 *     Targets: >= 50,000 msgs/s with 64 producers and >= 60% of the limit.
 * (b) restart: FileStore.open + JmsEngine.open on a store holding RESTART_MESSAGES 1 KB messages
 *     (default 1,000,000; the store is built with big commits first), in a process of its own
 *     (restart-child.ts) so its peak resident size is the restart's; and the heap each recovered
 *     message takes; plus the heap per message queued by sends, for comparison, and the heap per
 *     message paged out with STORE_BENCH_QUEUED (default 1,000,000) queued: target <= 250 B.
 *
 * Run: `npm run bench store` (or `node --import tsx --expose-gc bench/store.bench.ts`).
 * STORE_BENCH_RESTART=200000 measures a smaller restart; STORE_BENCH_THROUGHPUT=0 leaves out (a).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { ConnectionFactory, JmsEngine, Queue, type StoreOperation, TextMessage } from '../src/index.js';
import { FileStore } from '../src/store/file-store.js';
import { serializeMessage } from '../src/store/message-serializer.js';
import { measure, printJson, printTable, siblingScript, target, type BenchRow } from './lib.js';

const BODY = 'x'.repeat(1024);
const PRODUCER_COUNTS = [1, 8, 64] as const;
/** Messages per measured run, per producer count: about a second each on this machine. */
const MESSAGES: Record<(typeof PRODUCER_COUNTS)[number], number> = { 1: 3_000, 8: 20_000, 64: 102_400 };
const RESTART_MESSAGES = Number(process.env.STORE_BENCH_RESTART ?? 1_000_000);
const QUEUED_MESSAGES = Number(process.env.STORE_BENCH_QUEUED ?? 1_000_000);
/** STORE_BENCH_THROUGHPUT=0 measures memory and restart only. */
const MEASURE_THROUGHPUT = process.env.STORE_BENCH_THROUGHPUT !== '0';
/** The documented ceiling for 1,000,000 queued 1 KB messages with paging (docs/persistence.md). */
const PAGED_RSS_CEILING_MB = 1_024;
/** Heap a paged-out message may keep (PER-4): its record, its entry and its slot in the order. */
const PAGED_MESSAGE_HEAP_CEILING = 250;

const root = mkdtempSync(join(tmpdir(), 'store-bench-'));
let runs = 0;
const freshDir = () => join(root, `run-${++runs}`) + '/';

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('run with --expose-gc (npm run bench does)');
  collect();
  collect();
}

// --- (a) throughput ---

async function jmsSends(producers: number, total: number): Promise<void> {
  const dir = freshDir();
  const store = await FileStore.open({ path: dir });
  const engine = await JmsEngine.open({ store });
  const connection = new ConnectionFactory(engine).createConnection();
  const queue = await engine.createQueue('bench');
  const perProducer = total / producers;
  await Promise.all(
    Array.from({ length: producers }, async () => {
      const producer = connection.createSession().createProducer(queue);
      for (let i = 0; i < perProducer; i++) await producer.send(new TextMessage(BODY));
    }),
  );
  const held = engine.destinationStatistics(queue).messagesCurrent;
  if (held !== total) throw new Error(`expected ${total} messages on the queue, found ${held}`);
  await connection.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
}

/** The limit: the same rows, pre-serialized, inserted in transactions of `batch` messages. */
async function rawInserts(batch: number, total: number): Promise<void> {
  const dir = freshDir();
  const store = await FileStore.open({ path: dir });
  await store.close();
  const db = new Database(store.file);
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('cache_size = -32768');
  const message = new TextMessage(BODY);
  message.setJMSDestination(new Queue('bench'));
  message.setJMSTimestamp(Date.now());
  message.setJMSMessageID('ID:0123456789ab-0');
  const row = serializeMessage(message);
  const insertMessage = db.prepare(
    'INSERT OR REPLACE INTO messages (seq, id, body_type, headers, properties, body) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertRef = db.prepare(
    'INSERT OR REPLACE INTO refs (id, backlog, seq, delivery_count, not_before) VALUES (?, ?, ?, ?, ?)',
  );
  const write = db.transaction((first: number) => {
    for (let seq = first; seq < first + batch; seq++) {
      const id = `ID:0123456789ab-${seq.toString(36)}`;
      insertMessage.run(seq, id, row.bodyType, row.headers, row.properties, row.body);
      insertRef.run(id, 'queue://bench', seq, 0, 0);
    }
  });
  for (let first = 1; first <= total; first += batch) write(first);
  db.close();
  rmSync(dir, { recursive: true, force: true });
  return Promise.resolve();
}

/**
 * Like `best`, but subject and baseline take turns (one warm-up each, then `rounds` pairs): the
 * disk and the other processes on a shared machine change from second to second, and both sides
 * should see the same conditions.
 */
async function alternating(
  subject: [string, () => Promise<void>],
  baseline: [string, () => Promise<void>],
  ops: number,
  rounds = 4,
): Promise<[BenchRow, BenchRow]> {
  await subject[1]();
  await baseline[1]();
  let top: [BenchRow | undefined, BenchRow | undefined] = [undefined, undefined];
  for (let round = 0; round < rounds; round++) {
    const a = await measure(subject[0], ops, subject[1]);
    const b = await measure(baseline[0], ops, baseline[1]);
    top = [!top[0] || a.rate > top[0].rate ? a : top[0], !top[1] || b.rate > top[1].rate ? b : top[1]];
  }
  return [top[0]!, top[1]!];
}

async function throughput() {
  const rows: Record<string, unknown>[] = [];
  const rates: Record<string, number> = {};
  for (const producers of PRODUCER_COUNTS) {
    const total = MESSAGES[producers];
    const [jms, raw] = await alternating(
      [`JMS API, ${producers} producer${producers > 1 ? 's' : ''}`, () => jmsSends(producers, total)],
      [`raw inserts, ${producers} per transaction (limit)`, () => rawInserts(producers, total)],
      total,
    );
    rows.push({ ...jms, 'vs limit': `${((jms.rate / raw.rate) * 100).toFixed(1)}%` }, raw);
    rates[`producers${producers}`] = jms.rate;
    rates[`producers${producers}Raw`] = raw.rate;
  }
  return { rows, rates };
}

// --- (b) restart and heap ---

/** A store holding `count` messages like those a producer sends, built with big commits. */
async function buildStore(dir: string, count: number): Promise<number> {
  const store = await FileStore.open({ path: dir });
  await store.recover();
  await store.commit([
    { op: 'putDestination', destination: { kind: 'queue', name: 'restart', options: {} } },
  ]);
  const queue = new Queue('restart');
  const started = performance.now();
  const batch = 10_000;
  for (let first = 1; first <= count; first += batch) {
    const operations: StoreOperation[] = [];
    for (let seq = first; seq < Math.min(first + batch, count + 1); seq++) {
      const message = new TextMessage(BODY);
      const id = `ID:0123456789ab-${seq.toString(36)}`;
      message.setJMSMessageID(id);
      message.setJMSDestination(queue);
      message.setJMSTimestamp(Date.now());
      message.setIntProperty('n', seq);
      operations.push(
        { op: 'addMessage', id, seq, message },
        { op: 'addRef', backlog: 'queue://restart', id, seq, deliveryCount: 0, notBefore: 0 },
      );
    }
    await store.commit(operations);
  }
  await store.close();
  return performance.now() - started;
}

/** Builds a store of `count` messages, then restarts on it in a process of its own (bench/restart-child.ts). */
async function restart(count: number) {
  const dir = freshDir();
  const buildMs = await buildStore(dir, count);
  const bytes = statSync(join(dir, 'gateway.db')).size;
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', ...siblingScript(import.meta.url, 'restart-child'), dir, String(count)],
    { encoding: 'utf8' },
  );
  if (child.status !== 0) throw new Error(`the restart failed: ${child.stderr}`);
  const measured = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
    openMs: number;
    recoverMs: number;
    restartMs: number;
    heapPerMessage: number;
    peakRssMB: number;
  };
  rmSync(dir, { recursive: true, force: true });
  return {
    messages: count,
    storeMB: Math.round(bytes / 1e6),
    buildS: Math.round(buildMs / 100) / 10,
    ...measured,
  };
}

/**
 * Heap per message held on a queue after persistent sends (what a running gateway pays), and the
 * highest resident set size seen while sending, with the given paging threshold (PER-4). With
 * paging, also the heap each *paged* message takes: the sends go in two halves, and the heap
 * measured between them (both past the threshold, so every message of the second half is paged)
 * leaves out the messages kept whole below the threshold.
 */
async function queuedHeap(
  count: number,
  pagingThresholdBytes: number,
): Promise<{ heapPerMessage: number; heapPerPagedMessage?: number; peakRssMB: number; paged: number }> {
  const dir = freshDir();
  const store = await FileStore.open({ path: dir });
  const engine = await JmsEngine.open({ store, pagingThresholdBytes });
  let peakRss = 0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const connection = new ConnectionFactory(engine).createConnection();
  const queue = await engine.createQueue('heap');
  const producers = Array.from({ length: 64 }, () => connection.createSession().createProducer(queue));
  const send = (messages: number) =>
    Promise.all(
      producers.map(async (producer) => {
        // Each body its own string, as real traffic has (a shared one would hide its cost).
        for (let i = 0; i < messages / 64; i++)
          await producer.send(new TextMessage(Buffer.from(BODY).toString()));
      }),
    );
  gc();
  const before = process.memoryUsage().heapUsed;
  const firstHalf = Math.floor(count / 128) * 64;
  await send(firstHalf);
  gc();
  const half = process.memoryUsage().heapUsed;
  const pagedAtHalf = engine.messagesPagedOut;
  await send(count - firstHalf);
  gc();
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const after = process.memoryUsage().heapUsed;
  const perMessage = Math.round((after - before) / count);
  const paged = engine.messagesPagedOut;
  const secondHalf = count - firstHalf;
  const result: { heapPerMessage: number; heapPerPagedMessage?: number; peakRssMB: number; paged: number } = {
    heapPerMessage: perMessage,
    peakRssMB: Math.round(peakRss / 1e6),
    paged,
  };
  // Only when the whole second half was paged does the difference measure paged messages alone.
  if (pagedAtHalf > 0 && paged - pagedAtHalf === secondHalf)
    result.heapPerPagedMessage = Math.round((after - half) / secondHalf);
  await connection.close();
  await engine.close();
  rmSync(dir, { recursive: true, force: true });
  return result;
}

try {
  const { rows, rates } = MEASURE_THROUGHPUT ? await throughput() : { rows: [], rates: {} };
  if (MEASURE_THROUGHPUT) printTable('File store: persistent 1 KB sends to a queue, messages/s', rows);
  const paging = await queuedHeap(QUEUED_MESSAGES, 64 * 1024 * 1024);
  const unpaged = await queuedHeap(Math.min(QUEUED_MESSAGES, 204_800), Infinity);
  printTable(`Memory: persistent 1 KB messages queued by 64 producers`, [
    { run: 'paging past 64 MiB', messages: QUEUED_MESSAGES, ...paging },
    { run: 'no paging', messages: Math.min(QUEUED_MESSAGES, 204_800), ...unpaged },
  ]);
  const restarted = await restart(RESTART_MESSAGES);
  printTable('Restart: FileStore.open + JmsEngine.open (default paging threshold, 128 MiB)', [restarted]);
  const ratio = MEASURE_THROUGHPUT ? rates.producers64! / rates.producers64Raw! : undefined;
  printJson('store', {
    ...rates,
    ratio64: ratio,
    ...restarted,
    queuedHeapPerMessagePaged: paging.heapPerMessage,
    queuedPeakRssMBPaged: paging.peakRssMB,
    queuedHeapPerPagedMessage: paging.heapPerPagedMessage,
    queuedHeapPerMessageUnpaged: unpaged.heapPerMessage,
  });
  target(
    `${QUEUED_MESSAGES.toLocaleString('en-US')} queued 1 KB messages with paging stay under ${PAGED_RSS_CEILING_MB} MB resident (peak ${paging.peakRssMB} MB)`,
    paging.peakRssMB <= PAGED_RSS_CEILING_MB,
  );
  target(
    `a paged-out message holds <= ${PAGED_MESSAGE_HEAP_CEILING} B of heap with ${QUEUED_MESSAGES.toLocaleString('en-US')} queued (got ${paging.heapPerPagedMessage ?? 'none paged'})`,
    paging.heapPerPagedMessage !== undefined && paging.heapPerPagedMessage <= PAGED_MESSAGE_HEAP_CEILING,
  );
  if (MEASURE_THROUGHPUT) {
    target(
      `64 producers >= 50,000 persistent msgs/s (got ${rates.producers64!.toLocaleString('en-US')})`,
      rates.producers64! >= 50_000,
    );
    target(
      `64 producers >= 60% of raw inserts batched the same way (got ${(ratio! * 100).toFixed(1)}%)`,
      ratio! >= 0.6,
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
