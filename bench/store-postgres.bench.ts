/**
 * PostgreSQL store benchmark (`npm run bench store` runs it with the file store's): persistent
 * sends of 1 KB TextMessages to a queue through the JMS API with 64 concurrent producers (each
 * awaiting its own sends), next to its limit in the same run: raw inserts of the same rows (a
 * message row and a reference row per message, pre-serialized) into the same tables with the same
 * statements (`unnest` of arrays), one transaction of 64 messages at a time on one connection —
 * the batch the store's group commit forms at best — on the same server settings (its
 * `synchronous_commit`, `on` unless changed). Target: >= 60% of the limit.
 *
 * PG_URL picks the server (default postgres://postgres@127.0.0.1:5432/test); the benchmark works
 * in a schema of its own and drops it. Without a server it says so and passes, measuring nothing.
 * STORE_BENCH_PG_MESSAGES sets the messages per run (default 12,800).
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';
import { ConnectionFactory, JmsEngine, Queue, TextMessage } from '../src/index.js';
import { serializeMessage } from '../src/store/message-serializer.js';
import { PostgresStore } from '../src/store/postgres-store.js';
import { type BenchRow, measure, printJson, printTable, target } from './lib.js';

const URL_ = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BODY = 'x'.repeat(1024);
const PRODUCERS = 64;
const TOTAL = Math.max(PRODUCERS, Number(process.env.STORE_BENCH_PG_MESSAGES ?? 12_800));
let runs = 0;
const prefix = `bench_${randomBytes(3).toString('hex')}`;
const schemas: string[] = [];

function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
    socket.setTimeout(2000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function freshSchema(): string {
  const schema = `${prefix}_${++runs}`;
  schemas.push(schema);
  return schema;
}

async function jmsSends(): Promise<{ transactions: number }> {
  const schema = freshSchema();
  const store = await PostgresStore.open({ url: URL_, schema });
  const engine = await JmsEngine.open({ store });
  const connection = new ConnectionFactory(engine).createConnection();
  const queue = await engine.createQueue('bench');
  const before = store.stats.transactions;
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      const producer = connection.createSession().createProducer(queue);
      for (let i = 0; i < TOTAL / PRODUCERS; i++) await producer.send(new TextMessage(BODY));
    }),
  );
  const transactions = store.stats.transactions - before;
  const held = engine.destinationStatistics(queue).messagesCurrent;
  if (held !== TOTAL) throw new Error(`expected ${TOTAL} messages on the queue, found ${held}`);
  await connection.close();
  await engine.close();
  await admin(`DROP SCHEMA "${schema}" CASCADE`);
  return { transactions };
}

/** The limit: the same rows, pre-serialized, in transactions of PRODUCERS messages, one at a time. */
async function rawInserts(): Promise<void> {
  const schema = freshSchema();
  await (await PostgresStore.open({ url: URL_, schema })).close();
  const client = new pg.Client({ connectionString: URL_ });
  await client.connect();
  const message = new TextMessage(BODY);
  message.setJMSDestination(new Queue('bench'));
  message.setJMSTimestamp(Date.now());
  message.setJMSMessageID('ID:0123456789ab-0');
  const row = serializeMessage(message);
  const s = `"${schema}"`;
  for (let first = 1; first <= TOTAL; first += PRODUCERS) {
    const seqs = Array.from({ length: PRODUCERS }, (_, i) => first + i);
    const ids = seqs.map((seq) => `ID:0123456789ab-${seq.toString(36)}`);
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO ${s}.messages (seq, id, body_type, headers, properties, body_text, body_bytes)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[])
       ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, body_type = excluded.body_type, headers = excluded.headers,
         properties = excluded.properties, body_text = excluded.body_text, body_bytes = excluded.body_bytes`,
      [
        seqs,
        ids,
        seqs.map(() => row.bodyType),
        seqs.map(() => row.headers),
        seqs.map(() => row.properties),
        seqs.map(() => row.body as string),
        seqs.map(() => null),
      ],
    );
    await client.query(
      `INSERT INTO ${s}.refs (id, backlog, seq, delivery_count, not_before)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::integer[], $5::bigint[])
       ON CONFLICT (id, backlog) DO UPDATE SET seq = excluded.seq, delivery_count = excluded.delivery_count,
         not_before = excluded.not_before`,
      [ids, ids.map(() => 'queue://bench'), seqs, seqs.map(() => 0), seqs.map(() => 0)],
    );
    await client.query('COMMIT');
  }
  await client.end();
  await admin(`DROP SCHEMA "${schema}" CASCADE`);
}

try {
  if (!(await reachable(URL_))) {
    console.log(`no PostgreSQL at ${new URL(URL_).host}: the PostgreSQL store benchmark measured nothing`);
  } else {
    // One warm-up each, then subject and limit take turns: the shared machine changes from second to second.
    await jmsSends();
    await rawInserts();
    let jms: BenchRow | undefined;
    let raw: BenchRow | undefined;
    let transactions = 0;
    for (let round = 0; round < 3; round++) {
      let counted = 0;
      const a = await measure(`JMS API, ${PRODUCERS} producers`, TOTAL, async () => {
        counted = (await jmsSends()).transactions;
      });
      const b = await measure(`raw inserts, ${PRODUCERS} per transaction (limit)`, TOTAL, rawInserts);
      if (!jms || a.rate > jms.rate) [jms, transactions] = [a, counted];
      if (!raw || b.rate > raw.rate) raw = b;
    }
    const ratio = jms!.rate / raw!.rate;
    printTable('PostgreSQL store: persistent 1 KB sends to a queue, messages/s', [
      {
        ...jms!,
        'messages per transaction': Math.round((TOTAL / Math.max(1, transactions)) * 10) / 10,
        'vs limit': `${(ratio * 100).toFixed(1)}%`,
      },
      raw!,
    ]);
    printJson('store-postgres', { producers64: jms!.rate, producers64Raw: raw!.rate, ratio64: ratio });
    target(
      `64 producers >= 60% of raw inserts batched the same way (got ${(ratio * 100).toFixed(1)}%)`,
      ratio >= 0.6,
    );
  }
} finally {
  if (await reachable(URL_))
    for (const schema of schemas) await admin(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
