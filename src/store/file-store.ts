/**
 * The embedded file store (PER-1..3): durable state in one SQLite database, written through
 * better-sqlite3 in WAL mode. Each group of commits is one SQLite transaction, durable before any
 * of its promises resolve; a commit SQLite refuses rejects, and nothing of it stays applied.
 *
 * Group commit: `commit` only queues its operations; the queue is written on the next turn of the
 * event loop (`setImmediate`) as one transaction, so every commit that arrives in the meantime —
 * from any producer, session or engine flush — shares one fsync. better-sqlite3 is synchronous,
 * so nothing else runs while a transaction is written; whatever arrives during that time is
 * queued and goes into the next one.
 *
 * See docs/persistence.md for the durability settings, recovery, failures and backups.
 */
import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import type {
  BacklogKey,
  DestinationRecord,
  ForwardedId,
  ForwardedIdStore,
  MessageStore,
  RecoveredRef,
  SenderRecord,
  RecoveredState,
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
import { StoreSize } from './store-size.js';
import type { StoreUsage } from './store-usage.js';
import { DEFAULT_SLOW_WRITE_MS, SlowWrites } from './slow-writes.js';
import { BYTES_IN_FILE, type BodyInFile, BodyFiles, TEXT_IN_FILE, isBodyInFile } from './body-files.js';

/**
 * The schema this code writes and reads. A store with a higher version is refused. Version 2:
 * a `body` may be 1 or 2, standing for a body file (version 1 stores are marked 2 when opened).
 */
export const SCHEMA_VERSION = 2;

/** Bodies of this many bytes or more are written to files of their own by default: 128 KiB. */
export const DEFAULT_LARGE_BODY_BYTES = 128 * 1024;

/** The file name used when the store is given a directory. */
export const DEFAULT_FILE_NAME = 'gateway.db';

/** How a file store is opened. */
export interface FileStoreOptions {
  /**
   * Where the store lives. An existing directory, or a path ending in `/`, holds the database as
   * `gateway.db` (with its `-wal` file next to it); any other path is the database file itself.
   * Missing directories are created.
   */
  path: string;
  /**
   * When a commit counts as durable. `full` (default): the write-ahead log is fsynced before a
   * commit resolves, so a resolved commit survives a process crash, an OS crash and power loss.
   * `normal`: no fsync per commit (only at checkpoints); a resolved commit survives a crash of the
   * gateway process (kill -9), but the last commits may be lost if the machine itself fails.
   */
  synchronous?: 'full' | 'normal';
  /**
   * The check run at open: `quick` (default, SQLite `quick_check`: page structure and
   * records, about a second per GB), `full` (`integrity_check`, also verifies every index; slower),
   * or `none`.
   */
  check?: 'quick' | 'full' | 'none';
  /**
   * Upper bound on the database size in bytes; a commit that would grow it beyond fails with a
   * "store is full" error, as a full disk does. Default: no bound but the disk.
   */
  maxBytes?: number;
  /** SQLite page cache in KiB. Default 32768 (32 MiB). */
  cacheKiB?: number;
  /** Ms to wait for a lock held by another process before giving up at open. Default 5000. */
  busyTimeoutMs?: number;
  logger?: EngineLogger;
  /**
   * A transaction that holds the event loop this many ms or more is logged at warn (at most once
   * a minute, with a count of the others). Default 100.
   */
  slowWriteMs?: number;
  /** Times writes for `slowWriteMs`: a monotonic clock in ms. Default `performance.now`; tests pass their own. */
  elapsedClock?: () => number;
  /**
   * A message body of this many bytes or more (as stored: UTF-8 text, or bytes) is written to a
   * file of its own beside the database, off the event loop, before the transaction that refers
   * to it. Default 131072 (128 KiB); `Infinity` keeps every body in the database.
   */
  largeBodyBytes?: number;
}

interface PendingCommit {
  operations: EncodedOperation[];
  resolve(): void;
  reject(error: unknown): void;
  settled: boolean;
  /** False while its body files are being written: it and every commit after it wait. */
  ready: boolean;
  /** The body files written for it: removed again if it fails. */
  bodyFiles: readonly number[];
  /** Body files of the messages its operations deleted: removed once it is durable. */
  deletedBodyFiles: number[];
}

type Db = Database.Database;
type Statement = Database.Statement;

const SCHEMA = `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE messages (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    body_type TEXT NOT NULL,
    headers TEXT NOT NULL,
    properties TEXT,
    body
  );
  CREATE TABLE refs (
    id TEXT NOT NULL,
    backlog TEXT NOT NULL,
    seq INTEGER NOT NULL,
    delivery_count INTEGER NOT NULL,
    not_before INTEGER NOT NULL,
    PRIMARY KEY (id, backlog)
  ) WITHOUT ROWID;
  CREATE TABLE destinations (
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    options TEXT NOT NULL,
    UNIQUE (kind, name)
  );
  CREATE TABLE subscriptions (
    key TEXT NOT NULL UNIQUE,
    topic TEXT NOT NULL,
    client_id TEXT,
    name TEXT NOT NULL,
    selector TEXT,
    no_local INTEGER NOT NULL,
    shared INTEGER NOT NULL
  );
`;

/**
 * Bridges' duplicate windows (BRG-2). Created when a store opens if it is missing, so a store
 * made before it existed gains it without a schema version change; older code ignores it.
 */
const FORWARDED_IDS_SCHEMA = `
  CREATE TABLE IF NOT EXISTS forwarded_ids (
    window TEXT NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    at INTEGER NOT NULL,
    PRIMARY KEY (window, id)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS forwarded_ids_by_seq ON forwarded_ids (window, seq);
`;

export class FileStore implements MessageStore, ForwardedIdStore {
  /** The database file. */
  readonly file: string;
  readonly #db: Db;
  readonly #logger: EngineLogger;
  readonly #sql: ReturnType<typeof prepareStatements>;
  #pending: PendingCommit[] = [];
  #scheduled = false;
  #closed = false;
  readonly #stats: CommitStats = { commits: 0, transactions: 0, failures: 0 };
  readonly #slowWrites: SlowWrites;
  readonly #bodies: BodyFiles;
  readonly #largeBodyBytes: number;
  readonly #size: StoreSize;

  private constructor(
    file: string,
    db: Db,
    logger: EngineLogger,
    slowWrites: SlowWrites,
    bodies: BodyFiles,
    largeBodyBytes: number,
    maxBytes: number | undefined,
  ) {
    this.file = file;
    this.#db = db;
    this.#logger = logger;
    this.#sql = prepareStatements(db);
    this.#slowWrites = slowWrites;
    this.#bodies = bodies;
    this.#largeBodyBytes = largeBodyBytes;
    this.#size = new StoreSize(db, file, maxBytes, bodies);
  }

  /**
   * Opens (or creates) the store at `options.path`. A damaged, truncated or foreign file is
   * refused with a {@link StoreError} that names it and says what to do; it never starts empty
   * over a file it cannot read.
   */
  static async open(options: FileStoreOptions): Promise<FileStore> {
    const file = await resolveFile(options.path);
    const logger = options.logger ?? silentLogger;
    const largeBodyBytes = options.largeBodyBytes ?? DEFAULT_LARGE_BODY_BYTES;
    if (!(largeBodyBytes >= 1))
      throw new StoreError(
        'open',
        file,
        `file store largeBodyBytes ${String(largeBodyBytes)} is not valid (expected a number of bytes, at least 1, or Infinity)`,
      );
    if (!existsSync(file)) {
      if (existsSync(`${file}-wal`)) {
        throw corrupt(
          file,
          `the database file is missing but its write-ahead log '${basename(file)}-wal' exists`,
        );
      }
      createStoreFile(file);
      logger.info({ file }, 'store created');
    }
    const started = Date.now();
    const db = openDatabase(file, options);
    const bodies = new BodyFiles(file);
    try {
      sweepBodyFiles(db, file, bodies, logger);
    } catch (error) {
      db.close();
      throw error instanceof StoreError ? error : openError(file, error);
    }
    logger.info({ file, ms: Date.now() - started, check: options.check ?? 'quick' }, 'store opened');
    const slowWrites = new SlowWrites(
      logger,
      file,
      options.slowWriteMs ?? DEFAULT_SLOW_WRITE_MS,
      options.elapsedClock ?? (() => performance.now()),
    );
    return new FileStore(file, db, logger, slowWrites, bodies, largeBodyBytes, options.maxBytes);
  }

  /** The bytes the database and its body files take now, and `maxBytes`, which bounds them. */
  usage(): StoreUsage {
    if (this.#closed) throw closedError(this.file);
    return this.#size.usage();
  }

  /** Counters: commit calls, transactions written, failures. */
  get stats(): Readonly<CommitStats> {
    return { ...this.#stats };
  }

  recover(): Promise<RecoveredState> {
    if (this.#closed) return Promise.reject(closedError(this.file));
    try {
      return Promise.resolve(this.#recover());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #recover(): RecoveredState {
    const destinations = (this.#sql.allDestinations.all() as [string, string, string][]).map(
      ([kind, name, options]): DestinationRecord => ({
        kind: kind as 'queue' | 'topic',
        name,
        options: this.#parseRecord(options, `destination '${kind}://${name}'`) as Record<string, unknown>,
      }),
    );
    const subscriptions = (
      this.#sql.allSubscriptions.all() as [
        string,
        string,
        string | null,
        string,
        string | null,
        number,
        number,
      ][]
    ).map(([key, topic, clientId, name, selector, noLocal, shared]): SubscriptionRecord => ({
      key,
      topic,
      clientId,
      name,
      selector,
      noLocal: noLocal !== 0,
      shared: shared !== 0,
    }));
    const maxSeq = (this.#sql.maxSeq.pluck().get() as number | null) ?? 0;
    this.#logger.info(
      { file: this.file, destinations: destinations.length, subscriptions: subscriptions.length },
      'store read',
    );
    return { destinations, subscriptions, refs: this.#readRefs(), maxSeq };
  }

  /**
   * The references with their messages, read row by row as the engine recovers them: a message is
   * decoded once for all its references (they come together, in send order), and its body can be
   * paged out again before the next one is read (PER-4).
   */
  *#readRefs(): Generator<RecoveredRef> {
    if (this.#closed) throw closedError(this.file);
    let lastMessageSeq = -Infinity;
    let message: Message | undefined;
    let sender: SenderRecord | undefined;
    let unreadBodyBytes: number | undefined;
    for (const row of this.#sql.allRefs.iterate() as IterableIterator<RefRow>) {
      const [backlog, id, deliveryCount, notBefore, seq, bodyType, headers, properties, body] = row;
      if (seq !== lastMessageSeq || !message) {
        ({ message, sender, unreadBodyBytes } = this.#decodeLeavingBodyFile(id, seq, {
          bodyType,
          headers,
          properties,
          body,
        } as SerializedMessage | StoredBodyInFile));
        lastMessageSeq = seq;
      }
      const ref: RecoveredRef = { backlog, id, seq, deliveryCount, notBefore, message };
      if (sender) ref.sender = sender;
      if (unreadBodyBytes !== undefined) ref.unreadBodyBytes = unreadBodyBytes;
      yield ref;
    }
  }

  /**
   * As {@link #decode}, but a text or bytes body in a file of its own stays there: only the
   * file's size is read, which is the body's size as the message measures it. The engine keeps
   * the message paged out and reads it whole when it needs it.
   */
  #decodeLeavingBodyFile(
    id: string,
    seq: number,
    row: SerializedMessage | StoredBodyInFile,
  ): { message: Message; sender: SenderRecord | undefined; unreadBodyBytes: number | undefined } {
    if (!isBodyInFile(row.body) || !fileSizeIsBodySize(row.bodyType, row.body))
      return { ...this.#decode(id, seq, row), unreadBodyBytes: undefined };
    const unreadBodyBytes = this.#bodyFileSize(id, seq);
    const emptyBody = row.body === TEXT_IN_FILE ? null : Buffer.alloc(0);
    return { ...this.#decode(id, seq, { ...row, body: emptyBody }), unreadBodyBytes };
  }

  #bodyFileSize(id: string, seq: number): number {
    return this.#fromBodyFile(id, seq, () => this.#bodies.sizeOf(seq));
  }

  /**
   * Reads one stored message back, synchronously: the engine pages bodies out of memory and
   * reads them here at delivery (PER-4). Undefined when no such message is stored.
   */
  readMessage(id: string): Message | undefined {
    if (this.#closed) throw closedError(this.file);
    const row = this.#sql.oneMessage.get(id) as StoredRow | undefined;
    if (!row) return undefined;
    const [seq, bodyType, headers, properties, body] = row;
    return this.#decode(id, seq, { bodyType, headers, properties, body } as SerializedMessage).message;
  }

  /** Destination handles shared by the messages read back, at recovery and when paged in. */
  readonly #handles = new Map<string, Queue | Topic>();

  #decode(
    id: string,
    seq: number,
    row: SerializedMessage | StoredBodyInFile,
  ): { message: Message; sender: SenderRecord | undefined } {
    try {
      if (isBodyInFile(row.body)) row = { ...row, body: this.#readBodyFile(id, seq, row.body) };
      return deserializeStoredMessage(row as SerializedMessage, this.#handles);
    } catch (error) {
      if (error instanceof StoreError) throw error;
      throw corrupt(this.file, `message '${id}' cannot be read: ${(error as Error).message}`, error);
    }
  }

  #readBodyFile(id: string, seq: number, kind: BodyInFile): string | Buffer {
    return this.#fromBodyFile(id, seq, () => this.#bodies.read(seq, kind));
  }

  /** What `read` gets from a message's body file; a file that cannot be read makes the store corrupt. */
  #fromBodyFile<T>(id: string, seq: number, read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw corrupt(
        this.file,
        `the body of message '${id}' cannot be read from '${this.#bodies.pathOf(seq)}': ${(error as Error).message}`,
        error,
      );
    }
  }

  #parseRecord(text: string, what: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw corrupt(this.file, `${what} cannot be read: ${(error as Error).message}`, error);
    }
  }

  /**
   * Queues the operations for the next group commit; resolves once the transaction that holds
   * them is durable, rejects with a {@link StoreError} when SQLite refused it (nothing of these
   * operations is then stored).
   */
  commit(operations: readonly StoreOperation[]): Promise<void> {
    if (this.#closed) return Promise.reject(closedError(this.file));
    this.#stats.commits++;
    let encoded: EncodedOperation[];
    try {
      encoded = operations.map(encodeOperation);
    } catch (error) {
      this.#stats.failures++;
      return Promise.reject(
        new StoreError(
          'write',
          this.file,
          `store '${this.file}' could not encode a message: ${(error as Error).message}`,
          {
            cause: error,
          },
        ),
      );
    }
    const largeBodies = this.#takeLargeBodies(encoded);
    if (!largeBodies) return this.#enqueue(encoded);
    const refusal = this.#size.refusal(largeBodies.reduce((sum, { bytes }) => sum + bytes, 0));
    if (refusal) {
      this.#stats.failures++;
      return Promise.reject(refusal);
    }
    return this.#enqueueWithBodyFiles(encoded, largeBodies);
  }

  /**
   * The bodies of `operations` that go to files of their own; each one's row keeps a number
   * saying what its file holds instead. Undefined when there are none (nearly always).
   */
  #takeLargeBodies(operations: EncodedOperation[]): LargeBody[] | undefined {
    let large: LargeBody[] | undefined;
    for (const operation of operations) {
      if (operation.op !== 'addMessage') continue;
      const body = operation.row.body;
      if (body === null) continue;
      const bytes = this.#fileSizeOf(body);
      if (bytes === undefined) continue;
      (large ??= []).push({ seq: operation.seq, body, bytes });
      (operation.row as StoredBodyInFile).body = typeof body === 'string' ? TEXT_IN_FILE : BYTES_IN_FILE;
    }
    return large;
  }

  /**
   * A body's size in its file (UTF-8 for text) when it is large enough for one, else undefined;
   * a string is measured only when its length says it may be.
   */
  #fileSizeOf(body: string | Buffer): number | undefined {
    const limit = this.#largeBodyBytes;
    if (typeof body !== 'string') return body.length >= limit ? body.length : undefined;
    // UTF-8 takes 1 to 3 bytes per UTF-16 code unit.
    if (body.length * 3 < limit) return undefined;
    const bytes = Buffer.byteLength(body, 'utf8');
    return bytes >= limit ? bytes : undefined;
  }

  /**
   * Writes the body files, then queues the commit. It takes its place in the queue at once: the
   * commits after it wait until its files are durable, so commits are still written in the
   * order they were made (a commit may delete what an earlier one added).
   */
  #enqueueWithBodyFiles(operations: EncodedOperation[], bodies: readonly LargeBody[]): Promise<void> {
    const seqs = bodies.map(({ seq }) => seq);
    const result = this.#enqueue(operations, seqs);
    const pending = this.#pending[this.#pending.length - 1]!;
    void Promise.allSettled(bodies.map(({ seq, body, bytes }) => this.#bodies.write(seq, body, bytes))).then(
      (writes) => {
        const failed = writes.find((write): write is PromiseRejectedResult => write.status === 'rejected');
        if (failed) this.#bodyFilesFailed(pending, failed.reason);
        else pending.ready = true;
        this.#schedule();
      },
    );
    return result;
  }

  #bodyFilesFailed(pending: PendingCommit, cause: unknown): void {
    this.#pending.splice(this.#pending.indexOf(pending), 1);
    this.#fail(
      [pending],
      cause,
      new StoreError(
        'write',
        this.file,
        `store '${this.file}' could not write a message body to '${this.#bodies.folder}' (${(cause as Error).message}); nothing of this commit was stored`,
        { cause },
      ),
    );
  }

  /** The ids of a bridge's duplicate window, oldest first, as stored (BRG-2). */
  readForwardedIds(window: string): ForwardedId[] {
    if (this.#closed) throw closedError(this.file);
    return (this.#sql.forwardedIds.all(window) as [string, number, number][]).map(([id, seq, at]) => ({
      id,
      seq,
      at,
    }));
  }

  /** Records ids in a bridge's duplicate window and trims it, in the next group commit (BRG-2). */
  recordForwardedIds(window: string, ids: readonly ForwardedId[], forgetThroughSeq?: number): Promise<void> {
    if (this.#closed) return Promise.reject(closedError(this.file));
    this.#stats.commits++;
    return this.#enqueue([
      { op: 'recordForwarded', window, ids, ...(forgetThroughSeq === undefined ? {} : { forgetThroughSeq }) },
    ]);
  }

  #enqueue(operations: EncodedOperation[], bodyFiles: readonly number[] = NO_BODY_FILES): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({
        operations,
        resolve,
        reject,
        settled: false,
        ready: bodyFiles.length === 0,
        bodyFiles,
        deletedBodyFiles: [],
      });
      this.#schedule();
    });
  }

  /** Schedules the next group write, unless one is scheduled or the first commit is not ready. */
  #schedule(): void {
    if (this.#scheduled || !this.#pending[0]?.ready) return;
    this.#scheduled = true;
    setImmediate(() => this.#writePending());
  }

  #writePending(): void {
    this.#scheduled = false;
    let ready = 0;
    while (ready < this.#pending.length && this.#pending[ready]!.ready) ready++;
    if (ready === 0) return;
    let group: PendingCommit[];
    if (ready === this.#pending.length) {
      group = this.#pending;
      this.#pending = [];
    } else {
      group = this.#pending.splice(0, ready);
    }
    this.#slowWrites.time(
      () => this.#write(group),
      () => ({
        commits: group.length,
        operations: group.reduce((sum, pending) => sum + pending.operations.length, 0),
      }),
    );
  }

  /**
   * Writes a group of commits as one transaction. With several commits each runs in its own
   * savepoint, so one that fails (a bad record) is undone and rejected alone; an error that ends
   * the transaction itself (disk full, I/O error) or a failed COMMIT rejects the whole group.
   */
  #write(group: PendingCommit[]): void {
    const sql = this.#sql;
    const applied: PendingCommit[] = [];
    try {
      this.#size.boundDatabase();
      sql.begin.run();
      if (group.length === 1) {
        this.#apply(group[0]!.operations, group[0]!.deletedBodyFiles);
        applied.push(group[0]!);
      } else {
        for (const pending of group) {
          sql.savepoint.run();
          try {
            this.#apply(pending.operations, pending.deletedBodyFiles);
            sql.release.run();
            applied.push(pending);
          } catch (error) {
            if (!this.#db.inTransaction) throw error;
            sql.rollbackTo.run();
            sql.release.run();
            this.#fail([pending], error);
          }
        }
      }
      sql.commit.run();
    } catch (error) {
      if (this.#db.inTransaction) {
        try {
          sql.rollback.run();
        } catch (rollbackError) {
          this.#logger.error({ file: this.file, err: rollbackError }, 'store rollback failed');
        }
      }
      this.#fail(group, error);
      return;
    }
    this.#stats.transactions++;
    for (const pending of applied) {
      this.#bodies.remove(pending.deletedBodyFiles);
      pending.settled = true;
      pending.resolve();
    }
  }

  /** Rejects the unsettled commits of `group`: nothing of them is stored. */
  #fail(group: readonly PendingCommit[], cause: unknown, error = writeError(this.file, cause)): void {
    const unsettled = group.filter((pending) => !pending.settled);
    if (unsettled.length === 0) return;
    // Nothing of them is stored: their own body files go, and what they deleted stays.
    for (const pending of unsettled) {
      this.#bodies.remove(pending.bodyFiles);
      pending.deletedBodyFiles.length = 0;
    }
    this.#logger.error(
      { file: this.file, commits: unsettled.length, code: error.sqliteCode, err: cause },
      'store write failed',
    );
    for (const pending of unsettled) {
      pending.settled = true;
      this.#stats.failures++;
      pending.reject(error);
    }
  }

  #apply(operations: readonly EncodedOperation[], deletedBodyFiles: number[]): void {
    const sql = this.#sql;
    for (const operation of operations) {
      switch (operation.op) {
        case 'addMessage': {
          const row = operation.row;
          sql.insertMessage.run(
            operation.seq,
            operation.id,
            row.bodyType,
            row.headers,
            row.properties,
            row.body,
          );
          break;
        }
        case 'addRef':
          sql.insertRef.run(
            operation.id,
            operation.backlog,
            operation.seq,
            operation.deliveryCount,
            operation.notBefore,
          );
          break;
        case 'updateRef':
          sql.updateRef.run(operation.deliveryCount, operation.notBefore, operation.id, operation.backlog);
          break;
        case 'removeRef':
          if (sql.deleteRef.run(operation.id, operation.backlog).changes > 0)
            this.#deleteIfUnreferenced(operation.id, deletedBodyFiles);
          break;
        case 'putDestination': {
          const { kind, name, options } = operation.destination;
          sql.putDestination.run(kind, name, JSON.stringify(options));
          break;
        }
        case 'removeDestination':
          sql.deleteDestination.run(operation.kind, operation.name);
          this.#dropBacklog(`${operation.kind}://${operation.name}`, deletedBodyFiles);
          break;
        case 'putSubscription': {
          const s = operation.subscription;
          sql.putSubscription.run(
            s.key,
            s.topic,
            s.clientId,
            s.name,
            s.selector,
            s.noLocal ? 1 : 0,
            s.shared ? 1 : 0,
          );
          break;
        }
        case 'removeSubscription':
          sql.deleteSubscription.run(operation.key);
          this.#dropBacklog(operation.key, deletedBodyFiles);
          break;
        case 'recordForwarded':
          for (const { id, seq, at } of operation.ids) sql.putForwardedId.run(operation.window, id, seq, at);
          if (operation.forgetThroughSeq !== undefined)
            sql.forgetForwardedIds.run(operation.window, operation.forgetThroughSeq);
          break;
      }
    }
  }

  #dropBacklog(backlog: BacklogKey, deletedBodyFiles: number[]): void {
    for (const id of this.#sql.deleteBacklog.all(backlog) as string[])
      this.#deleteIfUnreferenced(id, deletedBodyFiles);
  }

  /**
   * Deletes a message no reference holds any more; when it had a body file, notes its seq so the
   * file goes once the transaction is durable. (A message replaced by `INSERT OR REPLACE` leaves
   * its file to the sweep at the next open.)
   */
  #deleteIfUnreferenced(id: string, deletedBodyFiles: number[]): void {
    if (!this.#bodies.any) {
      this.#sql.deleteUnreferenced.run(id, id);
      return;
    }
    const deleted = this.#sql.deleteUnreferencedWithBody.get(id, id) as [number, number] | undefined;
    if (deleted && deleted[1] === 1) deletedBodyFiles.push(deleted[0]);
  }

  /**
   * Copies the database to `destination` with SQLite's online backup API, while the store stays
   * in use, and the body files it refers to to `<destination>-bodies`. Commits queued before the
   * call are in the copy.
   */
  async backup(destination: string): Promise<void> {
    if (this.#closed) throw closedError(this.file);
    await this.commit([]);
    await this.#bodies.backup(
      destination,
      async () => {
        await this.#db.backup(destination);
      },
      () => bodyFileSeqsIn(destination),
    );
  }

  /** Writes what is queued, then closes the database (checkpointing the WAL into it). */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#pending.length > 0 || this.#scheduled) await this.commit([]).catch(() => undefined);
    this.#closed = true;
    await this.#bodies.settled();
    this.#db.close();
    this.#logger.info({ file: this.file }, 'store closed');
  }
}

