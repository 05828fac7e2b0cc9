/**
 * The JSON Schemas of the admin API's requests and answers. Fastify validates requests with
 * them, the OpenAPI document is generated from them, and a test checks every answer against
 * them, so the three cannot drift apart. Objects the engine or a bridge may grow (statistics,
 * bridge counters, a bridge's status) allow further properties: a new field is not a breaking
 * change for a client, and the document still names every field there is today.
 */
import { type TSchema, Type } from 'typebox';

/** Every error answer: `{"error":{"name":"HttpError","message":"..."}}`. */
export const ErrorAnswer = Type.Object(
  {
    error: Type.Object(
      {
        name: Type.String({
          description: 'The error class: HttpError, InvalidSelectorError, StoreError, ...',
        }),
        message: Type.String({ description: 'What was wrong, for a person to read.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, $id: 'Error', description: 'An error answer.' },
);

const count = (description: string) => Type.Integer({ minimum: 0, description });

const PendingByCause = Type.Object(
  {
    uncommitted: count('Sent in a transaction not yet committed.'),
    scheduled: count('Waiting for their delivery time.'),
    redeliveryDelay: count('Waiting out a redelivery delay.'),
    unacknowledged: count('Delivered to a consumer and not yet acknowledged or committed.'),
    errorDestinationFull: count('Undeliverable, held for room in a full error destination.'),
  },
  { additionalProperties: Type.Integer({ minimum: 0 }), description: 'Pending by cause.' },
);

const statisticsFields = {
  messagesCurrent: count('Messages available to consumers now.'),
  messagesPending: count('Messages held but not available (all causes).'),
  bytesCurrent: count('Bytes of available messages.'),
  bytesPending: count('Bytes of pending messages.'),
  pendingMessagesByCause: PendingByCause,
  pendingBytesByCause: PendingByCause,
  messagesHighWater: count('Most messages held at once since the gateway started.'),
  bytesHighWater: count('Most bytes held at once since the gateway started.'),
  messagesReceived: count('Messages that entered (a topic: published to it).'),
  messagesAcknowledged: count('Messages acknowledged by consumers.'),
  messagesExpired: count('Messages expired.'),
  consumersCurrent: count('Consumers attached now.'),
};

export const DestinationStatistics = Type.Object(
  {
    destination: Type.String({ description: 'queue://name or topic://name' }),
    kind: Type.Enum(['queue', 'topic']),
    ...statisticsFields,
    subscriptions: Type.Optional(count('Topics only: subscriptions now.')),
  },
  { $id: 'DestinationStatistics', description: 'Statistics of one destination.' },
);

export const EngineStatistics = Type.Object(
  {
    destinations: Type.Array(Type.Ref('DestinationStatistics')),
    totals: Type.Object(statisticsFields, { description: 'Totals over every destination.' }),
  },
  { $id: 'EngineStatistics', description: 'Every destination with its statistics, and the totals.' },
);

const TypedValue = Type.Object(
  {
    type: Type.String({ description: 'boolean, byte, short, int, long, float, double, string, char, bytes' }),
    value: Type.Union([Type.Boolean(), Type.Number(), Type.String()]),
  },
  { description: 'A value of a chosen type; long values are strings so 64 bits survive JSON.' },
);
const Value = Type.Union([Type.Boolean(), Type.Number(), Type.String(), TypedValue]);

export const Message = Type.Object(
  {
    type: Type.Optional(
      Type.Enum(['text', 'xml', 'bytes', 'map', 'stream', 'empty'], {
        description: 'The body type; a string body means text, no body means empty.',
      }),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
        description:
          'JMSMessageID, JMSCorrelationID, JMSType, JMSTimestamp, JMSPriority, JMSDeliveryMode, ...',
      }),
    ),
    properties: Type.Optional(
      Type.Record(Type.String(), Value, {
        description: 'Typed properties: a plain value, or {type, value}.',
      }),
    ),
    body: Type.Optional(
      Type.Union([Type.String(), Type.Null(), Type.Record(Type.String(), Value), Type.Array(Value)], {
        description: 'text and xml: a string; bytes: base64; map: an object; stream: an array.',
      }),
    ),
  },
  {
    $id: 'Message',
    description:
      'A message in its JSON form (see docs/operations.md): lossless for headers, typed properties and body.',
  },
);

export const DurableSubscription = Type.Object(
  {
    clientId: Type.Union([Type.String(), Type.Null()]),
    name: Type.String(),
    topic: Type.String(),
    selector: Type.Union([Type.String(), Type.Null()]),
    active: Type.Boolean({ description: 'Whether a consumer is attached now.' }),
    messages: count('Messages waiting for it.'),
  },
  { $id: 'DurableSubscription', description: 'A durable subscription.' },
);

const Histogram = Type.Object(
  {
    bounds: Type.Array(Type.Number(), { description: 'Upper bounds of the buckets, seconds.' }),
    counts: Type.Array(Type.Integer({ minimum: 0 }), {
      description:
        'Observations per bucket (not cumulative), one more than the bounds: the last is above every bound.',
    }),
    sum: Type.Number({ description: 'Sum of the observations, seconds.' }),
  },
  { description: 'A latency histogram.' },
);

export const Bridge = Type.Object(
  {
    name: Type.String(),
    status: Type.String({
      description: 'stopped, connecting, connected, reconnecting, paused, retrying or failed.',
    }),
    statusReport: Type.Optional(
      Type.Object(
        {
          state: Type.String({ description: 'The status, as `status`.' }),
          reason: Type.Optional(
            Type.String({
              description:
                'Why, for the states that have one: failed (misconfigured, unit-stalled, runtime-error), retrying (retry-delay, back-off, error-destination-unavailable), reconnecting (connection-lost).',
            }),
          ),
          detail: Type.Optional(Type.String({ description: 'What happened, credentials masked.' })),
          since: Type.String({ description: 'Since when the bridge has this state, ISO 8601.' }),
        },
        { description: 'The status with its reason (docs/bridges.md, "Status").' },
      ),
    ),
    counters: Type.Record(Type.String(), Type.Number(), {
      description:
        'in, out, filtered, retried, deadLettered, discarded, dropped, duplicates, reconnects, inFlight, lag, ...',
    }),
    lastError: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'The last failure seen (credentials masked).',
      }),
    ),
    latency: Type.Optional(
      Type.Object(
        { send: Histogram, endToEnd: Histogram },
        {
          description:
            'Send latency, and end-to-end latency from the message timestamp to the target confirming.',
        },
      ),
    ),
    source: Type.Optional(Type.String({ description: "The source, e.g. amqp queue 'orders' (no secrets)." })),
    target: Type.Optional(Type.String({ description: 'The target (no secrets).' })),
  },
  { $id: 'Bridge', description: 'A bridge with its status and counters.' },
);

