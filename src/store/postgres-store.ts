/**
 * The PostgreSQL store: durable state in tables of one schema of a PostgreSQL database, with the
 * guarantees of the file store. A commit resolves only once the transaction that holds it has
 * committed (PostgreSQL's own durability: `synchronous_commit` as the server has it, `on` by
 * default); a commit that fails rejects, and nothing of it stays applied.
 *
 * Group commit: one transaction is written at a time. Commits made in the same tick, and those that
 * arrive while a transaction is written, are queued and all go into the next transaction, whose
 * operations are written with array parameters (`unnest`) so that one statement inserts or
 * deletes the rows of many commits. If a group's
 * transaction fails, each of its commits is tried again in a transaction of its own, so a bad
 * commit fails alone and the others are stored.
 *
 * The synchronous parts of the port (paging bodies back, recovery's references, duplicate windows)
 * go through {@link PostgresSyncReader}, a second connection in a worker thread.
 *
 * Ready for a lease: every group is one transaction through {@link PostgresStore.#writeGroup}, so a
 * fencing check (a lease epoch compared in the same transaction) has one place to go.
 */
import pg from 'pg';
import type {
  BacklogKey,
  DestinationRecord,
  ForwardedId,
  ForwardedIdStore,
  MessageStore,
  RecoveredRef,
  RecoveredState,
  SenderRecord,
  StoreOperation,
  SubscriptionRecord,
} from '../jms/store-port.js';
import type { Message } from '../jms/message/message.js';
import type { Queue, Topic } from '../jms/destination/destination.js';
import { type EngineLogger, silentLogger } from '../jms/logger.js';
import {
  type EncodedOperation,
  type SerializedMessage,
  deserializeStoredMessage,
  encodeOperation,
} from './message-serializer.js';
import { StoreError } from './store-error.js';
import type { CommitStats } from './commit-stats.js';
import { PostgresSyncReader, SyncQueryError } from './postgres-sync-reader.js';
import { SchemaRefusal, checkSchemaName, prepareSchema, quoted } from './postgres-schema.js';
import { FencedError, type WriteFence } from './lease.js';
import { checkPostgresUrl, redactUrl, scrubSecrets } from './postgres-url.js';

/** How a PostgreSQL store is opened. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`: a secret, never logged or shown. */
  url: string;
  /** The schema that holds the store's tables. Default `jms_gateway`. */
  schema?: string;
  /** Create the schema or apply pending migrations at open. Default true. */
  migrate?: boolean;
  /** Connection attempts at open before giving up, with a doubling pause between them. Default 1. */
  connectAttempts?: number;
  /** The first pause between connection attempts, ms. Default 500 (doubling, at most 10 s). */
  connectBackoffMs?: number;
  /**
   * How long to wait at open for another gateway's hold on the schema to end, ms (default 5000):
   * one gateway per store, as with the file store. A killed gateway's hold ends when the server
   * sees its connection close.
   */
  lockTimeoutMs?: number;
  /** Rows read per round trip while recovering. Default 500. */
  recoveryBatch?: number;
  logger?: EngineLogger;
  /**
   * Active/standby high availability: every write transaction begins with this check of the
   * instance's lease (see `postgres-lease.ts`) and fails with kind `fenced` when the lease is
   * another instance's. The lease then is what makes one writer, not the schema's advisory lock,
   * which a paused former active would hold on to.
   */
  fence?: WriteFence;
  /** Waits between connection attempts (tests pass one that does not wait). */
  sleep?: (ms: number) => Promise<void>;
}

interface PendingCommit {
  operations: EncodedOperation[];
  resolve(): void;
  reject(error: unknown): void;
}

export const DEFAULT_SCHEMA = 'jms_gateway';