const NO_BODY_FILES: readonly number[] = [];

/**
 * Whether a body file's size is the body's size as its message measures it (MSG-4): text kept as
 * UTF-8, or bytes. Not for a map or stream body, nor for text that is not well-formed UTF-16
 * (kept as UTF-16 bytes).
 */
function fileSizeIsBodySize(bodyType: string, kind: BodyInFile): boolean {
  return kind === TEXT_IN_FILE ? bodyType === 'text' || bodyType === 'xml' : bodyType === 'bytes';
}

/** A body on its way to a file of its own. */
interface LargeBody {
  seq: number;
  body: string | Buffer;
  /** Its size in its file. */
  bytes: number;
}

/** Rows whose body is in a file: the only numeric bodies (better-sqlite3 binds the number as a REAL). */
const BODY_FILE_SEQS = "SELECT seq FROM messages WHERE typeof(body) IN ('integer', 'real')";

/** The seqs of the messages whose bodies are in files, in a stopped store file (a backup copy). */
function bodyFileSeqsIn(file: string): number[] {
  const db = new Database(file, { fileMustExist: true });
  try {
    return db.prepare(BODY_FILE_SEQS).pluck().all() as number[];
  } finally {
    db.close();
  }
}

/**
 * Removes body files no message refers to (orphans of commits that did not complete) and refuses
 * a store whose messages miss theirs.
 */
