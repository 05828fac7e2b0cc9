/**
 * The admin API's routes. Each handler gets the path parameters, the query and a body reader, and
 * returns the JSON to answer with (or throws; errors map to status codes in one place).
 */
import { isDeepStrictEqual } from 'node:util';
import { parseDestination } from '../jms/destination/destination.js';
import type { JmsEngine } from '../jms/engine.js';
import { messageFromJson, messageToJson } from '../jms/message/message-json.js';
import type { BridgeControl } from './bridge-control.js';
import type { DestinationOperations } from './destination-operations.js';
import { parseDestinationRequest } from './destination-request.js';
import { HttpError, expectObject } from './http-util.js';
import { selectorRoute } from './selector-route.js';

/** What a handler sees of a request. */
export interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: () => Promise<unknown>;
}

/** What a route answers, and for a mutation what its audit line says besides who did it. */
export interface RouteResult {
  status?: number;
  body: unknown;
  /** Destination, selector, counts, ...: never message bodies or secrets. */
  audit?: Readonly<Record<string, unknown>>;
}

/** One route: method, path pattern with `{name}` segments, handler, and a one-line summary for the OpenAPI document. */
export interface Route {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  summary: string;
  /** Set on routes that change something: every call is logged as an audit line (`admin action`). */
  action?: AdminAction;
  /** Largest request body, bytes. Default: MAX_BODY_BYTES (10 MiB, for messages). */
  maxBodyBytes?: number;
  handle(context: RouteContext): Promise<RouteResult>;
}

/** The mutations of the admin API, as their audit lines name them. */
export type AdminAction =
  | 'create'
  | 'delete'
  | 'send'
  | 'delete-message'
  | 'move'
  | 'replay'
  | 'delete-subscription'
  | 'pause'
  | 'resume'
  | 'restart'
  | 'reload';

/** What a reload did (`POST /reload`, `jms-gateway reload`). */
export interface ReloadResult {
  /** Whether the new configuration runs now; false: the old one keeps running (see `errors`). */
  reloaded: boolean;
  /** Bridges started because they are new. */
  added: string[];
  /** Bridges stopped (after draining) because they are no longer configured. */
  removed: string[];
  /** Bridges whose configuration changed: drained, stopped and started again, one at a time. */
  restarted: string[];
  /** Bridges left running as they were. */
  unchanged: string[];
  /** Destinations created (`queue://name`). */
  created: string[];
  /** Per restarted bridge, what changed: its fields, `connection 'name'`, or the gateway setting it takes. */
  changes: Record<string, string[]>;
  /** Changes a running gateway does not apply, and what to do about them. */
  warnings: string[];
  /** Why the configuration was not applied: `file:line:col: path: message` for each problem. */
  errors: string[];
}

/** What the routes act on. */
export interface AdminServices {
  engine: JmsEngine;
  operations: DestinationOperations;
  bridges: BridgeControl;
  /** Re-reads the configuration and applies it; the gateway supplies it. */
  reload?: () => Promise<ReloadResult>;
  /** What a reload would do now, without doing it (`reloaded` is false); the gateway supplies it. */
  previewReload?: () => Promise<ReloadResult>;
}

/** Largest body of a request that holds settings rather than a message (64 KiB: far more than any needs). */
const SETTINGS_BODY_BYTES = 64 * 1024;

const destinationName = (params: Record<string, string>) => {
  const kind = params.kind;
  if (kind !== 'queue' && kind !== 'topic')
    throw new HttpError(400, `'${kind}' is not a destination kind (expected queue or topic)`);
  return `${kind}://${params.name}`;
};

const limitOf = (query: URLSearchParams, fallback: number) => {
  const text = query.get('limit');
  if (text === null) return fallback;
  const limit = Number(text);
  if (!Number.isInteger(limit) || limit < 1)
    throw new HttpError(400, `limit '${text}' is not valid (expected an integer >= 1)`);
  return limit;
};