export class PostgresStore implements MessageStore, ForwardedIdStore {
  /** Where the store is, for messages: the URL without its password, and the schema. */
  readonly location: string;
  readonly #url: string;
  readonly #s: string;
  readonly #schema: string;
  readonly #logger: EngineLogger;
  readonly #reader: PostgresSyncReader;
  readonly #recoveryBatch: number;
  readonly #fence: WriteFence | undefined;
  #writer: pg.Client | undefined;
  #pending: PendingCommit[] = [];
  #writing = false;
  #drained: (() => void)[] = [];
  #closed = false;
  readonly #stats: CommitStats = { commits: 0, transactions: 0, failures: 0 };
  readonly #handles = new Map<string, Queue | Topic>();

  private constructor(url: string, schema: string, writer: pg.Client, options: PostgresStoreOptions) {
    this.#url = url;
    this.#s = quoted(schema);
    this.#schema = schema;
    this.location = `${redactUrl(url)} schema ${schema}`;
    this.#writer = writer;
    writer.on('error', () => this.#dropWriter(writer));
    this.#logger = options.logger ?? silentLogger;
    this.#recoveryBatch = Math.max(1, Math.floor(options.recoveryBatch ?? 500));
    this.#fence = options.fence;
    this.#reader = new PostgresSyncReader(url, `jms-gateway store reader ${schema}`);
  }

  /**
   * Connects, checks the schema (refusing a foreign or newer one) and migrates it if allowed.
   * Failures are {@link StoreError}s whose messages never hold the password.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const url = checkPostgresUrl(options.url);
    const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    const logger = options.logger ?? silentLogger;
    const location = `${redactUrl(url)} schema ${schema}`;
    const client = await connectWithRetry(url, location, options, logger);
    try {
      const outcome = await prepareSchema(client, schema, options.migrate ?? true);
      if (outcome.from !== outcome.to)
        logger.info({ store: location, from: outcome.from, to: outcome.to }, 'store schema migrated');
    } catch (error) {
      await client.end().catch(() => undefined);
      if (error instanceof SchemaRefusal)
        throw new StoreError('incompatible', location, `store ${location}: ${error.message}`);
      throw postgresError('open', url, location, error, 'could not prepare its schema');
    }
    try {
      if (options.fence === undefined)
        await takeOwnership(client, schema, location, options.lockTimeoutMs ?? 5000, options.sleep);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error instanceof StoreError
        ? error
        : postgresError('open', url, location, error, 'could not be locked');
    }
    const store = new PostgresStore(url, schema, client, options);
    logger.info({ store: location }, 'store opened');
    return store;
  }

  /**
   * Brings the schema to the current version (creating it if missing) without opening the store:
   * `jms-gateway store migrate`. Refuses a foreign or newer schema as `open` does.
   */
  static async migrate(
    options: PostgresStoreOptions,
  ): Promise<{ location: string; from: number; to: number }> {
    const url = checkPostgresUrl(options.url);
    const schema = checkSchemaName(options.schema ?? DEFAULT_SCHEMA);
    const location = `${redactUrl(url)} schema ${schema}`;
    const client = await connectWithRetry(url, location, options, options.logger ?? silentLogger);
    try {
      return { location, ...(await prepareSchema(client, schema, true)) };
    } catch (error) {
      if (error instanceof SchemaRefusal)
        throw new StoreError('incompatible', location, `store ${location}: ${error.message}`);
      throw postgresError('open', url, location, error, 'could not be migrated');
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  get stats(): Readonly<CommitStats> {
    return { ...this.#stats };
  }

  async recover(): Promise<RecoveredState> {
    if (this.#closed) throw this.#closedError();
    const s = this.#s;
    try {
      const client = await this.#client();
      const destinations = (
        await client.query<{ kind: 'queue' | 'topic'; name: string; options: string }>(
          `SELECT kind, name, options FROM ${s}.destinations ORDER BY pos`,
        )
      ).rows.map(({ kind, name, options }): DestinationRecord => ({
        kind,
        name,
        options: this.#parseRecord(options, `destination '${kind}://${name}'`) as Record<string, unknown>,
      }));
      const subscriptions = (
        await client.query<{
          key: string;
          topic: string;
          client_id: string | null;
          name: string;
          selector: string | null;
          no_local: boolean;
          shared: boolean;
        }>(
          `SELECT key, topic, client_id, name, selector, no_local, shared FROM ${s}.subscriptions ORDER BY pos`,
        )
      ).rows.map((row): SubscriptionRecord => ({
        key: row.key,
        topic: row.topic,
        clientId: row.client_id,
        name: row.name,
        selector: row.selector,
        noLocal: row.no_local,
        shared: row.shared,
      }));
      const max = await client.query<{ max: string | null }>(
        `SELECT max(seq)::text AS max FROM ${s}.messages`,
      );
      const maxSeq = Number(max.rows[0]?.max ?? 0);
      this.#logger.info(
        { store: this.location, destinations: destinations.length, subscriptions: subscriptions.length },
        'store read',
      );
      return { destinations, subscriptions, refs: this.#readRefs(), maxSeq };
    } catch (error) {
      throw error instanceof StoreError
        ? error
        : postgresError('open', this.#url, this.location, error, 'could not be read');
    }
  }

  /**
   * The references with their messages, read a batch at a time through a cursor as the engine
   * takes them, so a restart never holds the whole backlog's bodies at once (PER-4).
   */
  *#readRefs(): Generator<RecoveredRef> {
    const s = this.#s;
    const reader = this.#reader;
    const run = (sql: string, params?: unknown[]) => this.#readSync(() => reader.query(sql, params));
    run('BEGIN READ ONLY');
    let open = true;
    try {
      run(
        `DECLARE recovered_refs NO SCROLL CURSOR FOR
         SELECT r.backlog, r.id, r.delivery_count, r.not_before::text, m.seq::text, m.body_type, m.headers,
                m.properties, m.body_text, m.body_bytes
         FROM ${s}.messages m JOIN ${s}.refs r ON r.id = m.id ORDER BY m.seq`,
      );
      let lastSeq = -1;
      let message: Message | undefined;
      let sender: SenderRecord | undefined;
      for (;;) {
        const rows = run(`FETCH ${this.#recoveryBatch} FROM recovered_refs`);
        if (rows.length === 0) break;
        for (const row of rows) {
          const [
            backlog,
            id,
            deliveryCount,
            notBefore,
            seqText,
            bodyType,
            headers,
            properties,
            bodyText,
            bodyBytes,
          ] = row as [
            string,
            string,
            number,
            string,
            string,
            string,
            string,
            string | null,
            string | null,
            unknown,
          ];
          const seq = Number(seqText);
          if (seq !== lastSeq || !message) {
            ({ message, sender } = this.#decode(
              id,
              toSerialized(bodyType, headers, properties, bodyText, bodyBytes),
            ));
            lastSeq = seq;
          }
          const ref: RecoveredRef = {
            backlog,
            id,
            seq,
            deliveryCount,
            notBefore: Number(notBefore),
            message,
          };
          if (sender) ref.sender = sender;
          yield ref;
        }
      }
      run('CLOSE recovered_refs');
      run('COMMIT');
      open = false;
    } finally {
      if (open) {
        try {
          reader.query('ROLLBACK');
        } catch {
          // The reader's connection is gone; its transaction went with it.
        }
      }
    }
  }

  /** Reads one stored message back, synchronously (PER-4). Undefined when no such message is stored. */
  readMessage(id: string): Message | undefined {
    if (this.#closed) throw this.#closedError();
    const rows = this.#readSync(() =>
      this.#reader.query(
        `SELECT body_type, headers, properties, body_text, body_bytes FROM ${this.#s}.messages WHERE id = $1`,
        [id],
      ),
    );
    const row = rows[0] as [string, string, string | null, string | null, unknown] | undefined;
    if (!row) return undefined;
    return this.#decode(id, toSerialized(...row)).message;
  }

  /** The ids of a bridge's duplicate window, oldest first, as committed (BRG-2). */
  readForwardedIds(window: string): ForwardedId[] {
    if (this.#closed) throw this.#closedError();
    const rows = this.#readSync(() =>
      this.#reader.query(
        `SELECT id, seq::text, at::text FROM ${this.#s}.forwarded_ids WHERE "window" = $1 ORDER BY seq`,
        [window],
      ),
    );
    return (rows as [string, string, string][]).map(([id, seq, at]) => ({
      id,
      seq: Number(seq),
      at: Number(at),
    }));
  }

  recordForwardedIds(window: string, ids: readonly ForwardedId[], forgetThroughSeq?: number): Promise<void> {
    return this.commit([
      { op: 'recordForwarded', window, ids, ...(forgetThroughSeq === undefined ? {} : { forgetThroughSeq }) },
    ]);
  }

  /**
   * Queues the operations for the next group; resolves once the transaction that holds them has
   * committed, rejects with a {@link StoreError} when it did not (nothing of them is then stored).
   */
  commit(operations: readonly StoreOperation[]): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    this.#stats.commits++;
    let encoded: EncodedOperation[];
    try {
      encoded = operations.map(encodeOperation);
    } catch (error) {
      this.#stats.failures++;
      return Promise.reject(
        new StoreError(
          'write',
          this.location,
          `store ${this.location} could not encode a message: ${(error as Error).message}`,
          {
            cause: error,
          },
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ operations: encoded, resolve, reject });
      // Started on the next turn of the event loop, so commits made in the same tick share the
      // first transaction too (while one is written, the loop picks up what arrived meanwhile).
      if (!this.#writing) {
        this.#writing = true;
        setImmediate(() => void this.#writeLoop());
      }
    });
  }

  /** Writes queued commits, a group per transaction, until none are left. */
  async #writeLoop(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#pending.length > 0) {
        const group = this.#pending;
        this.#pending = [];
        await this.#writeGroup(group);
      }
    } finally {
      this.#writing = false;
      for (const done of this.#drained.splice(0)) done();
    }
  }

  async #writeGroup(group: PendingCommit[]): Promise<void> {
    try {
      await this.#transaction(group.flatMap((pending) => pending.operations));
      this.#stats.transactions++;
      for (const pending of group) pending.resolve();
      return;
    } catch (error) {
      if (group.length === 1) {
        this.#fail(group, error);
        return;
      }
    }
    // One commit may have spoiled the group: each on its own now, so only a bad one fails.
    for (const pending of group) {
      try {
        await this.#transaction(pending.operations);
        this.#stats.transactions++;
        pending.resolve();
      } catch (error) {
        this.#fail([pending], error);
      }
    }
  }

  #fail(commits: readonly PendingCommit[], cause: unknown): void {
    const error = postgresError(
      'write',
      this.#url,
      this.location,
      cause,
      'could not write; nothing of this commit was stored',
    );
    this.#logger.error(
      { store: this.location, commits: commits.length, code: error.sqliteCode, err: error.message },
      'store write failed',
    );
    for (const pending of commits) {
      this.#stats.failures++;
      pending.reject(error);
    }
  }

  /** One transaction holding `operations`, in their order, with as few statements as that allows. */
  async #transaction(operations: readonly EncodedOperation[]): Promise<void> {
    const client = await this.#client();
    try {
      await client.query('BEGIN');
      if (this.#fence !== undefined) await this.#checkFence(client, this.#fence);
      for (const segment of segmentsOf(operations)) await this.#applySegment(client, segment);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => this.#dropWriter(client));
      throw error;
    }
  }

  /** The lease check that opens a write transaction: refused, nothing of it is written. */
  async #checkFence(client: pg.Client, fence: WriteFence): Promise<void> {
    const { text, values } = fence.statement();
    const result = await client.query(text, [...values]);
    if (result.rowCount !== 1) throw new FencedError(fence.describe());
  }

  async #applySegment(client: pg.Client, segment: Segment): Promise<void> {
    const s = this.#s;
    const released = new Set<string>();
    if (segment.messages.length > 0) {
      const m = segment.messages;
      await client.query(
        `INSERT INTO ${s}.messages (seq, id, body_type, headers, properties, body_text, body_bytes)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bytea[])
         ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, body_type = excluded.body_type, headers = excluded.headers,
           properties = excluded.properties, body_text = excluded.body_text, body_bytes = excluded.body_bytes`,
        [
          m.map((o) => o.seq),
          m.map((o) => o.id),
          m.map((o) => o.row.bodyType),
          m.map((o) => o.row.headers),
          m.map((o) => o.row.properties),
          m.map((o) => (typeof o.row.body === 'string' ? o.row.body : null)),
          m.map((o) => (Buffer.isBuffer(o.row.body) ? o.row.body : null)),
        ],
      );
    }
    if (segment.addRefs.length > 0) {
      const r = segment.addRefs;
      await client.query(
        `INSERT INTO ${s}.refs (id, backlog, seq, delivery_count, not_before)
         SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::integer[], $5::bigint[])
         ON CONFLICT (id, backlog) DO UPDATE SET seq = excluded.seq, delivery_count = excluded.delivery_count,
           not_before = excluded.not_before`,
        [
          r.map((o) => o.id),
          r.map((o) => o.backlog),
          r.map((o) => o.seq),
          r.map((o) => o.deliveryCount),
          r.map((o) => o.notBefore),
        ],
      );
    }
    if (segment.updateRefs.length > 0) {
      const u = segment.updateRefs;
      await client.query(
        `UPDATE ${s}.refs r SET delivery_count = u.delivery_count, not_before = u.not_before
         FROM unnest($1::text[], $2::text[], $3::integer[], $4::bigint[]) AS u(id, backlog, delivery_count, not_before)
         WHERE r.id = u.id AND r.backlog = u.backlog`,
        [
          u.map((o) => o.id),
          u.map((o) => o.backlog),
          u.map((o) => o.deliveryCount),
          u.map((o) => o.notBefore),
        ],
      );
    }
    if (segment.removeRefs.length > 0) {
      const d = segment.removeRefs;
      const removed = await client.query<{ id: string }>(
        `DELETE FROM ${s}.refs r USING unnest($1::text[], $2::text[]) AS u(id, backlog)
         WHERE r.id = u.id AND r.backlog = u.backlog RETURNING r.id`,
        [d.map((o) => o.id), d.map((o) => o.backlog)],
      );
      for (const { id } of removed.rows) released.add(id);
    }
    for (const operation of segment.ordered) {
      switch (operation.op) {
        case 'putDestination': {
          const { kind, name, options } = operation.destination;
          await client.query(
            `INSERT INTO ${s}.destinations (kind, name, options) VALUES ($1, $2, $3)
             ON CONFLICT (kind, name) DO UPDATE SET options = excluded.options`,
            [kind, name, JSON.stringify(options)],
          );
          break;
        }
        case 'removeDestination':
          await client.query(`DELETE FROM ${s}.destinations WHERE kind = $1 AND name = $2`, [
            operation.kind,
            operation.name,
          ]);
          await this.#dropBacklog(client, `${operation.kind}://${operation.name}`, released);
          break;
        case 'putSubscription': {
          const x = operation.subscription;
          await client.query(
            `INSERT INTO ${s}.subscriptions (key, topic, client_id, name, selector, no_local, shared)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (key) DO UPDATE SET topic = excluded.topic, client_id = excluded.client_id, name = excluded.name,
               selector = excluded.selector, no_local = excluded.no_local, shared = excluded.shared`,
            [x.key, x.topic, x.clientId, x.name, x.selector, x.noLocal, x.shared],
          );
          break;
        }
        case 'removeSubscription':
          await client.query(`DELETE FROM ${s}.subscriptions WHERE key = $1`, [operation.key]);
          await this.#dropBacklog(client, operation.key, released);
          break;
        case 'recordForwarded': {
          // The last of an id recorded twice in one call wins, as one row per id must.
          const byId = new Map(operation.ids.map((entry) => [entry.id, entry]));
          const ids = [...byId.values()];
          if (ids.length > 0)
            await client.query(
              `INSERT INTO ${s}.forwarded_ids ("window", id, seq, at)
               SELECT $1, * FROM unnest($2::text[], $3::bigint[], $4::bigint[])
               ON CONFLICT ("window", id) DO UPDATE SET seq = excluded.seq, at = excluded.at`,
              [operation.window, ids.map((e) => e.id), ids.map((e) => e.seq), ids.map((e) => e.at)],
            );
          if (operation.forgetThroughSeq !== undefined)
            await client.query(`DELETE FROM ${s}.forwarded_ids WHERE "window" = $1 AND seq <= $2`, [
              operation.window,
              operation.forgetThroughSeq,
            ]);
          break;
        }
      }
    }
    if (released.size > 0)
      await client.query(
        `DELETE FROM ${s}.messages m WHERE m.id = ANY($1::text[]) AND NOT EXISTS (SELECT 1 FROM ${s}.refs r WHERE r.id = m.id)`,
        [[...released]],
      );
  }

  async #dropBacklog(client: pg.Client, backlog: BacklogKey, released: Set<string>): Promise<void> {
    const dropped = await client.query<{ id: string }>(
      `DELETE FROM ${this.#s}.refs WHERE backlog = $1 RETURNING id`,
      [backlog],
    );
    for (const { id } of dropped.rows) released.add(id);
  }

  /** The writing connection, made again if the last one was lost. */
  async #client(): Promise<pg.Client> {
    if (this.#writer) return this.#writer;
    const client = newClient(this.#url, `jms-gateway store ${this.#schema}`);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    client.on('error', () => this.#dropWriter(client));
    try {
      // The lock went with the lost connection: without it again, another gateway may own the
      // store now, and this one must not write.
      if (this.#fence === undefined) await takeOwnership(client, this.#schema, this.location, 0);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.#writer = client;
    return client;
  }

  #dropWriter(client: pg.Client): void {
    if (this.#writer === client) this.#writer = undefined;
    client.end().catch(() => undefined);
  }

  #readSync<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (error instanceof SyncQueryError)
        throw postgresError('write', this.#url, this.location, error, 'could not be read');
      throw error;
    }
  }

  #decode(id: string, row: SerializedMessage): { message: Message; sender: SenderRecord | undefined } {
    try {
      return deserializeStoredMessage(row, this.#handles);
    } catch (error) {
      throw new StoreError(
        'corrupt',
        this.location,
        `store ${this.location}: message '${id}' cannot be read (${(error as Error).message}): restore the schema from a backup`,
        { cause: error },
      );
    }
  }

  #parseRecord(text: string, what: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new StoreError(
        'corrupt',
        this.location,
        `store ${this.location}: ${what} cannot be read: ${(error as Error).message}`,
      );
    }
  }

  #closedError(): StoreError {
    return new StoreError('closed', this.location, `store ${this.location} is closed`);
  }

  /** Writes what is queued, then closes both connections. */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#writing || this.#pending.length > 0)
      await new Promise<void>((resolve) => this.#drained.push(resolve));
    this.#closed = true;
    await this.#reader.close();
    const writer = this.#writer;
    this.#writer = undefined;
    await writer?.end().catch(() => undefined);
    this.#logger.info({ store: this.location }, 'store closed');
  }
}

