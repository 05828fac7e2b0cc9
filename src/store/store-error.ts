/**
 * The error the file store raises: opening a damaged or foreign file, a write SQLite refused (disk
 * full, I/O error), or use after close. Its message names the file and says what to do. The
 * PostgreSQL store raises it too: `file` is then the database URL (password masked) and schema,
 * and `sqliteCode` the SQLSTATE (or the connection error's code).
 */
import { JMSError } from '../jms/errors.js';

/** What went wrong, for code that reacts (the CLI's exit message, health status). */
export type StoreErrorKind =
  /** The file is damaged or truncated: restore a backup or move it aside. */
  | 'corrupt'
  /** The file is not a jms-gateway store, or one of a newer schema. */
  | 'incompatible'
  /** Another process holds the store. */
  | 'locked'
  /** The file could not be opened or created (permissions, missing directory). */
  | 'open'
  /** A commit was refused; nothing of it was stored. */
  | 'write'
  /** This instance lost its high-availability lease: another one is active and writes now. */
  | 'fenced'
  /** The store was closed. */
  | 'closed';

export class StoreError extends JMSError {
  /** The SQLite result code behind it (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, ...), when there is one. */
  readonly sqliteCode: string | undefined;

  constructor(
    readonly kind: StoreErrorKind,
    /** The database file, as the store was given it. */
    readonly file: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    const code = (options?.cause as { code?: unknown } | undefined)?.code;
    this.sqliteCode = typeof code === 'string' ? code : undefined;
  }
}
