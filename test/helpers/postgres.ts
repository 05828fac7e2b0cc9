/**
 * The PostgreSQL that integration tests of the PostgreSQL store run against: `PG_URL`, else one on
 * the loopback default port (trust auth, database `test`). Missing, the tests are skipped, or fail
 * with `REQUIRE_BROKERS=1`. Each test works in a schema of its own, dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import pg from 'pg';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 5432) });
    socket.setTimeout(2000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/** Undefined when PostgreSQL is here; else why the tests are skipped. Throws with REQUIRE_BROKERS=1. */
export async function postgresSkip(): Promise<string | undefined> {
  if (await answers(PG_URL)) return undefined;
  const why = `no PostgreSQL at ${new URL(PG_URL).host}: set PG_URL or start PostgreSQL`;
  if (process.env.REQUIRE_BROKERS === '1') throw new Error(why);
  return why;
}

/** A schema name no other test uses. */
export function uniqueSchema(prefix = 'test'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Runs `sql` as the test's superuser, on a connection of its own. */
export async function adminQuery(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}

/** Ends the server side of every connection named `applicationName`, as a lost connection would. */
export async function endConnectionsNamed(applicationName: string): Promise<void> {
  await adminQuery('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [
    applicationName,
  ]);
}
