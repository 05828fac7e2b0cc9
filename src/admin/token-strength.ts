/**
 * What makes an admin token acceptable. A token guards every mutation of the gateway (sends,
 * deletes, replays, reloads), so it must be one that cannot be guessed, and one an HTTP client
 * can send: `Authorization: Bearer <token>` carries visible ASCII only, and a header's leading
 * and trailing white space is dropped, so a token of one space could never authenticate.
 */

/** Fewest characters a token may have. */
export const MIN_TOKEN_LENGTH = 16;
/** Least estimated strength, in bits (`openssl rand -hex 16` gives 128 random bits, ~165 by this estimate). */
export const MIN_TOKEN_BITS = 96;
/** Fewest different characters: a long run of one character is not a secret. */
const MIN_DISTINCT = 8;

/** How to make a good token, for every refusal. */
export const MAKE_TOKEN = 'make one with: openssl rand -hex 16';

const CLASSES: readonly [RegExp, number][] = [
  [/[a-z]/, 26],
  [/[A-Z]/, 26],
  [/[0-9]/, 10],
  [/[^a-zA-Z0-9]/, 32],
];

/**
 * Why `token` is not acceptable, or undefined when it is. The reason never holds the token: it
 * may end up in a log.
 */
export function tokenWeakness(token: string): string | undefined {
  if (!/^[\x21-\x7e]*$/.test(token))
    return 'it holds white space, control characters or characters outside ASCII, which an Authorization header cannot carry as they are';
  if (token.length < MIN_TOKEN_LENGTH)
    return `it has ${token.length} character${token.length === 1 ? '' : 's'}, at least ${MIN_TOKEN_LENGTH} are needed`;
  const distinct = new Set(token).size;
  const pool = CLASSES.filter(([pattern]) => pattern.test(token)).reduce((sum, [, size]) => sum + size, 0);
  const bits = Math.floor(token.length * Math.log2(pool));
  if (distinct < MIN_DISTINCT || bits < MIN_TOKEN_BITS)
    return `it is too easy to guess (${distinct} different characters, about ${bits} bits; at least ${MIN_DISTINCT} different characters and ${MIN_TOKEN_BITS} bits are needed: use more characters, or more kinds of them)`;
  return undefined;
}

/** The whole refusal: which setting, why, and how to make a good one. */
export function weakTokenMessage(variable: string, weakness: string): string {
  return `the admin token in ${variable} is not strong enough: ${weakness}; ${MAKE_TOKEN}`;
}
