/**
 * Message id prefixes shared by paged-out messages (PER-4). The engine's ids are a prefix per run
 * followed by the send sequence in base 36, so a paged message need keep only a reference to its
 * run's prefix: the id is rebuilt from it and the sequence when the store is asked for it.
 */

/** Prefixes kept at most: one per run whose messages are still held, so a handful in practice. */
const MAX_PREFIXES = 256;

const prefixes = new Map<string, string>();

/**
 * The one shared copy of `prefix`, or undefined when too many different prefixes are already
 * kept (ids not made by the engine): the caller then keeps the whole id.
 */
export function sharedIdPrefix(prefix: string): string | undefined {
  const shared = prefixes.get(prefix);
  if (shared !== undefined) return shared;
  if (prefixes.size >= MAX_PREFIXES) return undefined;
  prefixes.set(prefix, prefix);
  return prefix;
}
