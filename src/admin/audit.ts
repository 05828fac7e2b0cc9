/**
 * Audit lines: one `info` line per admin mutation, saying who (a fingerprint of the bearer token,
 * or `loopback` for an API without a token, which only listens on loopback), what (the action,
 * destination, selector, bridge) and how many messages, and how it ended (the HTTP status).
 * Never message bodies or secrets.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { EngineLogger } from '../jms/logger.js';
import type { AdminAction } from './routes.js';

/** Who called when the API has no token: it only listens on loopback then. */
export const LOOPBACK_CALLER = 'loopback';

/**
 * `token:` and the first 12 hex digits of the token's SHA-256: the same token always reads the
 * same, so lines of one caller can be followed, and the token cannot be recovered from it.
 */
export function tokenFingerprint(token: string): string {
  return `token:${createHash('sha256').update(token).digest('hex').slice(0, 12)}`;
}

/** Writes the audit line of one call of a mutating route (its `action`, its `path` pattern). */
export function auditLine(
  logger: EngineLogger,
  entry: {
    readonly action: AdminAction;
    readonly path: string;
    readonly who: string;
    readonly request: IncomingMessage;
    readonly status: number;
    readonly params: Readonly<Record<string, string>>;
    readonly fields?: Readonly<Record<string, unknown>> | undefined;
    readonly error?: string;
  },
): void {
  const { who, request, status, params, fields, error } = entry;
  // What the route said it did; for a failed call, the path's parameters say what it was about.
  const what = fields ?? describeParams(params);
  const action = typeof what.action === 'string' ? what.action : entry.action;
  logger.info(
    {
      audit: true,
      who,
      from: request.socket.remoteAddress,
      method: request.method,
      path: entry.path,
      ...what,
      action,
      status,
      ...(error === undefined ? {} : { error }),
    },
    `admin action: ${action}`,
  );
}

function describeParams(params: Readonly<Record<string, string>>): Record<string, unknown> {
  const { kind, name, ...rest } = params;
  if (kind !== undefined && name !== undefined) return { destination: `${kind}://${name}`, ...rest };
  if (name !== undefined) return { name, ...rest };
  return { ...rest };
}
