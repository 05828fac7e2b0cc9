/**
 * The admin API's routes. Each declares its parameters, query, body and every answer as JSON
 * Schemas (schemas.ts): the server validates requests with them and the OpenAPI document is
 * generated from them. Each handler gets the validated path parameters, query and body, and
 * returns the JSON to answer with (or throws; errors map to status codes in one place).
 */
import { isDeepStrictEqual } from 'node:util';
import { type Static, type TSchema, Type } from 'typebox';
import { parseDestination } from '../jms/destination/destination.js';
import type { JmsEngine } from '../jms/engine.js';
import { messageFromJson, messageToJson } from '../jms/message/message-json.js';
import type { BridgeControl } from './bridge-control.js';
import type { DestinationOperations } from './destination-operations.js';
import { parseDestinationRequest } from './destination-request.js';
import { HttpError } from './http-util.js';
import {
  SELECTOR_BODY_BYTES,
  SelectorAnswerSchema,
  SelectorRequest,
  checkSelector,
} from './selector-route.js';
import {
  Bridge,
  DestinationStatistics,
  DurableSubscription,
  EngineStatistics,
  Kind,
  Message,
  ReloadResult as ReloadResultSchema,
  error,
  ref,
} from './schemas.js';

/** What a route declares of its requests and answers (JSON Schemas). */
export interface RouteSchema {
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** Every answer the route gives, by status. */
  response: Record<number, TSchema>;
}

type StaticOf<T, Fallback> = T extends TSchema ? Static<T> : Fallback;

/** What a handler sees of a request: validated against the route's schema. */
export interface RouteContext<S extends RouteSchema = RouteSchema> {
  params: StaticOf<S['params'], Record<string, string>>;
  query: StaticOf<S['querystring'], Record<string, unknown>>;
  body: StaticOf<S['body'], unknown>;
}

/** What a route answers, and for a mutation what its audit line says besides who did it. */
export interface RouteResult {
  status?: number;
  body: unknown;
  /** Destination, selector, counts, ...: never message bodies or secrets. */
  audit?: Readonly<Record<string, unknown>>;
}

/** One route: method, path pattern with `{name}` segments, schemas, handler, and its OpenAPI summary. */
export interface Route<S extends RouteSchema = RouteSchema> {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The OpenAPI operationId: what a generated client names the call. */
  operationId: string;
  /** OpenAPI tag: destinations, messages, subscriptions, bridges, gateway. */
  tag: string;
  summary: string;
  schema: S;
  /** Set on routes that change something: every call is logged as an audit line (`admin action`). */
  action?: AdminAction;
  /** Largest request body, bytes. Default: MAX_BODY_BYTES (10 MiB, for messages). */
  maxBodyBytes?: number;
  handle(context: RouteContext<S>): Promise<RouteResult>;
}

/** A route, its handler typed by its own schema, in the list of every route. */
function route<S extends RouteSchema>(definition: Route<S>): Route {
  return definition;
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
  | 'reload'
  | 'step-down';

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
  /** Says what a reload would do now, without doing it; the gateway supplies it. */
  previewReload?: () => Promise<ReloadResult>;
}

/** Largest body of a request that holds settings rather than a message (64 KiB: far more than any needs). */
const SETTINGS_BODY_BYTES = 64 * 1024;

const DestinationParams = Type.Object({
  kind: Kind,
  name: Type.String({ description: 'The destination name (percent-encoded in the path).' }),
});
const MessageParams = Type.Object({
  kind: Kind,
  name: Type.String({ description: 'The destination name.' }),
  id: Type.String({ description: 'The JMSMessageID (percent-encoded in the path).' }),
});
const BridgeParams = Type.Object({ name: Type.String({ description: 'The bridge name.' }) });
const Selector = Type.String({
  description: "A message selector (SQL-92, or XPath with xpath('...')); none: every message.",
});
const SelectorQuery = Type.Object({ selector: Type.Optional(Selector) }, { additionalProperties: false });
const BrowseQuery = Type.Object(
  {
    selector: Type.Optional(Selector),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, default: 100, description: 'At most this many messages.' }),
    ),
  },
  { additionalProperties: false },
);
const CreateDestination = Type.Object(
  {
    kind: Kind,
    name: Type.String({
      description: 'The destination name (letters, digits, . _ - / :, at most 255 characters).',
    }),
    options: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Its settings, as under destinations in the configuration file (docs/configuration.md), validated as there.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
const MoveRequest = Type.Object(
  {
    to: Type.String({
      description: "'origin' (replay each to its JMS_ErrorOrigin) or a destination like 'queue://orders'.",
    }),
    selector: Type.Optional(Type.Union([Selector, Type.Null()])),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'At most this many messages.' })),
  },
  { additionalProperties: false },
);
const Deleted = Type.Object(
  { deleted: Type.String({ description: 'What was deleted.' }) },
  { additionalProperties: false, description: 'Deleted.' },
);

