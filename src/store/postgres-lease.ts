/**
 * The active/standby lease in PostgreSQL: one row per gateway name in `<schema>.gateway_lease`,
 * with the holder's instance id, the fencing epoch and the grant's expiry.
 *
 * Times are the instances' own clocks (the injected {@link Clock}), passed as values, so tests
 * drive expiry without waiting; instances must keep their clocks in step (NTP), as with any lease.
 * A clock that runs ahead only makes a standby take over early: safety never rests on the clocks,
 * it rests on the epoch, which every write checks inside its own transaction ({@link fence}).
 *
 * The lease has its own connection, apart from the store's: a store busy with a large commit never
 * delays a renewal. A connection that failed is replaced at the next call.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { type Clock, systemClock } from '../jms/clock.js';
import type { Lease, LeaseHolder, WriteFence } from './lease.js';
import { checkSchemaName, leaseTableDdl, quoted } from './postgres-schema.js';

export interface PostgresLeaseOptions {
  /** A connection string (a secret: it is never logged). */
  readonly url: string;
  /** The schema the store uses: the lease table lives beside the store's tables. */
  readonly schema: string;
  /** Instances with the same name share one lease; default `default`. */
  readonly name?: string;
  /** How long a grant lasts unless renewed. */
  readonly ttlMs: number;
  /**
   * How long a claim waits for a write in progress to finish (it holds the lease row) before
   * giving up for this round. Default 1,000 ms.
   */
  readonly lockTimeoutMs?: number;
  readonly clock?: Clock;
  /** Default: host name, process id and a random part. */
  readonly instanceId?: string;
}

export function defaultInstanceId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

export class PostgresLease implements Lease {
  readonly instanceId: string;
  readonly #url: string;
  readonly #schema: string;
  readonly #table: string;
  readonly #name: string;
  readonly #ttlMs: number;
  readonly #lockTimeoutMs: number;
  readonly #clock: Clock;
  #client: Promise<pg.Client> | undefined;
  /** Calls run one at a time on the one connection. */
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;

  constructor(options: PostgresLeaseOptions) {
    this.#url = options.url;
    this.#schema = options.schema;
    this.#table = `${quoted(checkSchemaName(options.schema))}.gateway_lease`;
    this.#name = options.name ?? 'default';
    this.#ttlMs = options.ttlMs;
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 1_000;
    this.#clock = options.clock ?? systemClock;
    this.instanceId = options.instanceId ?? defaultInstanceId();
  }

  /** Creates the lease table if it is missing (the store's migrations create it; for tests). */
  async ensureTable(): Promise<void> {
    await this.#query(leaseTableDdl(quoted(this.#schema)), []);
  }

  async tryAcquire(): Promise<number | undefined> {
    const now = this.#clock.now();
    // One statement: the row lock makes two claims at once take turns, and the second finds the
    // first's fresh grant and changes nothing.
    const rows = await this.#query<{ epoch: string }>(
      `INSERT INTO ${this.#table} AS lease (name, holder, epoch, expires_at) VALUES ($1, $2, 1, $3)
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, epoch = lease.epoch + 1,
         expires_at = EXCLUDED.expires_at
       WHERE lease.holder IS NULL OR lease.expires_at <= $4
       RETURNING epoch`,
      [this.#name, this.instanceId, now + this.#ttlMs, now],
      true,
    );
    return rows[0] === undefined ? undefined : Number(rows[0].epoch);
  }

  async renew(epoch: number): Promise<boolean> {
    // A grant that ran out but that nobody took is still this instance's: the epoch did not move,
    // so nobody else wrote in between.
    const rows = await this.#query(
      `UPDATE ${this.#table} SET expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3 RETURNING epoch`,
      [this.#name, this.instanceId, epoch, this.#clock.now() + this.#ttlMs],
    );
    return rows.length === 1;
  }

  async release(epoch: number): Promise<void> {
    await this.#query(
      `UPDATE ${this.#table} SET holder = NULL, expires_at = $4 WHERE name = $1 AND holder = $2 AND epoch = $3`,
      [this.#name, this.instanceId, epoch, this.#clock.now()],
    );
  }

  async read(): Promise<LeaseHolder | undefined> {
    const rows = await this.#query<{ holder: string | null; epoch: string; expires_at: string }>(
      `SELECT holder, epoch, expires_at FROM ${this.#table} WHERE name = $1`,
      [this.#name],
    );
    const row = rows[0];
    if (row === undefined) return undefined;
    return { holder: row.holder ?? undefined, epoch: Number(row.epoch), expiresAt: Number(row.expires_at) };
  }

  /**
   * The check a store runs first in each write transaction of this instance's grant of `epoch`.
   * `FOR SHARE` holds the row until the transaction ends, so a takeover (an update of the row)
   * waits for the write to commit or roll back, and the new active's recovery sees all of it.
   */
  fence(epoch: number): WriteFence {
    const text = `SELECT 1 FROM ${this.#table} WHERE name = $1 AND holder = $2 AND epoch = $3 AND expires_at > $4 FOR SHARE`;
    return {
      statement: () => ({ text, values: [this.#name, this.instanceId, epoch, this.#clock.now()] }),
      describe: () =>
        `this gateway (${this.instanceId}) no longer holds the active lease of epoch ${epoch}: another instance took over, or the grant ran out before it was renewed`,
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await this.#queue.catch(() => undefined);
    if (client !== undefined) await (await client.catch(() => undefined))?.end().catch(() => undefined);
  }

  #query<R extends object = object>(text: string, values: readonly unknown[], claim = false): Promise<R[]> {
    const run = async (): Promise<R[]> => {
      if (this.#closed) throw new Error('the lease was closed');
      const client = await this.#connected();
      try {
        if (!claim) return (await client.query<R>(text, values as unknown[])).rows;
        // A claim must not hang behind a paused holder's open transaction: that one is ended by
        // the server's idle-in-transaction timeout, and the claim tries again next round.
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = ${Math.max(1, Math.round(this.#lockTimeoutMs))}`);
        const result = await client.query<R>(text, values as unknown[]);
        await client.query('COMMIT');
        return result.rows;
      } catch (error) {
        if (claim) await client.query('ROLLBACK').catch(() => undefined);
        if (isLockTimeout(error)) return [];
        this.#drop(client);
        throw error;
      }
    };
    const result = this.#queue.then(run, run);
    this.#queue = result.catch(() => undefined);
    return result;
  }

  #connected(): Promise<pg.Client> {
    if (this.#client === undefined) {
      const client = new pg.Client({
        connectionString: this.#url,
        application_name: 'jms-gateway-lease',
        // A call that hangs (the server gone without a reset) must not outlive the grant.
        connectionTimeoutMillis: this.#ttlMs,
        query_timeout: this.#ttlMs,
      });
      // An error on an idle connection (the server restarted) is reported by the next query.
      client.on('error', () => this.#drop(client));
      const connecting = client.connect().then(() => client);
      connecting.catch(() => {
        if (this.#client === connecting) this.#client = undefined;
      });
      this.#client = connecting;
    }
    return this.#client;
  }

  #drop(client: pg.Client): void {
    void this.#client?.then(
      (current) => {
        if (current !== client) return;
        this.#client = undefined;
        void client.end().catch(() => undefined);
      },
      () => undefined,
    );
  }
}

function isLockTimeout(error: unknown): boolean {
  return (error as { code?: unknown }).code === '55P03';
}
