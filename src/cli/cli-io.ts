/**
 * What every CLI command writes to and reads from, passed in so tests run commands in process
 * with their own output, files, environment, clock and HTTP client.
 */

import { readFile } from 'node:fs/promises';

/** The process around a command. */
export interface CliIo {
  /** Writes to standard output, as is (no newline added). */
  stdout(text: string): void;
  /** Writes to standard error, as is (no newline added). */
  stderr(text: string): void;
  /** Whether standard error is a terminal: progress then rewrites one line instead of printing lines. */
  readonly stderrIsTty: boolean;
  readFile(path: string): Promise<string>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly fetch: typeof fetch;
  /** Milliseconds since the epoch; progress rates are measured with it. */
  now(): number;
}

/** Exit codes of every command: also in the program's help and the README. */
export const EXIT = {
  /** Done as asked. */
  ok: 0,
  /** The operation failed, or did only part of what was asked (the message says what). */
  failed: 1,
  /** Bad usage: unknown command or option, missing or invalid argument. */
  usage: 2,
} as const;

/** A usage error found by a command itself (exit 2); its message is one lower-case line. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An operation that failed or did only part of its work (exit 1); the message says what happened. */
export class OperationError extends Error {
  override readonly name = 'OperationError';
}

/** The CLI's view of this process. */
export function processIo(): CliIo {
  return {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stderrIsTty: process.stderr.isTTY,
    readFile: (path) => readFile(path, 'utf8'),
    env: process.env,
    fetch,
    now: () => Date.now(),
  };
}
