/**
 * The admin API as a fastify app: each route's JSON Schemas (routes.ts) validate its requests
 * and make the OpenAPI 3.1 document (openapi.ts); token authentication, the error shape
 * `{"error":{"name","message"}}`, audit lines, body limits, /health, /ready, /metrics.
 */
import { timingSafeEqual } from 'node:crypto';
import fastifySwagger from '@fastify/swagger';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { JmsEngine } from '../jms/engine.js';
import type { EngineLogger } from '../jms/logger.js';
import type { StoreUsage } from '../store/store-usage.js';
import { LOOPBACK_CALLER, auditLine, tokenFingerprint } from './audit.js';
import { type BridgeControl, noBridges } from './bridge-control.js';
import { answerClientError } from './client-error.js';
import type { DestinationOperations } from './destination-operations.js';
import { statusOf } from './error-status.js';
import { HttpError, MAX_BODY_BYTES, badSegmentOf, jsonBodyParser, jsonSerializer } from './http-util.js';
import { type HaAdmin, HaStatusSchema, haRoutes } from './ha-routes.js';
import { GatewayMetrics } from './metrics.js';
import { OPENAPI_OPTIONS, openApiDocument } from './openapi.js';
import { type ReadinessReport, readinessReport } from './readiness.js';
import { type AdminAction, type AdminServices, type Route, adminRoutes } from './routes.js';
import { Readiness, SHARED_SCHEMAS, error, ref } from './schemas.js';
import { CONSOLE_HEADERS, CONSOLE_PATH, consoleAsset } from './console-assets.js';
import { validatorCompiler, validationError } from './validation.js';

/** What a standby answers besides the console's files; every other path is the active instance's. */
const STANDBY_PATHS = /^\/(health|ready|metrics|openapi\.json|ha|ha\/step-down|console(\/.*)?)$/;

/** Paths anyone may ask for: a probe has no token. */
const OPEN_PATHS = /^\/(health|ready)$/;
/** The console's files may be read without a token: they hold no data, and the page asks for it. */
const CONSOLE_FILES = /^\/console(\/|$)/;

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
  /** Says what a reload would do without doing it (`GET /reload`); the gateway supplies it. */
  previewReload?: AdminServices['previewReload'];
  /**
   * Whether the gateway is ready to serve (`/ready`: 200, else 503), with the failed bridges that
   * keep it from it. Default: always.
   */
  ready?: () => boolean | ReadinessReport;
  /**
   * Active/standby high availability: adds `/ha` and `/ha/step-down`, the role to `/ready` and the
   * metrics; while this instance is not active, only those routes and `/health` answer.
   */
  ha?: HaAdmin;
  /** The room the store takes and its bound, for the store metrics (the file store's). */
  storeUsage?: () => StoreUsage;
  logger?: EngineLogger;
}

/** What a route's fastify config carries for the audit line of a refused call. */
interface AuditConfig {
  action?: AdminAction;
  path?: string;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on routes that change something: a refused call is audited too. */
    action?: AdminAction;
    /** The route's path pattern as the audit line names it (`/destinations/{kind}/{name}`). */
    path?: string;
  }
}

/**
 * The admin API as a fastify instance, ready and not listening: `startAdminServer` listens with
 * it, and the OpenAPI file is written from it (`npm run lint:openapi`).
 */