/** Available messages a destination holds, for the audit line; undefined for one without its own (distributed). */
function messagesIn(engine: JmsEngine, destination: string): number | undefined {
  try {
    return engine.destinationStatistics(destination).messagesCurrent;
  } catch {
    return undefined;
  }
}

export function adminRoutes(services: AdminServices): Route[] {
  const { engine, operations, bridges } = services;
  return [
    {
      method: 'GET',
      path: '/destinations',
      summary: 'Every destination with its statistics.',
      handle: () => Promise.resolve({ body: engine.statistics() }),
    },
    {
      method: 'POST',
      path: '/destinations',
      summary: 'Creates a queue or topic: {"kind":"queue","name":"orders","options":{...}}.',
      action: 'create',
      maxBodyBytes: SETTINGS_BODY_BYTES,
      async handle({ body }) {
        const { kind, name, options } = parseDestinationRequest(await body());
        const uri = `${kind}://${name}`;
        const existing = engine.destinationOptions(parseDestination(uri));
        // Creating what exists changes nothing: say so, rather than 201 with settings not applied.
        if (existing) {
          if (!isDeepStrictEqual({ ...existing }, { ...options }))
            throw new HttpError(
              409,
              `destination '${uri}' exists already with other settings: they are not changed here (delete it and create it again, or change them in the configuration and reload)`,
            );
          return { status: 200, body: engine.destinationStatistics(uri), audit: { destination: uri } };
        }
        if (kind === 'queue') await engine.createQueue(name, options);
        else await engine.createTopic(name, options);
        return { status: 201, body: engine.destinationStatistics(uri), audit: { destination: uri } };
      },
    },
    {
      method: 'GET',
      path: '/destinations/{kind}/{name}',
      summary: 'Statistics of one destination.',
      handle: ({ params }) =>
        Promise.resolve({ body: engine.destinationStatistics(destinationName(params)) }),
    },
    {
      method: 'DELETE',
      path: '/destinations/{kind}/{name}',
      summary: 'Deletes a destination and its messages.',
      action: 'delete',
      async handle({ params }) {
        const destination = destinationName(params);
        const messages = messagesIn(engine, destination);
        await engine.deleteDestination(destination);
        return {
          body: { deleted: destination },
          audit: { destination, ...(messages === undefined ? {} : { messages }) },
        };
      },
    },
    {
      method: 'GET',
      path: '/destinations/{kind}/{name}/messages',
      summary: 'Browses available messages of a queue in order (?selector=...&limit=100).',
      handle: ({ params, query }) => {
        const messages = operations.browse(
          destinationName(params),
          query.get('selector'),
          limitOf(query, 100),
        );
        return Promise.resolve({ body: messages.map((m) => messageToJson(m)) });
      },
    },
    {
      method: 'GET',
      path: '/destinations/{kind}/{name}/count',
      summary:
        'Counts the available messages of a queue a browse or move would see (?selector=...): {"count":n}.',
      handle: ({ params, query }) =>
        Promise.resolve({
          body: { count: operations.count(destinationName(params), query.get('selector')) },
        }),
    },
    {
      method: 'POST',
      path: '/destinations/{kind}/{name}/messages',
      summary: 'Sends a message given in the JSON message form.',
      action: 'send',
      async handle({ params, body }) {
        const destination = destinationName(params);
        const messageId = await operations.send(destination, messageFromJson(await body()));
        return { status: 201, body: { messageId }, audit: { destination, messageId, messages: 1 } };
      },
    },
    {
      method: 'DELETE',
      path: '/destinations/{kind}/{name}/messages/{id}',
      summary: 'Deletes one available message by JMSMessageID.',
      action: 'delete-message',
      async handle({ params }) {
        if (!(await operations.deleteMessage(destinationName(params), params.id!))) {
          throw new HttpError(404, `no available message '${params.id}' in '${destinationName(params)}'`);
        }
        return {
          body: { deleted: params.id },
          audit: { destination: destinationName(params), messageId: params.id, messages: 1 },
        };
      },
    },
    {
      method: 'POST',
      path: '/destinations/{kind}/{name}/move',
      summary:
        'Moves messages to another destination, or replays an error destination: {"to":"origin"|"queue://x","selector":...,"limit":...}.',
      action: 'move',
      maxBodyBytes: SETTINGS_BODY_BYTES,
      async handle({ params, body }) {
        const input = expectObject(await body(), 'move');
        if (typeof input.to !== 'string')
          throw new HttpError(400, "to: expected 'origin' or a destination like 'queue://orders'");
        const options: { selector?: string | null; limit?: number } = {};
        if (input.selector !== undefined && input.selector !== null && typeof input.selector !== 'string')
          throw new HttpError(400, 'selector: expected a string');
        if (typeof input.selector === 'string') options.selector = input.selector;
        if (input.limit !== undefined && !(Number.isInteger(input.limit) && (input.limit as number) >= 1))
          throw new HttpError(400, `limit: expected an integer >= 1`);
        if (typeof input.limit === 'number') options.limit = input.limit;
        const destination = destinationName(params);
        const result = await operations.move(destination, input.to, options);
        return {
          body: result,
          audit: {
            // A move back to each message's origin is what `jms-gateway replay` does.
            action: input.to === 'origin' ? 'replay' : 'move',
            destination,
            to: input.to,
            selector: options.selector ?? null,
            ...(options.limit === undefined ? {} : { limit: options.limit }),
            messages: result.moved,
          },
        };
      },
    },
    {
      method: 'GET',
      path: '/subscriptions',
      summary: 'Durable subscriptions, with whether each is active.',
      handle: () => Promise.resolve({ body: engine.durableSubscriptions() }),
    },
    {
      method: 'DELETE',
      path: '/subscriptions/{clientId}/{name}',
      summary: 'Deletes a durable subscription (use "-" for no client id).',
      action: 'delete-subscription',
      handle: ({ params }) => {
        engine.unsubscribe(params.clientId === '-' ? null : params.clientId!, params.name!);
        return Promise.resolve({
          body: { deleted: params.name },
          audit: { clientId: params.clientId, subscription: params.name },
        });
      },
    },
    {
      method: 'GET',
      path: '/bridges',
      summary: 'Every bridge with its status and counters.',
      handle: () => Promise.resolve({ body: bridges.list() }),
    },
    ...(['pause', 'resume', 'restart'] as const).map((action): Route => ({
      method: 'POST',
      path: `/bridges/{name}/${action}`,
      summary: `${action[0]!.toUpperCase()}${action.slice(1)}s one bridge without losing in-flight messages.`,
      action,
      async handle({ params }) {
        if (!bridges.list().some((b) => b.name === params.name))
          throw new HttpError(404, `there is no bridge '${params.name}'`);
        await bridges[action](params.name!);
        const view = bridges.list().find((b) => b.name === params.name);
        return { body: view, audit: { bridge: params.name, bridgeStatus: view?.status } };
      },
    })),
    selectorRoute,
    {
      method: 'GET',
      path: '/reload',
      summary:
        'What a reload would do now, without doing it: the bridges it would add, remove and restart, or the problems of the file (422).',
      async handle() {
        if (!services.previewReload)
          throw new HttpError(501, 'this gateway was started without a configuration file to reload');
        const result = await services.previewReload();
        return { status: result.errors.length === 0 ? 200 : 422, body: result };
      },
    },
    {
      method: 'POST',
      path: '/reload',
      summary:
        'Re-reads the configuration and applies it (200); an invalid one is reported and the old one keeps running (422); 409 while another reload runs.',
      action: 'reload',
      async handle() {
        if (!services.reload)
          throw new HttpError(501, 'this gateway was started without a configuration file to reload');
        const result = await services.reload();
        const { reloaded, added, removed, restarted, created } = result;
        return {
          status: result.reloaded ? 200 : 422,
          body: result,
          audit: { reloaded, added, removed, restarted, created, problems: result.errors.length },
        };
      },
    },
  ];
}
