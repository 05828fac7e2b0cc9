/**
 * Large message bodies, each in a file of its own beside the file store's database
 * (`gateway.db-bodies/<seq>`). better-sqlite3 writes on the event loop, and a body of megabytes
 * held it for tens to hundreds of milliseconds per commit; a body file is written and fsynced on
 * libuv's thread pool instead, before the transaction that refers to it, so the transaction
 * itself stays small. The database row keeps everything else and, in place of the body, a small
 * integer saying what the file holds.
 *
 * A body file without a row (its commit failed, or the process died between the file and the
 * commit) is an orphan: removed when the commit fails, and swept when the store next opens.
 */
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { copyFile, mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The database's `body` value for a body kept in a file: its text as UTF-8. */
export const TEXT_IN_FILE = 1;
/** The database's `body` value for a body kept in a file: its bytes as they are. */
export const BYTES_IN_FILE = 2;

export type BodyInFile = typeof TEXT_IN_FILE | typeof BYTES_IN_FILE;

/** Whether a `body` column value stands for a body file rather than being the body. */
export function isBodyInFile(value: unknown): value is BodyInFile {
  return value === TEXT_IN_FILE || value === BYTES_IN_FILE;
}

/** The folder of body files for a database file. */
function bodyFolderOf(databaseFile: string): string {
  return `${databaseFile}-bodies`;
}

/**
 * Body files written at once, at most: a commit of hundreds of large bodies would otherwise open
 * hundreds of files together and hold a UTF-8 copy of every body (libuv runs four file operations
 * at a time anyway).
 */
export const MAX_CONCURRENT_WRITES = 8;

export class BodyFiles {
  readonly folder: string;
  /** Writes running now. */
  #writing = 0;
  /** Writes waiting for one of those to finish, first come first served. */
  readonly #waitingToWrite: (() => void)[] = [];
  /** Removals waiting while a backup copies files: a file it will copy must still be there. */
  #deferred: number[] | undefined;
  #backups = 0;
  readonly #removals = new Set<Promise<void>>();
  /**
   * The size of every file written or being written and not yet removed, by seq: what
   * {@link bytes} adds up (a store's `maxBytes` counts them), and what a removal takes off.
   */
  readonly #sizes = new Map<number, number>();
  #bytes = 0;

  constructor(databaseFile: string) {
    this.folder = bodyFolderOf(databaseFile);
  }

  /**
   * Whether any body file may exist: while none does, a deleted message cannot have had one, and
   * the store's deletes skip asking (the common case costs nothing).
   */
  get any(): boolean {
    return this.#sizes.size > 0;
  }

  /** Bytes of the files written or being written and not yet removed. */
  get bytes(): number {
    return this.#bytes;
  }

  pathOf(seq: number): string {
    return join(this.folder, String(seq));
  }

  /**
   * Writes a body and makes it durable (the file and its folder entry fsynced) before resolving;
   * the work runs on libuv's thread pool, not on the event loop. A write that fails removes what
   * it left. `bytes` is its size as written (UTF-8 for text): it counts from now on.
   */
  async write(seq: number, body: string | Buffer, bytes: number): Promise<void> {
    this.#track(seq, bytes);
    await this.#takeSlot();
    try {
      await this.#writeNow(seq, body);
    } finally {
      this.#releaseSlot();
    }
  }

  #takeSlot(): Promise<void> | undefined {
    if (this.#writing < MAX_CONCURRENT_WRITES) {
      this.#writing++;
      return undefined;
    }
    return new Promise<void>((resolve) => this.#waitingToWrite.push(resolve));
  }

  /** Hands the slot to the next waiting write, so none can start in between and go over the limit. */
  #releaseSlot(): void {
    const next = this.#waitingToWrite.shift();
    if (next) next();
    else this.#writing--;
  }

  /** Writes running now, for tests. */
  get writing(): number {
    return this.#writing;
  }

  async #writeNow(seq: number, body: string | Buffer): Promise<void> {
    const path = this.pathOf(seq);
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    try {
      // The folder's own entry must be durable too, the first time it is made.
      if ((await mkdir(this.folder, { recursive: true })) !== undefined) await syncPath(dirname(this.folder));
      const handle = await open(path, 'w');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await syncPath(this.folder);
    } catch (error) {
      await rm(path, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  /** Reads a body back, synchronously (the store's reads are: the engine pages bodies in at delivery). */
  read(seq: number, kind: BodyInFile): string | Buffer {
    const bytes = readFileSync(this.pathOf(seq));
    return kind === TEXT_IN_FILE ? bytes.toString('utf8') : bytes;
  }

  /**
   * The size of a body file in bytes, synchronously (read at recovery instead of the body): as
   * counted when it was written or swept, else from the file itself.
   */
  sizeOf(seq: number): number {
    return this.#sizes.get(seq) ?? statSync(this.pathOf(seq)).size;
  }

  /** Removes the files of messages no longer stored; a failure leaves an orphan for the next sweep. */
  remove(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    for (const seq of seqs) this.#untrack(seq);
    if (this.#deferred) {
      this.#deferred.push(...seqs);
      return;
    }
    const removal = Promise.all(seqs.map((seq) => rm(this.pathOf(seq), { force: true })))
      .then(() => undefined)
      .catch(() => undefined)
      .finally(() => this.#removals.delete(removal));
    this.#removals.add(removal);
  }

  /** Resolves once the removals started so far are done (before the store closes). */
  async settled(): Promise<void> {
    await Promise.all([...this.#removals]);
  }

  /**
   * Removes every file whose seq is not in `stored` (orphans of commits that never landed), and
   * lists the seqs in `stored` that have no file. Run at open, before anything is written.
   */
  sweep(stored: ReadonlySet<number>): { removed: number; missing: number[] } {
    let names: string[];
    try {
      names = readdirSync(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      names = [];
    }
    let removed = 0;
    const found = new Set<number>();
    for (const name of names) {
      if (/^\d+$/.test(name) && stored.has(Number(name))) {
        found.add(Number(name));
        continue;
      }
      rmSync(join(this.folder, name), { force: true, recursive: true });
      removed++;
    }
    const missing = [...stored].filter((seq) => !found.has(seq));
    for (const seq of found) this.#track(seq, statSync(this.pathOf(seq)).size);
    return { removed, missing };
  }

  #track(seq: number, bytes: number): void {
    this.#untrack(seq);
    this.#sizes.set(seq, bytes);
    this.#bytes += bytes;
  }

  #untrack(seq: number): void {
    this.#bytes -= this.#sizes.get(seq) ?? 0;
    this.#sizes.delete(seq);
  }

  /**
   * Runs `copy` (a backup of the database) with removals held back, then copies the files of
   * `seqsOf()` — the body files the copied database refers to — beside `destinationFile`.
   */
  async backup(
    destinationFile: string,
    copy: () => Promise<void>,
    seqsOf: () => readonly number[],
  ): Promise<void> {
    this.#backups++;
    this.#deferred ??= [];
    try {
      await copy();
      const target = bodyFolderOf(destinationFile);
      await rm(target, { recursive: true, force: true });
      const seqs = seqsOf();
      if (seqs.length === 0) return;
      await mkdir(target, { recursive: true });
      for (const seq of seqs) {
        const copied = join(target, String(seq));
        await copyFile(this.pathOf(seq), copied);
        await syncPath(copied);
      }
      await syncPath(target);
      await syncPath(dirname(target));
    } finally {
      if (--this.#backups === 0) {
        const deferred = this.#deferred;
        this.#deferred = undefined;
        this.remove(deferred);
      }
    }
  }
}

/** fsyncs a file, or a folder: a new file's name is durable only once its folder is fsynced. */
async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