function sweepBodyFiles(db: Db, file: string, bodies: BodyFiles, logger: EngineLogger): void {
  // The query reads every row: a store that never held a large body skips it (and if its folder
  // was lost, reading those messages at recovery says so).
  if (!existsSync(bodies.folder)) return;
  const stored = new Set(db.prepare(BODY_FILE_SEQS).pluck().all() as number[]);
  const { removed, missing } = bodies.sweep(stored);
  if (removed > 0)
    logger.warn(
      { file, folder: bodies.folder, removed },
      'store removed body files that no message refers to (left by commits that did not complete)',
    );
  if (missing.length > 0)
    throw corrupt(
      file,
      `${missing.length} message bod${missing.length === 1 ? 'y is' : 'ies are'} missing from '${bodies.folder}' (seq ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''})`,
    );
}

/** One message as `readMessage` reads it. */
type StoredRow = [
  seq: number,
  bodyType: string,
  headers: string,
  properties: string | null,
  body: StoredBody,
];

/** A `body` column: the body itself, or a number standing for its file (schema version 2). */
type StoredBody = string | Buffer | null | BodyInFile;

/** A row whose body is in a file. */
type StoredBodyInFile = Omit<SerializedMessage, 'body'> & { body: StoredBody };

/** A reference joined with its message; `seq` is the message's, which every reference to it shares. */
type RefRow = [
  backlog: string,
  id: string,
  deliveryCount: number,
  notBefore: number,
  seq: number,
  bodyType: string,
  headers: string,
  properties: string | null,
  body: StoredBody,
];

