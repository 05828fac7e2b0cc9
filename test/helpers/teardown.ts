/**
 * Cleanup that runs however a test ends: each resource registers its cleanup right after it is
 * made, and they run after the test, last made first (as nested `finally` blocks would), so a
 * failing assertion cannot leave a server, an engine, a store or a temp dir open for the next
 * test. A cleanup that fails does not stop the others; the first failure fails the test.
 */
import type { TestContext } from 'node:test';

export type Cleanup = (close: () => unknown) => void;

export function teardown(context: TestContext): Cleanup {
  const cleanups: (() => unknown)[] = [];
  context.after(async () => {
    const errors: unknown[] = [];
    for (const close of cleanups.reverse()) {
      try {
        await close();
      } catch (error) {
        errors.push(error);
      }
    }
    if (errors.length > 0) throw errors[0];
  });
  return (close) => {
    cleanups.push(close);
  };
}
