/**
 * The PostgreSQL store's tables and their versions. The store lives in one schema of its own
 * (default `jms_gateway`); its `meta` table names the owner and the schema version. At start the
 * store refuses a schema that holds tables that are not its own, or one of a newer version than
 * this gateway reads, and applies the migrations a schema of an older version needs, one
 * transaction each, under an advisory lock so two gateways starting together do not race.
 */
import type { ClientBase } from 'pg';

/** The schema version this code writes and reads. */
export const POSTGRES_SCHEMA_VERSION = 2;

/** The owner marker in `meta`: a schema without it is not ours. */
export const OWNER = 'jms-gateway';

/** Tables of the store: anything else in its schema makes the schema foreign. */
export const STORE_TABLES = [
  'meta',
  'messages',
  'refs',
  'destinations',
  'subscriptions',
  'forwarded_ids',
  'gateway_lease',
];

/** A schema name the store accepts: a plain identifier, so it can be quoted without surprises. */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(schema))
    throw new TypeError(
      `postgres store schema must be a plain identifier (letters, digits, _; at most 63): got ${JSON.stringify(schema)}`,
    );
  return schema;
}

/** `"schema"`, quoted for SQL. */
export function quoted(schema: string): string {
  return `"${schema.replace(/"/g, '""')}"`;
}

/** One step from version `to - 1` to `to`. */
interface Migration {
  to: number;
  statements(s: string): string[];
}

/**
 * Every migration, in order. Version 1 is the first layout. A later change appends a step here
 * and raises {@link POSTGRES_SCHEMA_VERSION}; steps already released never change.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    to: 1,
    statements: (s) => [
      `CREATE TABLE ${s}.meta (key text PRIMARY KEY, value text NOT NULL)`,
      // Bodies: text bodies in body_text, byte bodies (or text that is not well formed) in body_bytes.
      `CREATE TABLE ${s}.messages (
         seq bigint PRIMARY KEY,
         id text NOT NULL UNIQUE,
         body_type text NOT NULL,
         headers text NOT NULL,
         properties text,
         body_text text,
         body_bytes bytea
       )`,
      `CREATE TABLE ${s}.refs (
         id text NOT NULL,
         backlog text NOT NULL,
         seq bigint NOT NULL,
         delivery_count integer NOT NULL,
         not_before bigint NOT NULL,
         PRIMARY KEY (id, backlog)
       )`,
      `CREATE INDEX refs_by_backlog ON ${s}.refs (backlog)`,
      `CREATE TABLE ${s}.destinations (
         pos bigserial,
         kind text NOT NULL,
         name text NOT NULL,
         options text NOT NULL,
         PRIMARY KEY (kind, name)
       )`,
      `CREATE TABLE ${s}.subscriptions (
         pos bigserial,
         key text PRIMARY KEY,
         topic text NOT NULL,
         client_id text,
         name text NOT NULL,
         selector text,
         no_local boolean NOT NULL,
         shared boolean NOT NULL
       )`,
      `CREATE TABLE ${s}.forwarded_ids (
         "window" text NOT NULL,
         id text NOT NULL,
         seq bigint NOT NULL,
         at bigint NOT NULL,
         PRIMARY KEY ("window", id)
       )`,
      `CREATE INDEX forwarded_ids_by_seq ON ${s}.forwarded_ids ("window", seq)`,
    ],
  },
  {
    // Active/standby high availability: the lease of each group of gateways (postgres-lease.ts).
    to: 2,
    statements: (s) => [leaseTableDdl(s)],
  },
];

/** The lease table, in the schema quoted as `s`. */
export function leaseTableDdl(s: string): string {
  return `CREATE TABLE IF NOT EXISTS ${s}.gateway_lease (
    name text PRIMARY KEY,
    holder text,
    epoch bigint NOT NULL,
    expires_at bigint NOT NULL
  )`;
}

/** Why a schema cannot be used; the store turns it into its error. */
export class SchemaRefusal extends Error {
  constructor(
    readonly reason: 'foreign' | 'newer' | 'missing' | 'older',
    message: string,
  ) {
    super(message);
  }
}

/** What {@link prepareSchema} did. */
export interface SchemaOutcome {
  /** The version found before (0: the schema was empty or missing). */
  from: number;
  /** The version now. */
  to: number;
}

/**
 * Checks the store's schema and, with `migrate`, creates it or brings it to the current version.
 * Without `migrate`, a schema that is missing or older is refused (run `jms-gateway store
 * migrate`). Runs in one transaction under an advisory lock on the schema's name.
 */
export async function prepareSchema(
  client: ClientBase,
  schema: string,
  migrate: boolean,
): Promise<SchemaOutcome> {
  const s = quoted(schema);
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`jms-gateway store ${schema}`]);
    const from = await currentVersion(client, schema);
    if (from > POSTGRES_SCHEMA_VERSION)
      throw new SchemaRefusal(
        'newer',
        `schema '${schema}' has store version ${from}, newer than this gateway reads (${POSTGRES_SCHEMA_VERSION}): run a newer gateway or restore a backup made by this version`,
      );
    if (from < POSTGRES_SCHEMA_VERSION && !migrate)
      throw new SchemaRefusal(
        from === 0 ? 'missing' : 'older',
        from === 0
          ? `schema '${schema}' holds no store and store.migrate is false: run 'jms-gateway store migrate' first`
          : `schema '${schema}' has store version ${from}, older than this gateway's (${POSTGRES_SCHEMA_VERSION}), and store.migrate is false: run 'jms-gateway store migrate' first`,
      );
    if (from < POSTGRES_SCHEMA_VERSION) {
      // Only when missing: a schema made beforehand for a role without CREATE on the database is used as is.
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${s}`);
      for (const migration of MIGRATIONS) {
        if (migration.to <= from) continue;
        for (const statement of migration.statements(s)) await client.query(statement);
      }
      if (from === 0)
        await client.query(`INSERT INTO ${s}.meta (key, value) VALUES ('application', $1), ('created', $2)`, [
          OWNER,
          new Date().toISOString(),
        ]);
      await client.query(
        `INSERT INTO ${s}.meta (key, value) VALUES ('schema', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [String(POSTGRES_SCHEMA_VERSION)],
      );
    }
    await client.query('COMMIT');
    return { from, to: POSTGRES_SCHEMA_VERSION };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The store version of `schema`: 0 when it is missing or empty; refuses one that is not ours. */
async function currentVersion(client: ClientBase, schema: string): Promise<number> {
  const tables = (
    await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
      [schema],
    )
  ).rows.map((row) => row.name);
  if (tables.length === 0) return 0;
  const foreign = tables.filter((name) => !STORE_TABLES.includes(name));
  const meta = tables.includes('meta')
    ? new Map(
        (
          await client.query<{ key: string; value: string }>(`SELECT key, value FROM ${quoted(schema)}.meta`)
        ).rows.map((row) => [row.key, row.value]),
      )
    : new Map<string, string>();
  if (meta.get('application') !== OWNER || foreign.length > 0)
    throw new SchemaRefusal(
      'foreign',
      `schema '${schema}' is not a jms-gateway store (it holds ${foreign.length > 0 ? `tables ${foreign.slice(0, 5).join(', ')}` : 'no jms-gateway marker'}): give the store a schema of its own (store.schema)`,
    );
  const version = Number(meta.get('schema'));
  if (!Number.isInteger(version) || version < 1)
    throw new SchemaRefusal(
      'foreign',
      `schema '${schema}' has no readable store version: give the store a schema of its own (store.schema)`,
    );
  return version;
}
