/**
 * The admin HTTP API: health and readiness, Prometheus metrics, destinations, messages,
 * subscriptions, bridges, reload, and its own OpenAPI description. Listening anywhere but
 * loopback requires a bearer token; the token is compared in constant time and never logged.
 */
import { timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { JmsEngine } from '../jms/engine.js';
import { type EngineLogger, silentLogger } from '../jms/logger.js';
import { LOOPBACK_CALLER, auditLine, tokenFingerprint } from './audit.js';
import { type BridgeControl, noBridges } from './bridge-control.js';
import { DestinationOperations } from './destination-operations.js';
import { type ConsoleAsset, CONSOLE_HEADERS, consoleAsset } from './console-assets.js';
import { statusOf } from './error-status.js';
import { HttpError, readJson, sendJson, sendText } from './http-util.js';
import { isLoopback } from './loopback.js';
import { renderMetrics } from './metrics.js';
import { tokenWeakness, weakTokenMessage } from './token-strength.js';
import { openApiDocument } from './openapi.js';
import { type ReadinessReport, readinessReport } from './readiness.js';

/** How long closing waits for requests under way before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;
import { type AdminServices, type RouteResult, adminRoutes } from './routes.js';

export interface AdminServerOptions {
  engine: JmsEngine;
  /** Interface to listen on. Default 127.0.0.1. */
  host?: string;
  /** Port; 0 picks a free one. Default 8161. */
  port?: number;
  /** Bearer token; required when `host` is not a loopback address. */
  token?: string | undefined;
  bridges?: BridgeControl;
  reload?: AdminServices['reload'];
  previewReload?: AdminServices['previewReload'];
  /**
   * Whether the gateway is ready to serve (`/ready`: 200, else 503), with the failed bridges that
   * keep it from it. Default: always.
   */
  ready?: () => boolean | ReadinessReport;
  logger?: EngineLogger;
}

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
  const bridges = options.bridges ?? noBridges;
  const services: AdminServices = { engine: options.engine, operations, bridges };
  if (options.reload) services.reload = options.reload;
  if (options.previewReload) services.previewReload = options.previewReload;
  const routes = adminRoutes(services);
  const matchers = routes.map((route) => ({ route, pattern: compile(route.path) }));
  const ready = options.ready ?? (() => true);
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;
  // Only an authorized request reaches a route: with a token, it is that token's holder.
  const caller = options.token ? tokenFingerprint(options.token) : LOOPBACK_CALLER;

  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const url = requestUrl(request);
    if (url.pathname === '/health') return sendJson(response, 200, { status: 'ok' });
    const asset = request.method === 'GET' ? consoleAsset(url.pathname) : undefined;
    if (asset) return sendAsset(response, asset);
    if (url.pathname === '/ready') {
      const report = readinessReport(ready());
      return sendJson(response, report.ready ? 200 : 503, report);
    }
    if (expected && !authorized(request, expected)) {
      response.setHeader('www-authenticate', 'Bearer');
      return sendJson(response, 401, {
        error: { name: 'Unauthorized', message: 'a bearer token is required: Authorization: Bearer <token>' },
      });
    }
    if (request.method === 'GET' && url.pathname === '/metrics') {
      return sendText(
        response,
        200,
        'text/plain; version=0.0.4; charset=utf-8',
        renderMetrics(options.engine, bridges.list()),
      );
    }
    if (request.method === 'GET' && url.pathname === '/openapi.json')
      return sendJson(response, 200, openApiDocument(routes));
    for (const { route, pattern } of matchers) {
      const match = pattern.exec(url.pathname);
      if (!match) continue;
      if (route.method !== request.method) continue;
      const params = Object.fromEntries(
        Object.entries(match.groups ?? {}).map(([k, v]) => [k, decodeSegment(v)]),
      );
      const context = { params, query: url.searchParams, body: () => readJson(request, route.maxBodyBytes) };
      if (route.action === undefined) {
        const result = await route.handle(context);
        return sendJson(response, result.status ?? 200, result.body ?? null);
      }
      const audited = { action: route.action, path: route.path, who: caller, request, params };
      let result: RouteResult;
      try {
        result = await route.handle(context);
      } catch (error) {
        const status = statusOf(error);
        auditLine(logger, {
          ...audited,
          status,
          error: status === 500 ? 'internal error' : messageOf(error),
        });
        throw error;
      }
      const status = result.status ?? 200;
      auditLine(logger, { ...audited, status, fields: result.audit });
      return sendJson(response, status, result.body ?? null);
    }
    const known = matchers.some(({ pattern }) => pattern.test(url.pathname));
    throw new HttpError(
      known ? 405 : 404,
      known
        ? `method ${request.method} is not allowed on '${url.pathname}'`
        : `no such resource '${url.pathname}' (see /openapi.json)`,
    );
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const status = statusOf(error);
      const name = (error as Error).name ?? 'Error';
      const message = status === 500 ? 'internal error: see the gateway log' : (error as Error).message;
      if (status === 500)
        logger.error(
          { err: error, method: request.method, path: request.url?.split('?')[0] },
          'admin request failed',
        );
      if (!response.headersSent) sendJson(response, status, { error: { name, message } });
      else response.end();
    });
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => answerClientError(error, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8161, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
  logger.info({ url, authenticated: Boolean(expected) }, 'admin API listening');
  return {
    url,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A request under way is answered: a send it made is stored, and its client must hear so.
      // Idle keep-alive connections close now; one still busy after the grace period is cut.
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
      cut.unref();
      await closed;
      clearTimeout(cut);
      await operations.close();
    },
  };
}

/** A console file: public like /health, as it holds no data; the page asks for the token itself. */
function sendAsset(response: ServerResponse, asset: ConsoleAsset): void {
  response.writeHead(200, {
    ...CONSOLE_HEADERS,
    'content-type': asset.contentType,
    'content-length': asset.body.length,
  });
  response.end(asset.body);
}

function authorized(request: IncomingMessage, expected: Buffer): boolean {
  const given = Buffer.from(request.headers.authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A request the HTTP parser refused (malformed, headers too large) gets a JSON error like any
 * other bad request, instead of Node's bare 400.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify({
    error: {
      name: 'HttpError',
      message: tooLarge
        ? 'the request headers are too large'
        : `the request is not valid HTTP (${error.code ?? 'parse error'})`,
    },
  });
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** The request's URL; one that does not parse is the client's mistake. */
function requestUrl(request: IncomingMessage): URL {
  try {
    return new URL(request.url ?? '/', 'http://admin');
  } catch {
    throw new HttpError(400, `'${request.url ?? ''}' is not a valid request path`);
  }
}

/** A path parameter, percent-decoded; a malformed escape (`%ZZ`, a cut UTF-8 sequence) is a 400. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, `path segment '${segment}' is not valid percent-encoding (write '%' as '%25')`);
  }
}

/** `/destinations/{kind}/{name}` → a regular expression with named groups; a parameter is one path segment. */
function compile(path: string): RegExp {
  const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)');
  return new RegExp(`^${source}$`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