/**
 * Operations of a group, sorted into the statements that write them. Rows are written in this
 * order: messages, new references, updated references, removed references, then definitions and
 * duplicate windows one by one, then messages no reference holds any more are deleted. A group
 * whose order that would change (the same row touched again by an earlier step) is cut into
 * segments, each written in that order.
 */
interface Segment {
  messages: Extract<EncodedOperation, { op: 'addMessage' }>[];
  addRefs: Extract<EncodedOperation, { op: 'addRef' }>[];
  updateRefs: Extract<EncodedOperation, { op: 'updateRef' }>[];
  removeRefs: Extract<EncodedOperation, { op: 'removeRef' }>[];
  ordered: EncodedOperation[];
}

const ORDERED_STEP = 5;

function segmentsOf(operations: readonly EncodedOperation[]): Segment[] {
  const segments: Segment[] = [];
  let current: Segment | undefined;
  /** Per row touched in the current segment (`m:id`, `r:backlog id`): the latest step that touches it. */
  let touched = new Map<string, number>();
  /** Backlogs the current segment drops: a reference to one of them must come after the drop. */
  let dropped = new Set<string>();
  const start = (): Segment => {
    current = { messages: [], addRefs: [], updateRefs: [], removeRefs: [], ordered: [] };
    touched = new Map();
    dropped = new Set();
    segments.push(current);
    return current;
  };
  for (const operation of operations) {
    const { step, rows, backlog } = placeOf(operation);
    // Steps before the ordered one write one row per key in one statement: a row seen at this step
    // or a later one must wait for the next segment, and so must a reference to a dropped backlog.
    // Ordered operations run in their order anyway.
    const conflicts =
      (step < ORDERED_STEP && backlog !== undefined && dropped.has(backlog)) ||
      rows.some((key) => {
        const seen = touched.get(key);
        return seen !== undefined && (seen > step || (seen === step && step < ORDERED_STEP));
      });
    const segment = !current || conflicts ? start() : current;
    for (const key of rows) touched.set(key, Math.max(touched.get(key) ?? 0, step));
    if (step === ORDERED_STEP && backlog !== undefined) dropped.add(backlog);
    switch (operation.op) {
      case 'addMessage':
        segment.messages.push(operation);
        break;
      case 'addRef':
        segment.addRefs.push(operation);
        break;
      case 'updateRef':
        segment.updateRefs.push(operation);
        break;
      case 'removeRef':
        segment.removeRefs.push(operation);
        break;
      default:
        segment.ordered.push(operation);
    }
  }
  return segments;
}

