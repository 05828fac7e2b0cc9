/**
 * Calls to the admin API with the bearer token the operator gave once: kept in sessionStorage
 * (gone when the tab closes) and sent as an Authorization header; no cookie, so no other site can
 * make the browser call the API on the operator's behalf.
 */

const TOKEN_KEY = 'jms-gateway.admin-token';

/** A failed call, with the message the gateway gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string): void => sessionStorage.setItem(TOKEN_KEY, value),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

/** Called when the gateway refuses the token (or wants one): the page asks for it again. */
let onUnauthorized: (message: string) => void = () => undefined;
export function whenUnauthorized(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

/**
 * `method path` with an optional JSON body; resolves to the JSON answer. Statuses in `accept`
 * (besides 2xx) resolve too (a refused reload answers 422 with its problems).
 */
export async function api<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  accept: number[] = [],
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const given = token.get();
  if (given) headers.authorization = `Bearer ${given}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: 'omit',
      cache: 'no-store',
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new ApiError(0, `the gateway does not answer (${(error as Error).message}): is it running?`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (response.status === 401) {
    const message = given
      ? 'The gateway did not accept this token: give the value of JMS_GATEWAY_ADMIN_TOKEN the gateway was started with.'
      : 'This gateway needs its admin token (JMS_GATEWAY_ADMIN_TOKEN).';
    token.clear();
    onUnauthorized(message);
    throw new ApiError(401, message);
  }
  if (response.ok || accept.includes(response.status)) return json as T;
  const message =
    (json as { error?: { message?: string } } | undefined)?.error?.message ??
    `${response.status} ${response.statusText}`;
  throw new ApiError(response.status, message, json);
}

/** A path segment, percent-encoded. */
export const segment = (value: string): string => encodeURIComponent(value);