/** The answers every route may give besides its own. */
const COMMON_ERRORS = {
  400: error(
    'Invalid request: bad percent-encoding, parameter, query, body, selector, message, name or option.',
  ),
  401: error('Missing or wrong bearer token.'),
};
const NOT_FOUND = { 404: error('No such destination, message, subscription or bridge.') };
const UNAVAILABLE = {
  503: error(
    "The server's condition, not the request's: a full or failing store, a full destination or quota.",
  ),
};
const TOO_LARGE = (limit: string) => ({ 413: error(`The request body is larger than ${limit}.`) });

const destinationName = (params: { kind: string; name: string }) => `${params.kind}://${params.name}`;

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
    route({
      method: 'GET',
      path: '/destinations',
      operationId: 'listDestinations',
      tag: 'destinations',
      summary: 'Every destination with its statistics.',
      schema: {
        response: {
          200: { ...ref(EngineStatistics), description: 'Every destination and the totals.' },
          ...COMMON_ERRORS,
        },
      },
      handle: () => Promise.resolve({ body: engine.statistics() }),
    }),
    route({
      method: 'POST',
      path: '/destinations',
      operationId: 'createDestination',
      tag: 'destinations',
      summary: 'Creates a queue or topic: {"kind":"queue","name":"orders","options":{...}}.',
      action: 'create',
      maxBodyBytes: SETTINGS_BODY_BYTES,
      schema: {
        body: CreateDestination,
        response: {
          200: {
            ...ref(DestinationStatistics),
            description: 'It exists already with these settings: nothing changed.',
          },
          201: { ...ref(DestinationStatistics), description: 'Created.' },
          ...COMMON_ERRORS,
          409: error('It exists already with other settings.'),
          ...TOO_LARGE('64 KiB'),
          ...UNAVAILABLE,
        },
      },
      async handle({ body }) {
        const { kind, name, options } = parseDestinationRequest(body);
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
    }),
    route({
      method: 'GET',
      path: '/destinations/{kind}/{name}',
      operationId: 'getDestination',
      tag: 'destinations',
      summary: 'Statistics of one destination.',
      schema: {
        params: DestinationParams,
        response: {
          200: { ...ref(DestinationStatistics), description: 'Its statistics.' },
          ...COMMON_ERRORS,
          ...NOT_FOUND,
        },
      },
      handle: ({ params }) =>
        Promise.resolve({ body: engine.destinationStatistics(destinationName(params)) }),
    }),
    route({
      method: 'DELETE',
      path: '/destinations/{kind}/{name}',
      operationId: 'deleteDestination',
      tag: 'destinations',
      summary: 'Deletes a destination and its messages.',
      action: 'delete',
      schema: {
        params: DestinationParams,
        response: {
          200: Deleted,
          ...COMMON_ERRORS,
          ...NOT_FOUND,
          409: error('Not allowed now: a topic with subscribers, a destination in use.'),
          ...UNAVAILABLE,
        },
      },
      async handle({ params }) {
        const destination = destinationName(params);
        const messages = messagesIn(engine, destination);
        await engine.deleteDestination(destination);
        return {
          body: { deleted: destination },
          audit: { destination, ...(messages === undefined ? {} : { messages }) },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/destinations/{kind}/{name}/messages',
      operationId: 'browseMessages',
      tag: 'messages',
      summary: 'Browses available messages of a queue in order (?selector=...&limit=100).',
      schema: {
        params: DestinationParams,
        querystring: BrowseQuery,
        response: {
          200: Type.Array(ref(Message), { description: 'The messages, in delivery order.' }),
          ...COMMON_ERRORS,
          ...NOT_FOUND,
        },
      },
      handle: ({ params, query }) => {
        const messages = operations.browse(
          destinationName(params),
          query.selector ?? null,
          query.limit ?? 100,
        );
        return Promise.resolve({ body: messages.map((m) => messageToJson(m)) });
      },
    }),
    route({
      method: 'GET',
      path: '/destinations/{kind}/{name}/count',
      operationId: 'countMessages',
      tag: 'messages',
      summary:
        'Counts the available messages of a queue a browse or move would see (?selector=...): {"count":n}.',
      schema: {
        params: DestinationParams,
        querystring: SelectorQuery,
        response: {
          200: Type.Object(
            { count: Type.Integer({ minimum: 0 }) },
            { additionalProperties: false, description: 'How many.' },
          ),
          ...COMMON_ERRORS,
          ...NOT_FOUND,
        },
      },
      handle: ({ params, query }) =>
        Promise.resolve({
          body: { count: operations.count(destinationName(params), query.selector ?? null) },
        }),
    }),
    route({
      method: 'POST',
      path: '/destinations/{kind}/{name}/messages',
      operationId: 'sendMessage',
      tag: 'messages',
      summary: 'Sends a message given in the JSON message form.',
      action: 'send',
      schema: {
        params: DestinationParams,
        body: ref(Message),
        response: {
          201: Type.Object(
            { messageId: Type.String({ description: 'The JMSMessageID given to the message.' }) },
            { additionalProperties: false, description: 'Sent: stored (persistent) or queued.' },
          ),
          ...COMMON_ERRORS,
          ...NOT_FOUND,
          ...TOO_LARGE('10 MiB'),
          ...UNAVAILABLE,
        },
      },
      async handle({ params, body }) {
        const destination = destinationName(params);
        const messageId = await operations.send(destination, messageFromJson(body));
        return { status: 201, body: { messageId }, audit: { destination, messageId, messages: 1 } };
      },
    }),
    route({
      method: 'DELETE',
      path: '/destinations/{kind}/{name}/messages/{id}',
      operationId: 'deleteMessage',
      tag: 'messages',
      summary: 'Deletes one available message by JMSMessageID.',
      action: 'delete-message',
      schema: {
        params: MessageParams,
        response: { 200: Deleted, ...COMMON_ERRORS, ...NOT_FOUND, ...UNAVAILABLE },
      },
      async handle({ params }) {
        const destination = destinationName(params);
        if (!(await operations.deleteMessage(destination, params.id))) {
          throw new HttpError(404, `no available message '${params.id}' in '${destination}'`);
        }
        return { body: { deleted: params.id }, audit: { destination, messageId: params.id, messages: 1 } };
      },
    }),
    route({
      method: 'POST',
      path: '/destinations/{kind}/{name}/move',
      operationId: 'moveMessages',
      tag: 'messages',
      summary:
        'Moves messages to another destination, or replays an error destination: {"to":"origin"|"queue://x","selector":...,"limit":...}.',
      action: 'move',
      maxBodyBytes: SETTINGS_BODY_BYTES,
      schema: {
        params: DestinationParams,
        body: MoveRequest,
        response: {
          200: Type.Object(
            { moved: Type.Integer({ minimum: 0, description: 'Messages moved.' }) },
            {
              additionalProperties: false,
              description: 'Moved: each batch of up to 500 in one transaction.',
            },
          ),
          ...COMMON_ERRORS,
          ...NOT_FOUND,
          ...TOO_LARGE('64 KiB'),
          ...UNAVAILABLE,
        },
      },
      async handle({ params, body }) {
        const options: { selector?: string | null; limit?: number } = {};
        if (typeof body.selector === 'string') options.selector = body.selector;
        if (body.limit !== undefined) options.limit = body.limit;
        const destination = destinationName(params);
        const result = await operations.move(destination, body.to, options);
        return {
          body: result,
          audit: {
            // A move back to each message's origin is what `jms-gateway replay` does.
            action: body.to === 'origin' ? 'replay' : 'move',
            destination,
            to: body.to,
            selector: options.selector ?? null,
            ...(options.limit === undefined ? {} : { limit: options.limit }),
            messages: result.moved,
          },
        };
      },
    }),
    route({
      method: 'GET',
      path: '/subscriptions',
      operationId: 'listSubscriptions',
      tag: 'subscriptions',
      summary: 'Durable subscriptions, with whether each is active.',
      schema: {
        response: {
          200: Type.Array(ref(DurableSubscription), { description: 'The durable subscriptions.' }),
          ...COMMON_ERRORS,
        },
      },
      handle: () => Promise.resolve({ body: engine.durableSubscriptions() }),
    }),
    route({
      method: 'DELETE',
      path: '/subscriptions/{clientId}/{name}',
      operationId: 'deleteSubscription',
      tag: 'subscriptions',
      summary: 'Deletes a durable subscription (use "-" for no client id).',
      action: 'delete-subscription',
      schema: {
        params: Type.Object({
          clientId: Type.String({ description: 'The client id, or "-" for none.' }),
          name: Type.String({ description: 'The subscription name.' }),
        }),
        response: {
          200: Deleted,
          ...COMMON_ERRORS,
          ...NOT_FOUND,
          409: error('The subscription has an active consumer.'),
          ...UNAVAILABLE,
        },
      },
      handle: ({ params }) => {
        engine.unsubscribe(params.clientId === '-' ? null : params.clientId, params.name);
        return Promise.resolve({
          body: { deleted: params.name },
          audit: { clientId: params.clientId, subscription: params.name },
        });
      },
    }),
    route({
      method: 'GET',
      path: '/bridges',
      operationId: 'listBridges',
      tag: 'bridges',
      summary: 'Every bridge with its status and counters.',
      schema: {
        response: { 200: Type.Array(ref(Bridge), { description: 'The bridges.' }), ...COMMON_ERRORS },
      },
      handle: () => Promise.resolve({ body: bridges.list() }),
    }),
    ...(['pause', 'resume', 'restart'] as const).map((action) =>
      route({
        method: 'POST',
        path: `/bridges/{name}/${action}`,
        operationId: `${action}Bridge`,
        tag: 'bridges',
        summary: `${action[0]!.toUpperCase()}${action.slice(1)}s one bridge without losing in-flight messages.`,
        action,
        schema: {
          params: BridgeParams,
          response: {
            200: { ...ref(Bridge), description: 'The bridge after the change.' },
            ...COMMON_ERRORS,
            ...NOT_FOUND,
            409: error('Not allowed in the bridge’s current state (stopping).'),
          },
        },
        async handle({ params }) {
          if (!bridges.list().some((b) => b.name === params.name))
            throw new HttpError(404, `there is no bridge '${params.name}'`);
          await bridges[action](params.name);
          const view = bridges.list().find((b) => b.name === params.name);
          return { body: view, audit: { bridge: params.name, bridgeStatus: view?.status } };
        },
      }),
    ),
    route({
      method: 'POST',
      path: '/selector',
      operationId: 'checkSelector',
      tag: 'gateway',
      summary:
        'Checks a selector and evaluates it against an optional message (the console’s selector tester); an invalid selector is an answer with its column, not an error.',
      maxBodyBytes: SELECTOR_BODY_BYTES,
      schema: {
        body: SelectorRequest,
        response: {
          200: { ...SelectorAnswerSchema, description: 'Valid or not, and how it evaluated.' },
          ...COMMON_ERRORS,
          ...TOO_LARGE('1 MiB'),
        },
      },
      handle: ({ body }) => Promise.resolve({ body: checkSelector(body.selector, body.message) }),
    }),
    route({
      method: 'GET',
      path: '/reload',
      operationId: 'previewReload',
      tag: 'gateway',
      summary:
        'What a reload would do now, without doing it: the bridges it would add, remove and restart (200), or the problems of the file (422).',
      schema: {
        response: {
          200: { ...ref(ReloadResultSchema), description: 'What would change; nothing was applied.' },
          ...COMMON_ERRORS,
          422: {
            ...ref(ReloadResultSchema),
            description: 'The file has problems (see errors): a reload would not apply it.',
          },
          501: error('The gateway was started without a configuration file to reload.'),
        },
      },
      async handle() {
        if (!services.previewReload)
          throw new HttpError(501, 'this gateway was started without a configuration file to reload');
        const result = await services.previewReload();
        return { status: result.errors.length === 0 ? 200 : 422, body: result };
      },
    }),
    route({
      method: 'POST',
      path: '/reload',
      operationId: 'reload',
      tag: 'gateway',
      summary:
        'Re-reads the configuration and applies it (200); an invalid one is reported and the old one keeps running (422); 409 while another reload runs.',
      action: 'reload',
      schema: {
        response: {
          200: { ...ref(ReloadResultSchema), description: 'Applied.' },
          ...COMMON_ERRORS,
          409: error('Another reload is running.'),
          422: {
            ...ref(ReloadResultSchema),
            description: 'Not applied: the old configuration keeps running (see errors).',
          },
          501: error('The gateway was started without a configuration file to reload.'),
        },
      },
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
    }),
  ];
}
