/**
 * The PostgreSQL store's connection URL is a secret: it may hold a password. Everything the store
 * says about where it connects (log lines, error messages) goes through here, so the password is
 * never shown; the URL itself is handed only to the client library.
 */

/** A URL with its password replaced by `***`; text that is not a URL is shown as `(unparsable URL)`. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(unparsable URL)';
  }
  if (parsed.password !== '') parsed.password = '***';
  // Query parameters may carry a password too (`?password=...`).
  for (const key of [...parsed.searchParams.keys()])
    if (/pass|secret|key/i.test(key)) parsed.searchParams.set(key, '***');
  return parsed.toString();
}

/** The password and other secrets a URL holds, to scrub from text that may repeat them. */
export function secretsOfUrl(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url === '' ? [] : [url];
  }
  const secrets: string[] = [];
  if (parsed.password !== '') secrets.push(parsed.password, decodeURIComponent(parsed.password));
  for (const [key, value] of parsed.searchParams)
    if (/pass|secret|key/i.test(key) && value !== '') secrets.push(value);
  return secrets;
}

/** `text` with every secret of `url` replaced by `***`. */
export function scrubSecrets(text: string, url: string): string {
  let scrubbed = text;
  for (const secret of secretsOfUrl(url))
    if (secret.length > 0) scrubbed = scrubbed.split(secret).join('***');
  return scrubbed;
}

/** Checks the URL's form before any connection is tried: a clear error instead of a driver's. */
export function checkPostgresUrl(url: unknown): string {
  if (typeof url !== 'string' || url === '')
    throw new TypeError('postgres store needs a url (postgres://user@host:port/database)');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TypeError('postgres store url is not a URL: expected postgres://user@host:port/database');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:')
    throw new TypeError(
      `postgres store url must start with postgres:// or postgresql:// (got ${parsed.protocol}//): ${redactUrl(url)}`,
    );
  return url;
}
