/** Small HTTP helpers for the admin API: errors with a status, JSON bodies in and out. */
import type { FastifyRequest } from 'fastify';

/** An error with the HTTP status to answer with. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/** Largest request body by default, in bytes: a message to send may be this large. */
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Reads a request body as JSON, whatever content type it says (curl and many clients send
 * none); an empty body reads as `{}`. A route that takes no body ignores whatever came.
 */
export function jsonBodyParser(
  request: FastifyRequest,
  body: Buffer,
  done: (error: Error | null, body?: unknown) => void,
): void {
  if (request.routeOptions.schema?.body === undefined) return done(null, undefined);
  const text = body.toString('utf8').trim();
  if (text === '') return done(null, {});
  try {
    done(null, JSON.parse(text) as unknown);
  } catch (error) {
    done(new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`));
  }
}

/** Answers as JSON; a 64-bit integer (bigint) is written as its decimal string. */
export function jsonSerializer(body: unknown): string {
  return JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

/** The first segment of a request path that is not valid percent-encoding, if any. */
export function badSegmentOf(url: string): string | undefined {
  for (const segment of url.split('?')[0]!.split('/')) {
    try {
      decodeURIComponent(segment);
    } catch {
      return segment;
    }
  }
  return undefined;
}
