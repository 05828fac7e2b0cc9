/**
 * How much room the file store takes, and its `maxBytes`, which bounds the database and its body
 * files together. SQLite bounds the database itself (`max_page_count`: a write that would grow it
 * further fails with SQLITE_FULL); this keeps that bound at what the body files leave, and
 * refuses body files that do not fit before any of them is written.
 */
import type Database from 'better-sqlite3';
import type { BodyFiles } from './body-files.js';
import { StoreError } from './store-error.js';
import type { StoreUsage } from './store-usage.js';

export class StoreSize {
  readonly #pageSize: number;
  /** The body file bytes the database's bound was last set for. */
  #boundFor: number | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    readonly maxBytes: number | undefined,
    private readonly bodies: BodyFiles,
  ) {
    this.#pageSize = db.pragma('page_size', { simple: true }) as number;
    this.boundDatabase();
  }

  /** The bytes the database's pages and the body files take now. */
  usage(): StoreUsage {
    return { bytes: this.#usedBytes(), maxBytes: this.maxBytes };
  }

  #usedBytes(): number {
    return (this.db.pragma('page_count', { simple: true }) as number) * this.#pageSize + this.bodies.bytes;
  }

  /**
   * Lets the database grow only into what the body files leave of `maxBytes`; run before each
   * transaction, it costs nothing while the body files are as they were. SQLite keeps a bound
   * below the database's size at that size: the database does not shrink, it stops growing.
   */
  boundDatabase(): void {
    if (this.maxBytes === undefined) return;
    const bodyBytes = this.bodies.bytes;
    if (bodyBytes === this.#boundFor) return;
    this.#boundFor = bodyBytes;
    const pages = Math.max(1, Math.floor((this.maxBytes - bodyBytes) / this.#pageSize));
    this.db.pragma(`max_page_count = ${pages}`);
  }

  /** Undefined when body files of `bytes` more fit, else the error that refuses their commit. */
  refusal(bytes: number): StoreError | undefined {
    if (this.maxBytes === undefined) return undefined;
    const used = this.#usedBytes();
    if (used + bytes <= this.maxBytes) return undefined;
    return new StoreError(
      'write',
      this.file,
      `store '${this.file}' is full (message bodies of ${bytes} bytes do not fit: the database and its body files take ${used} of maxBytes ${this.maxBytes}): consume or delete messages, or raise maxBytes; nothing of this commit was stored`,
    );
  }
}
