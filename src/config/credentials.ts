/**
 * Credentials inside values and text: the password of a URL's user info and the value of a
 * secret-looking query parameter. Only these are masked in a URL, never its host and port, so a
 * log line still says which broker could not be reached.
 */

/** `scheme://user:password@`: the password runs to the last `@` before the host (an unencoded `@` in it is common). */
const URL_USER_INFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#'"\\]*):([^\s/?#'"\\]+)@/gi;

/** Names of query parameters that carry credentials. */
const SECRET_PARAMETER = 'password|passwd|pwd|pass|token|access_token|auth|secret|api[_-]?key';

/** `?password=...`, `&token=...`. */
const SECRET_QUERY = new RegExp(`([?&](?:${SECRET_PARAMETER})=)[^&\\s#'"\\\\]+`, 'gi');
const SECRET_PARAMETER_NAME = new RegExp(`^(?:${SECRET_PARAMETER})$`, 'i');

const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The mask that replaces a credential. */
export const MASK = '***';

/** `amqp://user:pw@host:5672` → `amqp://user:***@host:5672`, and secret query values → `***`, anywhere in `text`. */
export function maskUrlCredentials(text: string): string {
  if (!text.includes('://') && !text.includes('=')) return text;
  return text.replace(URL_USER_INFO, `$1$2:${MASK}@`).replace(SECRET_QUERY, `$1${MASK}`);
}

/**
 * The parts of a value declared secret that must never be shown: a URL's password and secret
 * query values (as written and decoded), or the whole value when it is not a URL. A URL without
 * credentials has nothing secret: its host and port stay visible.
 */
export function credentialsIn(value: string): string[] {
  if (!URL_LIKE.test(value)) return [value];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not parseable as a URL after all: treat it as an opaque secret.
    return [value];
  }
  const found: string[] = [];
  const add = (raw: string) => {
    if (raw === '') return;
    found.push(raw);
    try {
      found.push(decodeURIComponent(raw));
    } catch {
      // a malformed escape: the raw form is what shows anyway
    }
  };
  add(url.password);
  // The WHATWG parser re-encodes some characters: the password as written counts too.
  const written = /^[a-z][a-z0-9+.-]*:\/\/[^\s:@/?#]*:([^\s/?#]+)@/i.exec(value)?.[1];
  if (written !== undefined) add(written);
  for (const [name, parameter] of url.searchParams) if (SECRET_PARAMETER_NAME.test(name)) add(parameter);
  return [...new Set(found)];
}