export async function buildAdminApp(
  options: AdminServerOptions & { logger: EngineLogger },
  operations: DestinationOperations,
): Promise<FastifyInstance> {
  const { logger } = options;
  const bridges = options.bridges ?? noBridges;
  const services: AdminServices = { engine: options.engine, operations, bridges };
  if (options.reload) services.reload = options.reload;
  if (options.previewReload) services.previewReload = options.previewReload;
  const { ha } = options;
  const routes = [...adminRoutes(services), ...haRoutes(ha)];
  const ready = options.ready ?? (() => true);
  const expected = options.token ? Buffer.from(`Bearer ${options.token}`) : undefined;
  // Only an authorized request reaches a route: with a token, it is that token's holder.
  const caller = options.token ? tokenFingerprint(options.token) : LOOPBACK_CALLER;
  const metrics = new GatewayMetrics(options.engine, () => bridges.list(), {
    runtime: true,
    ...(ha ? { haRole: () => ha.role() } : {}),
    ...(options.storeUsage ? { storeUsage: options.storeUsage } : {}),
  });
  const patterns = [...routes.map((r) => r.path), '/health', '/ready', '/metrics', '/openapi.json'].map(
    compile,
  );

  const app = Fastify({
    logger: false,
    bodyLimit: MAX_BODY_BYTES,
    exposeHeadRoutes: false,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    // Names and message ids are path segments: far longer than fastify's default of 100.
    routerOptions: { maxParamLength: 16 * 1024 },
    clientErrorHandler: answerClientError,
    frameworkErrors: (frameworkError, request, reply) => {
      const status = frameworkError.statusCode ?? 400;
      const segment =
        frameworkError.code === 'FST_ERR_BAD_URL' ? badSegmentOf(request.raw.url ?? '') : undefined;
      const message =
        segment !== undefined
          ? `path segment '${segment}' is not valid percent-encoding (write '%' as '%25')`
          : frameworkError.message;
      void (reply as FastifyReply).code(status).send({ error: { name: 'HttpError', message } });
    },
    schemaErrorFormatter: validationError,
  });
  app.setValidatorCompiler(validatorCompiler(SHARED_SCHEMAS));
  app.setSerializerCompiler(() => jsonSerializer);
  for (const schema of SHARED_SCHEMAS) app.addSchema(schema);
  if (ha) app.addSchema(HaStatusSchema);
  app.removeAllContentTypeParsers();
  // Any content type is read as JSON, as before the framework: clients and curl often send none.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, jsonBodyParser);
  await app.register(fastifySwagger, OPENAPI_OPTIONS);

  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (!expected || OPEN_PATHS.test(path) || (request.method === 'GET' && CONSOLE_FILES.test(path))) return;
    if (authorized(request, expected)) return;
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({
        error: { name: 'Unauthorized', message: 'a bearer token is required: Authorization: Bearer <token>' },
      });
  });

  // A standby serves no destinations or bridges: it has none open (the active instance has them).
  if (ha)
    app.addHook('onRequest', async (request, reply) => {
      if (ha.role() === 'active' || STANDBY_PATHS.test(request.url.split('?')[0]!)) return;
      await reply.code(503).send({
        error: {
          name: 'Standby',
          message: `this instance is ${ha.role()}: the active instance serves destinations and bridges (GET /ha names it)`,
        },
      });
    });

  app.setErrorHandler((thrown: FastifyError, request, reply) => {
    const failure = asHttpError(thrown, request) ?? thrown;
    const status = statusOf(failure);
    const config = request.routeOptions.config as AuditConfig;
    if (config.action !== undefined && config.path !== undefined)
      auditLine(logger, {
        action: config.action,
        path: config.path,
        who: caller,
        request: request.raw,
        params: request.params as Record<string, string>,
        status,
        error: status === 500 ? 'internal error' : failure.message,
      });
    if (status === 500)
      logger.error(
        { err: thrown, method: request.method, path: request.url.split('?')[0] },
        'admin request failed',
      );
    const name = failure.name ?? 'Error';
    const message = status === 500 ? 'internal error: see the gateway log' : failure.message;
    return reply.code(status).send({ error: { name, message } });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const known = patterns.some((pattern) => pattern.test(path));
    const message = known
      ? `method ${request.method} is not allowed on '${path}'`
      : `no such resource '${path}' (see /openapi.json)`;
    return reply.code(known ? 405 : 404).send({ error: { name: 'HttpError', message } });
  });

  app.get(
    '/health',
    {
      schema: {
        operationId: 'health',
        tags: ['gateway'],
        summary: 'Liveness: 200 while the process serves requests.',
        security: [],
        response: {
          200: {
            description: 'Alive.',
            type: 'object',
            properties: { status: { type: 'string', const: 'ok' } },
            required: ['status'],
            additionalProperties: false,
          },
        },
      },
    },
    () => ({ status: 'ok' }),
  );
  app.get(
    '/ready',
    {
      schema: {
        operationId: 'ready',
        tags: ['gateway'],
        summary:
          'Readiness: 200 once started, 503 while starting or stopping or while a required bridge failed.',
        security: [],
        response: {
          200: { ...ref(Readiness), description: 'Ready.' },
          503: {
            ...ref(Readiness),
            description: 'Not ready: starting, stopping, or a required bridge failed.',
          },
        },
      },
    },
    (_request, reply) => {
      const report = withRole(readinessReport(ready()), ha);
      return reply.code(report.ready ? 200 : 503).send(report);
    },
  );
  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'metrics',
        tags: ['gateway'],
        summary:
          'Prometheus metrics: destinations, pending by cause, bridges with latency histograms, the Node process.',
        response: {
          200: {
            description: 'The Prometheus text exposition format.',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          401: error('Missing or wrong bearer token.'),
        },
      },
    },
    async (_request, reply) => {
      const text = await metrics.render();
      return reply.code(200).header('content-type', metrics.contentType).serializer(String).send(text);
    },
  );
  app.get(
    '/openapi.json',
    {
      schema: {
        operationId: 'openApi',
        tags: ['gateway'],
        summary: 'This document: the OpenAPI 3.1 description of the admin API.',
        response: {
          200: { description: 'The OpenAPI document.', type: 'object', additionalProperties: true },
          401: error('Missing or wrong bearer token.'),
        },
      },
    },
    () => openApiDocument(app),
  );

  for (const route of routes) registerRoute(app, route, { logger, caller });
  // The web console: files built into the package, kept out of the API document.
  const serveConsole = (request: FastifyRequest, reply: FastifyReply) => {
    const asset = consoleAsset(request.url.split('?')[0]!);
    if (asset === undefined) return reply.callNotFound();
    return reply.headers(CONSOLE_HEADERS).type(asset.contentType).send(asset.body);
  };
  app.get(CONSOLE_PATH, { schema: { hide: true } }, serveConsole);
  app.get(`${CONSOLE_PATH}/*`, { schema: { hide: true } }, serveConsole);
  await app.ready();
  return app;
}