function prepareStatements(db: Db) {
  const raw = (sql: string): Statement => db.prepare(sql).raw(true);
  return {
    begin: db.prepare('BEGIN'),
    commit: db.prepare('COMMIT'),
    rollback: db.prepare('ROLLBACK'),
    savepoint: db.prepare('SAVEPOINT one_commit'),
    release: db.prepare('RELEASE one_commit'),
    rollbackTo: db.prepare('ROLLBACK TO one_commit'),
    insertMessage: db.prepare(
      'INSERT OR REPLACE INTO messages (seq, id, body_type, headers, properties, body) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    insertRef: db.prepare(
      'INSERT OR REPLACE INTO refs (id, backlog, seq, delivery_count, not_before) VALUES (?, ?, ?, ?, ?)',
    ),
    updateRef: db.prepare('UPDATE refs SET delivery_count = ?, not_before = ? WHERE id = ? AND backlog = ?'),
    deleteRef: db.prepare('DELETE FROM refs WHERE id = ? AND backlog = ?'),
    deleteUnreferenced: db.prepare(
      'DELETE FROM messages WHERE id = ? AND NOT EXISTS (SELECT 1 FROM refs WHERE id = ?)',
    ),
    deleteUnreferencedWithBody: raw(
      "DELETE FROM messages WHERE id = ? AND NOT EXISTS (SELECT 1 FROM refs WHERE id = ?) RETURNING seq, typeof(body) IN ('integer', 'real')",
    ),
    deleteBacklog: db.prepare('DELETE FROM refs WHERE backlog = ? RETURNING id').pluck(),
    putDestination: db.prepare(
      'INSERT INTO destinations (kind, name, options) VALUES (?, ?, ?) ON CONFLICT (kind, name) DO UPDATE SET options = excluded.options',
    ),
    deleteDestination: db.prepare('DELETE FROM destinations WHERE kind = ? AND name = ?'),
    putSubscription: db.prepare(
      `INSERT INTO subscriptions (key, topic, client_id, name, selector, no_local, shared) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key) DO UPDATE SET topic = excluded.topic, client_id = excluded.client_id, name = excluded.name,
         selector = excluded.selector, no_local = excluded.no_local, shared = excluded.shared`,
    ),
    deleteSubscription: db.prepare('DELETE FROM subscriptions WHERE key = ?'),
    allDestinations: raw('SELECT kind, name, options FROM destinations ORDER BY rowid'),
    allSubscriptions: raw(
      'SELECT key, topic, client_id, name, selector, no_local, shared FROM subscriptions ORDER BY rowid',
    ),
    allRefs: raw(
      `SELECT r.backlog, r.id, r.delivery_count, r.not_before, m.seq, m.body_type, m.headers, m.properties, m.body
       FROM messages m JOIN refs r ON r.id = m.id ORDER BY m.seq`,
    ),
    maxSeq: db.prepare('SELECT max(seq) FROM messages'),
    oneMessage: raw('SELECT seq, body_type, headers, properties, body FROM messages WHERE id = ?'),
    putForwardedId: db.prepare(
      'INSERT OR REPLACE INTO forwarded_ids (window, id, seq, at) VALUES (?, ?, ?, ?)',
    ),
    forgetForwardedIds: db.prepare('DELETE FROM forwarded_ids WHERE window = ? AND seq <= ?'),
    forwardedIds: raw('SELECT id, seq, at FROM forwarded_ids WHERE window = ? ORDER BY seq'),
  };
}

