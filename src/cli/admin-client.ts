/**
 * The admin API as the CLI commands call it. The address comes from `--url` or
 * JMS_GATEWAY_ADMIN_URL (default http://127.0.0.1:8161); the token only from
 * JMS_GATEWAY_ADMIN_TOKEN, never from the command line where other users could see it.
 */
import type { CliIo } from './cli-io.js';

/** Where the admin API is when neither `--url` nor JMS_GATEWAY_ADMIN_URL says. */
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8161';

/** An answer of the admin API that is an error: its status and message. */
export class AdminApiError extends Error {
  override readonly name = 'AdminApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** Requests to one gateway's admin API, with its token when there is one; errors say how to fix them. */
export class AdminClient {
  readonly #base: string;
  readonly #token: string | undefined;
  readonly #fetch: typeof fetch;

  constructor(url: string | undefined, io: Pick<CliIo, 'env' | 'fetch'>) {
    this.#base = (url ?? io.env.JMS_GATEWAY_ADMIN_URL ?? DEFAULT_ADMIN_URL).replace(/\/+$/, '');
    this.#token = io.env.JMS_GATEWAY_ADMIN_TOKEN;
    this.#fetch = io.fetch;
  }

  /** JSON of a 2xx answer, or of an answer with one of the `accepted` statuses; throws otherwise. */
  async request(method: string, path: string, body?: unknown, accepted: number[] = []): Promise<unknown> {
    let response: Response;
    try {
      response = await this.#fetch(`${this.#base}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new Error(
        `cannot reach the gateway's admin API at ${this.#base}: ${(error as Error).message} (start the gateway, or set --url / JMS_GATEWAY_ADMIN_URL)`,
      );
    }
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text ? (JSON.parse(text) as unknown) : null;
    } catch {
      if (response.ok) throw new Error(`${method} ${path} answered ${response.status} with no JSON: ${text}`);
    }
    if (!response.ok && !accepted.includes(response.status)) {
      const message = (json as { error?: { message?: string } } | null)?.error?.message ?? text;
      const hint = response.status === 401 ? ' (set JMS_GATEWAY_ADMIN_TOKEN)' : '';
      throw new AdminApiError(
        `${method} ${path} failed with ${response.status}: ${message}${hint}`,
        response.status,
      );
    }
    return json;
  }
}

/** A destination named on the command line: `queue://x` or `topic://x`, and a bare name is a queue. */
export function parseNamed(destination: string): { kind: string; name: string } {
  const match = /^(queue|topic):\/\/(.+)$/.exec(destination);
  return match ? { kind: match[1]!, name: match[2]! } : { kind: 'queue', name: destination };
}

/** `queue://x`, `topic://x`, or a bare queue name → `queue://x`. */
export function addressOf(destination: string): string {
  const { kind, name } = parseNamed(destination);
  return `${kind}://${name}`;
}

/** The API path of a destination: `/destinations/queue/orders`. */
export function destinationPath(destination: string): string {
  const { kind, name } = parseNamed(destination);
  return `/destinations/${kind}/${encodeURIComponent(name)}`;
}
