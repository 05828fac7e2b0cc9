/**
 * The PostgreSQL the store and lease tests run against: `PG_URL`, else the loopback default
 * (`postgres://postgres@127.0.0.1:5432/test`, trust auth). Missing, the tests are skipped with the
 * fix, or fail with `REQUIRE_BROKERS=1` (CI). Each test takes a schema of its own and drops it.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** undefined when PostgreSQL answers; else the skip reason (or a thrown error under REQUIRE_BROKERS). */
export async function postgresSkip(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    const reason = `no PostgreSQL at PG_URL or 127.0.0.1:5432 (${(error as Error).message}); start it or set PG_URL`;
    if (process.env.REQUIRE_BROKERS === '1') throw new Error(reason);
    return reason;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema; `drop` removes it with everything in it. */
export async function freshSchema(prefix: string): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  await sql(`CREATE SCHEMA "${schema}"`);
  return { schema, drop: () => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).then(() => undefined) };
}

/** Runs one statement on a short-lived connection. */
export async function sql<R extends object = object>(text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