/** The database file for a configured path: a directory gets `gateway.db` inside it. */
async function resolveFile(path: string): Promise<string> {
  if (typeof path !== 'string' || path === '')
    throw new StoreError('open', String(path), 'file store needs a path (a directory or a database file)');
  const isDirectory = /[/\\]$/.test(path) || (existsSync(path) && statSync(path).isDirectory());
  const file = isDirectory ? join(path, DEFAULT_FILE_NAME) : path;
  await mkdir(dirname(file), { recursive: true });
  return file;
}

/**
 * Creates an empty store: the schema is written to a temporary file that is then renamed into
 * place, so a store file that exists always has its schema — an empty or truncated one is
 * damage, never "a store that was just being created".
 */
function createStoreFile(file: string): void {
  const temporary = `${file}.creating-${process.pid}`;
  rmSync(temporary, { force: true });
  try {
    const db = new Database(temporary);
    try {
      db.pragma('journal_mode = WAL');
      db.exec(SCHEMA);
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?), (?, ?), (?, ?)').run(
        'application',
        'jms-gateway',
        'schema',
        String(SCHEMA_VERSION),
        'created',
        new Date().toISOString(),
      );
    } finally {
      db.close();
    }
    fsyncPath(temporary);
    renameSync(temporary, file);
    fsyncPath(dirname(file));
  } catch (error) {
    rmSync(temporary, { force: true });
    rmSync(`${temporary}-wal`, { force: true });
    rmSync(`${temporary}-shm`, { force: true });
    throw new StoreError('open', file, `store '${file}' could not be created: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Opens an existing store file, sets it up and checks it; closes it again if anything is wrong. */
function openDatabase(file: string, options: FileStoreOptions): Db {
  if (statSync(file).size === 0) throw corrupt(file, 'the file is empty');
  let db: Db;
  try {
    db = new Database(file, { fileMustExist: true, timeout: options.busyTimeoutMs ?? 5000 });
  } catch (error) {
    throw openError(file, error);
  }
  try {
    // Exclusive locking: one gateway per store, and the WAL index lives in process memory (no -shm file).
    db.pragma('locking_mode = EXCLUSIVE');
    const mode = db.pragma('journal_mode = WAL', { simple: true }) as string;
    if (mode !== 'wal') throw new Error(`journal mode is '${mode}', expected 'wal'`);
    db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    db.pragma(`cache_size = -${Math.max(1024, Math.floor(options.cacheKiB ?? 32768))}`);
    // After a checkpoint the WAL is cut back to this size, so one big commit does not leave a big file.
    db.pragma('journal_size_limit = 67108864');
    checkIntegrity(db, file, options.check ?? 'quick');
    checkSchema(db, file);
    // Version 2 only adds body files: a version-1 store is one already, marked so older code refuses it.
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema' AND CAST(value AS INTEGER) < ?").run(
      String(SCHEMA_VERSION),
      SCHEMA_VERSION,
    );
    db.exec(FORWARDED_IDS_SCHEMA);
    // The first write takes the exclusive lock and keeps it until close; it also proves the file is writable.
    db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('opened', ?)").run(new Date().toISOString());
    return db;
  } catch (error) {
    db.close();
    throw error instanceof StoreError ? error : openError(file, error);
  }
}

function checkIntegrity(db: Db, file: string, check: 'quick' | 'full' | 'none'): void {
  if (check === 'none') return;
  const problems = db.pragma(check === 'full' ? 'integrity_check(20)' : 'quick_check(20)', {
    simple: false,
  }) as Record<string, string>[];
  const lines = problems.map((row) => Object.values(row)[0]);
  if (lines.length === 1 && lines[0] === 'ok') return;
  throw corrupt(
    file,
    `${check === 'full' ? 'integrity_check' : 'quick_check'} found: ${lines.slice(0, 3).join('; ')}`,
  );
}

function checkSchema(db: Db, file: string): void {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get();
  const version = hasMeta
    ? (db.prepare("SELECT value FROM meta WHERE key = 'schema'").pluck().get() as string | undefined)
    : undefined;
  if (version === undefined) {
    throw new StoreError(
      'incompatible',
      file,
      `store '${file}' is not a jms-gateway store (it has no schema version): point the store at another path or move the file aside`,
    );
  }
  if (Number(version) > SCHEMA_VERSION) {
    throw new StoreError(
      'incompatible',
      file,
      `store '${file}' has schema version ${version}, newer than this gateway reads (${SCHEMA_VERSION}): run a newer gateway or restore a backup made by this version`,
    );
  }
}

function corrupt(file: string, detail: string, cause?: unknown): StoreError {
  return new StoreError(
    'corrupt',
    file,
    `store '${file}' is corrupt (${detail}): restore it from a backup or move it aside to start empty`,
    cause === undefined ? undefined : { cause },
  );
}

function closedError(file: string): StoreError {
  return new StoreError('closed', file, `store '${file}' is closed`);
}

function sqliteCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

function openError(file: string, error: unknown): StoreError {
  const code = sqliteCode(error);
  const detail = (error as Error).message;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return corrupt(file, detail, error);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StoreError(
      'locked',
      file,
      `store '${file}' is in use by another process (${detail}): stop the other gateway or give this one another path`,
      { cause: error },
    );
  }
  return new StoreError('open', file, `store '${file}' could not be opened: ${detail}`, { cause: error });
}

function writeError(file: string, error: unknown): StoreError {
  const code = sqliteCode(error);
  const detail = (error as Error).message;
  if (code === 'SQLITE_FULL') {
    return new StoreError(
      'write',
      file,
      `store '${file}' is full (${detail}): free disk space or raise maxBytes; nothing of this commit was stored`,
      { cause: error },
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new StoreError(
      'corrupt',
      file,
      `store '${file}' is corrupt (${detail}); nothing of this commit was stored: stop the gateway and restore the store from a backup`,
      { cause: error },
    );
  }
  return new StoreError(
    'write',
    file,
    `store '${file}' could not write (${code ? `${code}: ` : ''}${detail}); nothing of this commit was stored`,
    { cause: error },
  );
}
