import assert from 'node:assert/strict';
import { StoreError } from '../../src/store/store-error.js';

/**
 * A validator for `assert.rejects`: a StoreError of `kind` whose message matches `pattern` (and,
 * given `not`, does not show that text, such as a password).
 */
export function storeError(kind: string, pattern: RegExp, not?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError, got ${String(error)}`);
    assert.equal(error.kind, kind);
    assert.match(error.message, pattern);
    if (not !== undefined)
      assert.ok(!error.message.includes(not), `the message shows '${not}': ${error.message}`);
    return true;
  };
}

/** Asserts that `promise` rejects with a StoreError of `kind` whose message matches `pattern`. */
export async function assertRejectsAs(
  promise: Promise<unknown>,
  kind: string,
  pattern: RegExp,
): Promise<void> {
  await assert.rejects(promise, storeError(kind, pattern));
}
