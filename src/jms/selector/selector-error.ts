/**
 * Builds the InvalidSelectorError every stage throws (SEL-5), so all of them read
 * `invalid selector at column 12: expected ... but found ...` with a 1-based column.
 */
import { InvalidSelectorError } from '../errors.js';

/** An InvalidSelectorError for `offset` (0-based) in `selector`. */
export function selectorError(
  selector: string,
  offset: number,
  detail: string,
  cause?: unknown,
): InvalidSelectorError {
  const column = offset + 1;
  return new InvalidSelectorError(
    `invalid selector at column ${column}: ${detail}`,
    selector,
    column,
    cause === undefined ? undefined : { cause },
  );
}