/** The step an operation is written at, the rows it touches, and the backlog it refers to or drops. */
function placeOf(operation: EncodedOperation): { step: number; rows: string[]; backlog?: string } {
  switch (operation.op) {
    case 'addMessage':
      return { step: 1, rows: [`m:${operation.id}`] };
    case 'addRef':
      return { step: 2, rows: [`r:${operation.backlog}\n${operation.id}`], backlog: operation.backlog };
    case 'updateRef':
      return { step: 3, rows: [`r:${operation.backlog}\n${operation.id}`], backlog: operation.backlog };
    case 'removeRef':
      // Removing a reference may delete its message at the end: a later add of that id waits.
      return {
        step: 4,
        rows: [`r:${operation.backlog}\n${operation.id}`, `m:${operation.id}`],
        backlog: operation.backlog,
      };
    case 'removeDestination':
      return { step: ORDERED_STEP, rows: [], backlog: `${operation.kind}://${operation.name}` };
    case 'removeSubscription':
      return { step: ORDERED_STEP, rows: [], backlog: operation.key };
    default:
      return { step: ORDERED_STEP, rows: [] };
  }
}

function toSerialized(
  bodyType: string,
  headers: string,
  properties: string | null,
  bodyText: string | null,
  bodyBytes: unknown,
): SerializedMessage {
  let body: string | Buffer | null = bodyText;
  if (bodyBytes !== null && bodyBytes !== undefined) {
    // Through the worker the bytes arrive as a Uint8Array.
    const bytes = bodyBytes as Uint8Array;
    body = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return { bodyType, headers, properties, body } as SerializedMessage;
}

/**
 * Takes the schema's owner lock (a session advisory lock) on the writing connection, so two
 * gateways never write one store; waits up to `timeoutMs` for another holder to let go. Every
 * transaction runs on this connection, so while it lives the lock holds for each of them.
 */
async function takeOwnership(
  client: pg.Client,
  schema: string,
  location: string,
  timeoutMs: number,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtext($1)) AS locked',
      [`jms-gateway store owner ${schema}`],
    );
    if (result.rows[0]?.locked) return;
    if (Date.now() >= deadline)
      throw new StoreError(
        'locked',
        location,
        `store ${location} is in use by another gateway: stop the other gateway or give this one another schema (store.schema)`,
      );
    await sleep(200);
  }
}