export const ReloadResult = Type.Object(
  {
    reloaded: Type.Boolean({ description: 'Whether the new configuration runs now.' }),
    added: Type.Array(Type.String()),
    removed: Type.Array(Type.String()),
    restarted: Type.Array(Type.String()),
    unchanged: Type.Array(Type.String()),
    created: Type.Array(Type.String(), { description: 'Destinations created.' }),
    changes: Type.Record(Type.String(), Type.Array(Type.String()), {
      description: 'Per restarted bridge, what changed.',
    }),
    warnings: Type.Array(Type.String()),
    errors: Type.Array(Type.String(), { description: 'Why the configuration was not applied.' }),
  },
  { $id: 'ReloadResult', description: 'What a reload did.' },
);

export const Readiness = Type.Object(
  {
    ready: Type.Boolean(),
    role: Type.Optional(
      Type.Enum(['active', 'standby', 'activating', 'stepping-down', 'stopped'], {
        description: 'With high availability: this instance’s role. Only the active one is ready.',
      }),
    ),
    reason: Type.Optional(Type.String({ description: 'Why it is not ready when no bridge is the cause.' })),
    failed: Type.Array(
      Type.Object({
        bridge: Type.String(),
        status: Type.Literal('failed'),
        reason: Type.String({ description: 'What happened, credentials masked.' }),
        statusReason: Type.Optional(
          Type.String({ description: 'The kind of failure: misconfigured, unit-stalled or runtime-error.' }),
        ),
        since: Type.String({ description: 'ISO 8601.' }),
        readiness: Type.Enum(['required', 'ignored']),
      }),
    ),
  },
  { $id: 'Readiness', description: 'Whether the gateway serves, and which failed bridges keep it from it.' },
);

/** The schemas other schemas refer to by `$id`: added to the server once, listed in the OpenAPI components. */
export const SHARED_SCHEMAS: readonly TSchema[] = [
  ErrorAnswer,
  DestinationStatistics,
  EngineStatistics,
  Message,
  DurableSubscription,
  Bridge,
  ReloadResult,
  Readiness,
];

/** A reference to a shared schema, by its `$id`. */
export const ref = (schema: TSchema & { $id?: string }) => Type.Ref(schema.$id!);

/** An error answer, with what the status means for this route. */
export const error = (description: string) => ({ ...ref(ErrorAnswer), description });

export const Kind = Type.Enum(['queue', 'topic'], { description: 'queue or topic' });
