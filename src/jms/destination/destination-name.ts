/**
 * What a destination name may be, in one place: the engine checks every name it creates
 * (declared, created through the admin API or an embedding program, or on first use), and the
 * configuration schema uses the same pattern, so all of them refuse the same names. Names appear
 * in metrics labels, log lines, URLs and store keys, so they are short and printable.
 */
import { InvalidDestinationError } from '../errors.js';

/** Longest destination name, in characters. */
export const MAX_DESTINATION_NAME_LENGTH = 200;

/**
 * A destination name as a regular expression: 1 to {@link MAX_DESTINATION_NAME_LENGTH}
 * characters, none of them white space, '#', '/' (it names a member of a distributed destination)
 * or a control character.
 */
export const DESTINATION_NAME_PATTERN = `^[^\\s#/\\x00-\\x1f\\x7f]{1,${MAX_DESTINATION_NAME_LENGTH}}$`;

const VALID = new RegExp(DESTINATION_NAME_PATTERN);

/** Returns `name` if it is a valid destination name; throws an InvalidDestinationError saying why not. */
export function checkDestinationName(name: unknown): string {
  if (typeof name === 'string' && VALID.test(name)) return name;
  const shown = typeof name === 'string' && name.length > 40 ? `${name.slice(0, 40)}...` : String(name);
  const length =
    typeof name === 'string' && name.length > MAX_DESTINATION_NAME_LENGTH
      ? ` (${name.length} characters)`
      : '';
  throw new InvalidDestinationError(
    `destination name '${shown}'${length} is not valid (expected 1 to ${MAX_DESTINATION_NAME_LENGTH} characters without spaces, control characters, '#' or '/'; a name with '/' names a member of a distributed destination)`,
  );
}