/** `name` shows in pg_stat_activity (`application_name`, cut at 63 characters by the server). */
function newClient(url: string, name: string): pg.Client {
  return new pg.Client({
    connectionString: url,
    application_name: name,
    // A server that does not answer (a dropped route) fails the attempt instead of hanging the start.
    connectionTimeoutMillis: 10_000,
    // A paused process in the middle of a commit must not hold its locks (the lease row among them)
    // for ever: the server ends its session, and the commit fails when the process comes back.
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
  });
}

/** Well above a commit's gaps between statements, well below a lease's grant. */
const IDLE_IN_TRANSACTION_MS = 3_000;

async function connectWithRetry(
  url: string,
  location: string,
  options: PostgresStoreOptions,
  logger: EngineLogger,
): Promise<pg.Client> {
  const attempts = Math.max(1, Math.floor(options.connectAttempts ?? 1));
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let pause = Math.max(0, options.connectBackoffMs ?? 500);
  for (let attempt = 1; ; attempt++) {
    const client = newClient(url, `jms-gateway store ${options.schema ?? DEFAULT_SCHEMA}`);
    // An error after connect (server restart) is handled where the connection is used.
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      const failure = postgresError(
        'open',
        url,
        location,
        error,
        `could not connect (attempt ${attempt} of ${attempts})`,
      );
      if (attempt >= attempts) throw failure;
      logger.warn(
        { store: location, attempt, attempts, err: failure.message },
        'store connection failed, retrying',
      );
      await sleep(pause);
      pause = Math.min(10_000, pause * 2);
    }
  }
}