/** Registers one route: its schemas, its body limit, and the audit line of a mutation. */
function registerRoute(
  app: FastifyInstance,
  route: Route,
  context: { logger: EngineLogger; caller: string },
): void {
  const config: AuditConfig = route.action === undefined ? {} : { action: route.action, path: route.path };
  app.route({
    method: route.method,
    url: route.path.replace(/\{(\w+)\}/g, ':$1'),
    bodyLimit: route.maxBodyBytes ?? MAX_BODY_BYTES,
    config,
    schema: {
      operationId: route.operationId,
      tags: [route.tag],
      summary: route.summary,
      ...route.schema,
    },
    async handler(request: FastifyRequest, reply: FastifyReply) {
      const params = request.params as Record<string, string>;
      const result = await route.handle({
        params,
        query: request.query,
        body: request.body,
      });
      const status = result.status ?? 200;
      if (route.action !== undefined)
        auditLine(context.logger, {
          action: route.action,
          path: route.path,
          who: context.caller,
          request: request.raw,
          params,
          status,
          fields: result.audit,
        });
      return reply.code(status).send(result.body ?? null);
    },
  });
}

/** The framework's own errors (body too large, not JSON, validation) as the API words them. */
function asHttpError(error: FastifyError, request: FastifyRequest): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new HttpError(
      413,
      `request body is larger than ${request.routeOptions.bodyLimit ?? MAX_BODY_BYTES} bytes`,
    );
  if (error.code?.startsWith('FST_ERR_') && error.statusCode !== undefined && error.statusCode < 500)
    return new HttpError(error.statusCode, error.message);
  return undefined;
}

/** Only the active instance of a group is ready; `/ready` says which role this one has. */
function withRole(report: ReadinessReport, ha: HaAdmin | undefined): ReadinessReport {
  if (ha === undefined) return report;
  const role = ha.role();
  if (role === 'active') return { ...report, role };
  return {
    ready: false,
    role,
    reason: `this instance is ${role}: another instance of its group is active, or it is taking over`,
    failed: report.failed,
  };
}

function authorized(request: FastifyRequest, expected: Buffer): boolean {
  const given = Buffer.from(request.headers.authorization ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** `/destinations/{kind}/{name}` → a regular expression; a parameter is one path segment. */
function compile(path: string): RegExp {
  const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{(\w+)\}/g, '[^/]+');
  return new RegExp(`^${source}$`);
}
