/**
 * The admin HTTP API: health and readiness, Prometheus metrics, destinations, messages,
 * subscriptions, bridges, reload, and its own OpenAPI description. Listening anywhere but
 * loopback requires a bearer token; the token is compared in constant time and never logged.
 *
 * Built on fastify: each route's JSON Schemas (routes.ts) validate its requests and make the
 * OpenAPI 3.1 document (openapi.ts); errors keep one shape, `{"error":{"name","message"}}`.
 */
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../jms/logger.js';
import type { AdminServerOptions } from './admin-app.js';
import { DestinationOperations } from './destination-operations.js';
import { isLoopback } from './loopback.js';
import { tokenWeakness, weakTokenMessage } from './token-strength.js';

/** How long closing waits for requests under way before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

export type { AdminServerOptions };

export interface AdminServer {
  /** `http://host:port`. */
  readonly url: string;
  close(): Promise<void>;
}

export { isLoopback };

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const host = options.host ?? '127.0.0.1';
  const logger = options.logger ?? silentLogger;
  if (!isLoopback(host) && !options.token) {
    throw new Error(
      `the admin API listens on '${host}', which is not loopback: set a token (JMS_GATEWAY_ADMIN_TOKEN) or listen on 127.0.0.1`,
    );
  }
  // A token given at all must be one no one can guess, on loopback too.
  const weakness = options.token ? tokenWeakness(options.token) : undefined;
  if (weakness !== undefined) throw new Error(weakTokenMessage('JMS_GATEWAY_ADMIN_TOKEN', weakness));
  const operations = new DestinationOperations(options.engine);
  // The framework loads when a server starts, not with every command of the CLI.
  const { buildAdminApp } = await import('./admin-app.js');
  const app = await buildAdminApp({ ...options, logger }, operations);
  try {
    await app.listen({ port: options.port ?? 8161, host });
  } catch (error) {
    await app.close();
    await operations.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, authenticated: Boolean(options.token) }, 'admin API listening');
  return {
    url,
    async close() {
      // A request under way is answered: a send it made is stored, and its client must hear so.
      // Idle keep-alive connections close now (fastify); one still busy after the grace period is cut.
      const cut = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
      cut.unref();
      await app.close();
      clearTimeout(cut);
      await operations.close();
    },
  };
}