/** A {@link StoreError} for a PostgreSQL failure: SQLSTATE kept, the password never shown. */
function postgresError(
  kind: 'open' | 'write',
  url: string,
  location: string,
  error: unknown,
  what: string,
): StoreError {
  const code = (error as { code?: unknown } | null)?.code;
  const sqlState = typeof code === 'string' ? code : undefined;
  const detail = scrubSecrets(String((error as Error | null)?.message ?? error), url);
  let hint = '';
  if (sqlState === '25006') hint = ': the database is read-only';
  else if (sqlState === '53100') hint = ': the database is full; free space on its server';
  else if (sqlState === '28P01' || sqlState === '28000') hint = ': check the user and password in store.url';
  else if (sqlState === '3D000') hint = ': the database does not exist';
  else if (sqlState === 'ECONNREFUSED' || sqlState === 'ENOTFOUND' || sqlState === 'ETIMEDOUT')
    hint = ': is PostgreSQL running and reachable at that address?';
  const failure = new StoreError(
    error instanceof FencedError ? 'fenced' : kind,
    location,
    `store ${location} ${what} (${sqlState ? `${sqlState}: ` : ''}${detail})${hint}`,
  );
  // The SQLSTATE, where code looks for the SQLite code of the file store.
  Object.defineProperty(failure, 'sqliteCode', { value: sqlState });
  return failure;
}
