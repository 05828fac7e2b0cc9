/** The OpenAPI description the admin API serves at `/openapi.json`, built from its route table. */
import type { Route } from './routes.js';

export function openApiDocument(routes: readonly Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {
    '/health': {
      get: {
        summary: 'Liveness: 200 while the process serves requests.',
        security: [],
        responses: { 200: { description: 'alive' } },
      },
    },
    '/ready': {
      get: {
        summary: 'Readiness: 200 once started, 503 while starting or stopping.',
        security: [],
        responses: { 200: { description: 'ready' }, 503: { description: 'not ready' } },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics: destinations, pending by cause, bridges.',
        responses: { 200: { description: 'text/plain exposition format' } },
      },
    },
  };
  for (const route of routes) {
    const parameters = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      parameters,
      ...(route.method === 'POST'
        ? { requestBody: { content: { 'application/json': { schema: { type: 'object' } } } } }
        : {}),
      responses: {
        200: { description: 'done', content: { 'application/json': { schema: { type: 'object' } } } },
        400: {
          description: 'invalid request (bad percent-encoding, body, selector, message, name or option)',
        },
        401: { description: 'missing or wrong bearer token' },
        404: { description: 'no such destination, message, subscription or bridge' },
        409: { description: 'not allowed in the current state' },
        413: { description: 'the request body is larger than 10 MiB (64 KiB for settings)' },
        503: {
          description:
            "the server's condition, not the request's: a full or failing store, a full destination or gateway quota",
        },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title: 'jms-gateway admin API', version: '1' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    security: [{ bearer: [] }],
    paths,
  };
}
