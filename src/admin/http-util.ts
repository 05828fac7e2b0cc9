/** Small HTTP helpers for the admin API: JSON bodies with a size limit, errors mapped to status codes. */
import type { IncomingMessage, ServerResponse } from 'node:http';

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

/** Reads a JSON request body (at most `maxBytes`); an empty body reads as `{}`. */
export async function readJson(request: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const text = (await readBody(request, maxBytes)).toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, `request body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * The body, up to `maxBytes`. Past that the rest is read and dropped, not kept, and the request
 * is answered 413: cutting the connection instead would leave the client without the answer.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      request.off('data', onData);
      request.resume();
      reject(new HttpError(413, `request body is larger than ${maxBytes} bytes`));
    };
    request.on('data', onData);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export function sendText(response: ServerResponse, status: number, contentType: string, text: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** A JSON object body, or a 400. */
export function expectObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, `${what}: expected a JSON object`);
  return value as Record<string, unknown>;
}
