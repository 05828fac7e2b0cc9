import assert from 'node:assert/strict';
import { StoreError } from '../../src/store/store-error.js';

/** Asserts that `promise` rejects with a StoreError of `kind` whose message matches `pattern`. */
export async function assertRejectsAs(
  promise: Promise<unknown>,
  kind: string,
  pattern: RegExp,
): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError, got ${String(error)}`);
    assert.equal(error.kind, kind);
    assert.match(error.message, pattern);
    return true;
  });
}
