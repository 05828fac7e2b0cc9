/**
 * A temporary directory for one test, removed afterwards. What the test opens in it (a store, an
 * engine, a bridge) registers its close with `cleanup` right after it is made; those run first,
 * last made first, so a failing assertion cannot leave a store open on the directory or a bridge
 * running into the next test. A close the test already made runs again: the closes used here do
 * nothing the second time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cleanup } from './teardown.js';

export type TempDirBody = (dir: string, cleanup: Cleanup) => Promise<void>;

export async function withTempDir(prefix: string, fn: TempDirBody): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const closes: (() => unknown)[] = [];
  const errors: unknown[] = [];
  try {
    await fn(dir, (close) => {
      closes.push(close);
    });
  } finally {
    for (const close of closes.reverse()) {
      try {
        await close();
      } catch (error) {
        errors.push(error);
      }
    }
    await rm(dir, { recursive: true, force: true });
  }
  // Reached only when the test passed: then a close that failed fails it.
  if (errors.length > 0) throw errors[0];
}
