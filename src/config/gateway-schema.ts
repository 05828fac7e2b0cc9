/**
 * The gateway's configuration schema, composed from the engine's settings and each registered
 * connector's own schema. Field order here is the order of the generated reference.
 */
import { DESTINATION_NAME_PATTERN } from '../jms/destination/destination-name.js';
import { DEFAULT_XPATH_LIMITS } from '../jms/selector/xpath/xpath-limits.js';
import type { FieldSpec } from '../spi/index.js';
import { LOG_LEVELS } from './gateway-config.js';
import { type ConnectorRegistry, INTERNAL_ENDPOINT_TYPE } from '../spi/connector-registry.js';
import type { ObjectNode, SchemaNode, TaggedNode, Variant } from './schema.js';

/** What a destination name may be: the engine's own rule (length, characters), so both refuse the same names. */
export { DESTINATION_NAME_PATTERN };
/** `queue://name` or `topic://name`. */
export const DESTINATION_URI_PATTERN = '^(queue|topic)://[^\\s#]+$';
/** Bridge and connection names: they appear in client ids, metrics labels and admin URLs. */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]*$';

const integer = (description: string, minimum: number, defaultValue?: number): FieldSpec =>
  defaultValue === undefined
    ? { type: 'integer', minimum, description }
    : { type: 'integer', minimum, default: defaultValue, description };

/** A number field that may not be below its sibling `lower` (e.g. a maximum and its minimum). */
const atLeast = (field: FieldSpec, lower: string): FieldSpec => ({ ...field, atLeast: lower }) as FieldSpec;

const string = (description: string, pattern?: string): FieldSpec =>
  pattern === undefined ? { type: 'string', description } : { type: 'string', pattern, description };

const object = (
  description: string,
  fields: Record<string, SchemaNode>,
  extra: Partial<Pick<ObjectNode, 'required' | 'refused' | 'optional'>> = {},
): ObjectNode => ({ type: 'object', description, fields, ...extra });

/** `engine.xpath`: the bounds on XPath work per message (src/jms/selector/xpath/xpath-limits.ts). */
function xpathLimitsNode(): ObjectNode {
  const limits = DEFAULT_XPATH_LIMITS;
  return object(
    'Bounds on XPath selectors per message (SEL-4): a body over a size, depth, element or attribute limit is treated as a body that does not parse, and an evaluation over its step budget likewise, so no XPath selector selects the message (on a queue it stays, for an operator to browse or move). See docs/selectors.md.',
    {
      maxBodyLength: integer('The longest body XPath reads, in characters.', 1, limits.maxBodyLength),
      maxDepth: integer('The deepest element nesting in a body (the root is 1).', 1, limits.maxDepth),
      maxElements: integer('The most elements in a body.', 1, limits.maxElements),
      maxAttributes: integer('The most attributes on one element.', 1, limits.maxAttributes),
      maxSteps: integer(
        'The most node tests one evaluation of one XPath expression may make, for expressions outside the fast path (about a microsecond each).',
        1,
        limits.maxSteps,
      ),
    },
  );
}

/** Every DestinationOptions field (src/jms/destination/destination-options.ts), shared by every destination kind. */
export const DESTINATION_OPTION_FIELDS: Readonly<Record<string, SchemaNode>> = destinationOptionFields();

function destinationOptionFields(): Record<string, SchemaNode> {
  return {
    keys: {
      type: 'array',
      description:
        'Sort order other than priority then send order (DST-1): a list of header or property names with a direction. Default: none.',
      items: object('One sort key.', {
        property: {
          type: 'string',
          required: true,
          description: 'A header (`JMSPriority`, `JMSTimestamp`, ...) or property name.',
        },
        direction: {
          type: 'enum',
          values: ['ascending', 'descending'],
          default: 'ascending',
          description: 'Sort direction.',
        },
      }),
    },
    storeEnabled: {
      type: 'boolean',
      description:
        'Whether PERSISTENT messages are written to the store (PER-4). Default: true (false keeps this destination in memory only).',
    },
    redeliveryDelayOverride: integer(
      "Redelivery delay in ms that wins over the connection factory and session values (DLV-1). -1 or absent: no override (the session's or connection factory's delay applies). Default: absent.",
      -1,
    ),
    redeliveryBackoff: object(
      'Grows the redelivery delay with each redelivery: delay × multiplier^(redeliveries − 1), capped at maximumMs (DLV-1). Default: none (a fixed delay).',
      {
        multiplier: { type: 'number', minimum: 1, required: true, description: 'Growth factor (>= 1).' },
        maximumMs: integer(
          'The delay never exceeds this, ms. Default: none (uncapped: the delay keeps growing).',
          0,
        ),
      },
      { optional: true },
    ),
    redeliveryLimit: integer(
      "Redeliveries before a message is undeliverable, overriding the producer's limit (DLV-2); n allows the first delivery and n redeliveries. -1 or absent: no override (the producer's limit applies; a producer's default is -1, no limit). Default: absent.",
      -1,
    ),
    errorDestination: string(
      'Where undeliverable and redirected expired messages go, `queue://name` or `topic://name` (DLV-3): a queue or topic declared under `destinations` (never created on first use), not the destination itself and not a distributed destination. Default: none (they are deleted, counted and logged).',
      DESTINATION_URI_PATTERN,
    ),
    timeToLiveOverride: integer(
      "Time to live in ms that wins over the producer's (DLV-4); 0 = messages never expire. -1 or absent: no override (the producer's time to live applies). Default: absent.",
      -1,
    ),
    expirationPolicy: object(
      'What happens to expired messages (DLV-4). Default: discard.',
      {
        policy: {
          type: 'enum',
          values: ['discard', 'log', 'redirect'],
          required: true,
          description:
            "'discard' drops them; 'log' logs the JMSMessageID and `fields`; 'redirect' moves them to the error destination.",
        },
        fields: {
          type: 'array',
          description:
            "With 'log': headers and properties to log besides the JMSMessageID (`%header%` = all headers, `%properties%` = all properties).",
          items: { type: 'string', description: 'A header or property name, `%header%` or `%properties%`.' },
        },
      },
      { optional: true },
    ),
    timeToDeliverOverride: {
      type: 'union',
      description:
        "Time to deliver that wins over the producer's (DLV-5): ms after the send, or a schedule (`millisecond second minute hour dayOfMonth month dayOfWeek`, DLV-6). -1: no override. Default: the producer's.",
      variants: [
        { type: 'integer', minimum: -1, description: 'Ms after the send; -1 = no override.' },
        {
          type: 'string',
          description:
            'A schedule, e.g. `0 0 0 2 * * *` (every day at 02:00), or ms after the send written as a string (`"5000"`).',
        },
      ],
    },
    messagesMaximum: integer(
      'Quota: most messages held, current and pending (DLV-7). Default: unlimited.',
      0,
    ),
    bytesMaximum: integer('Quota: most bytes held (DLV-7). Default: unlimited.', 0),
    thresholds: object(
      'Flow control: producers are slowed while the destination holds more than a high threshold, until it holds fewer than the low one; holding exactly a threshold changes nothing (DLV-7). Default: none.',
      {
        messagesHigh: atLeast(
          integer('Messages above which flow control starts (>= messagesLow).', 0),
          'messagesLow',
        ),
        messagesLow: integer('Messages below which it stops. Default: `messagesHigh`.', 0),
        bytesHigh: atLeast(integer('Bytes above which flow control starts (>= bytesLow).', 0), 'bytesLow'),
        bytesLow: integer('Bytes below which it stops. Default: `bytesHigh`.', 0),
        delayMs: integer('How long each send waits while flow control is on, ms. Default 50.', 0),
      },
      { optional: true },
    ),
    unitOfOrderProperty: string(
      "The property naming a message's unit of order (ORD-4). Default `JMSXGroupID`; '' turns units of order off.",
    ),
  };
}

function destinationNode(kind: 'queue' | 'topic'): ObjectNode {
  return object(`A ${kind} and its settings.`, {
    name: {
      type: 'string',
      required: true,
      pattern: DESTINATION_NAME_PATTERN,
      description: `The ${kind} name; bridges and clients address it as \`${kind}://name\`.`,
    },
    ...DESTINATION_OPTION_FIELDS,
  });
}

function distributedNode(kind: 'queue' | 'topic'): ObjectNode {
  return object(`A distributed ${kind} over member ${kind}s (DST-8).`, {
    name: {
      type: 'string',
      required: true,
      pattern: DESTINATION_NAME_PATTERN,
      description: `The distributed ${kind}'s name (\`${kind}://name\`); a member is also \`${kind}://name/member\`.`,
    },
    members: {
      type: 'array',
      required: true,
      description: `The member ${kind}s, created if missing.`,
      items: object('One member.', {
        name: {
          type: 'string',
          required: true,
          pattern: DESTINATION_NAME_PATTERN,
          description: `The member ${kind}'s own name.`,
        },
        weight: integer('Its share of the sends (round-robin or random by weight).', 1, 1),
      }),
    },
    loadBalancing: {
      type: 'enum',
      values: ['round-robin', 'random'],
      default: 'round-robin',
      description: "How a producer picks a member per send: 'round-robin' (weighted) or 'random' (weighted).",
    },
    memberOptions: object(
      'Settings of members this creates (members that already exist keep theirs).',
      DESTINATION_OPTION_FIELDS,
    ),
  });
}

type Role = 'source' | 'sink';

function internalEndpointFields(role: Role): Record<string, SchemaNode> {
  const destination: FieldSpec = {
    type: 'string',
    required: true,
    pattern: DESTINATION_URI_PATTERN,
    description: 'The gateway destination, `queue://name` or `topic://name`.',
  };
  if (role === 'sink')
    return {
      destination,
      sendTimeoutMs: integer(
        'Ms a send waits for room in a full (or throttled) destination before the bridge backs off (DLV-7, DLV-8). Default: `connectionFactory.sendTimeout`.',
        0,
      ),
    };
  return {
    destination,
    durable: object(
      'Read a topic through this durable subscription (DST-3): it keeps messages while the bridge is stopped or the gateway down.',
      {
        clientId: {
          type: 'string',
          required: true,
          description: "The subscription's client id (one bridge at a time may use it).",
        },
        name: { type: 'string', required: true, description: 'The subscription name.' },
      },
      { optional: true },
    ),
    selector: string(
      'A JMS selector the engine applies (BRG-3): on a queue, non-matching messages stay for other consumers; on a topic, the subscription never takes them. Default: none.',
    ),
    session: {
      type: 'enum',
      values: ['client', 'transacted'],
      default: 'client',
      description:
        "'client' acknowledges the longest settled prefix (lets ordering units proceed in parallel); 'transacted' commits once every delivery of a transaction is settled.",
    },
    transactionSize: integer("With session 'transacted': deliveries per transaction.", 1, 10),
  };
}

function endpointNode(role: Role, registry: ConnectorRegistry, description: string): TaggedNode {
  const variants: Record<string, Variant> = {
    [INTERNAL_ENDPOINT_TYPE]: {
      description: "One of the gateway's own queues or topics.",
      fields: internalEndpointFields(role),
    },
  };
  for (const connector of registry.definitions()) {
    variants[connector.type] = {
      description: connector.summary,
      connector,
      connectionRef: true,
      fields: {
        connection: {
          type: 'string',
          pattern: NAME_PATTERN,
          description:
            'A name under `connections`: its settings are used for every field not set here (a field set here wins).',
        },
        ...connector.config.fields,
      },
    };
  }
  return { type: 'tagged', tag: 'type', tagNoun: 'connector type', description, variants };
}

function connectionNode(registry: ConnectorRegistry): TaggedNode {
  const variants: Record<string, Variant> = {};
  for (const connector of registry.definitions())
    variants[connector.type] = {
      description: connector.summary,
      connector,
      fields: connector.config.fields,
    };
  return {
    type: 'tagged',
    tag: 'type',
    tagNoun: 'connector type',
    description:
      "Settings of one broker connection; any field of the connector's endpoints, typically the URL and credentials.",
    variants,
  };
}

const retryDelayNode: TaggedNode = {
  type: 'tagged',
  tag: 'kind',
  tagNoun: 'retry delay kind',
  description:
    'Delay before each retry. Default: exponential, 1000 ms × 2 up to 60000 ms, no jitter (BRG-4, DLV-1).',
  variants: {
    fixed: {
      description: 'The same delay before every retry.',
      fields: { ms: { type: 'integer', minimum: 0, required: true, description: 'The delay, ms.' } },
    },
    exponential: {
      description:
        'initialMs × multiplier^(retry − 1), capped at maxMs, then shortened by up to `jitter` of itself.',
      fields: {
        initialMs: integer('Delay before the first retry, ms.', 0, 1000),
        multiplier: { type: 'number', minimum: 1, default: 2, description: 'Growth factor per retry.' },
        maxMs: atLeast(integer('The delay never exceeds this, ms (>= initialMs).', 0, 60000), 'initialMs'),
        jitter: {
          type: 'number',
          minimum: 0,
          maximum: 1,
          default: 0,
          description:
            'Fraction (0..1) by which each delay may be shortened at random, so units do not retry in step.',
        },
      },
    },
  },
};

function bridgeNode(registry: ConnectorRegistry): ObjectNode {
  return object('A bridge: moves messages from `source` to `target` (BRG-1..7; see docs/bridges.md).', {
    name: {
      type: 'string',
      required: true,
      pattern: NAME_PATTERN,
      description: 'Unique name: in logs, metrics, the admin API and `JMS_ErrorBridge` of what it parks.',
    },
    autoStart: {
      type: 'boolean',
      default: true,
      description: 'Start with the gateway; false leaves it stopped until restarted through the admin API.',
    },
    readiness: {
      type: 'enum',
      values: ['required', 'ignored'],
      default: 'required',
      description:
        "Whether the gateway's readiness (`GET /ready`) depends on this bridge: 'required' answers 503 while it is failed; 'ignored' (a bridge that may be down without the gateway being out of service) lists it but answers 200. Default required.",
    },
    source: { ...endpointNode('source', registry, 'Where messages are read.'), required: true },
    target: { ...endpointNode('sink', registry, 'Where messages are sent.'), required: true },
    errorDestination: endpointNode(
      'sink',
      registry,
      'Where undeliverable (retry limit reached) and poison messages go, with JMS_ErrorOrigin (an internal source destination, so a replay can send them back, else `bridge://<name>`), JMS_ErrorBridge, JMS_ErrorReason, JMS_ErrorDeliveryCount and JMS_ErrorTime (DLV-3, DLV-9). Default: none (see `retry.onLimit`).',
    ),
    qos: {
      type: 'enum',
      values: ['at-most-once', 'at-least-once', 'exactly-once'],
      default: 'at-least-once',
      description:
        "'at-most-once': acknowledged before the send; 'at-least-once': after the target confirmed; 'exactly-once': at-least-once plus a duplicate window of JMSMessageIDs (BRG-2).",
    },
    selector: string(
      'A JMS selector (SQL-92 and XPath, SEL-1..4). On a `jms` source it is the consumer selector (non-matching queue messages stay, BRG-3); on a broker source non-matching messages are acknowledged and counted in `filtered`. Default: none.',
    ),
    ordering: {
      type: 'enum',
      values: ['none', 'bridge', 'key'],
      default: 'bridge',
      description:
        "'none': no order; 'bridge': strict source order; 'key': per source ordering key (Kafka partition, MQTT topic) or per `orderingProperty` (ORD-3, ORD-4).",
    },
    orderingProperty: {
      type: 'string',
      default: 'JMSXGroupID',
      description: "The property naming a message's ordering unit under `ordering: key`.",
    },
    retry: object('Retrying a message the target did not take (BRG-4).', {
      delay: retryDelayNode,
      limit: integer(
        'Retries after the first attempt before a message is undeliverable; -1 = no limit.',
        -1,
        -1,
      ),
      onLimit: {
        type: 'enum',
        values: ['stall', 'drop'],
        default: 'stall',
        description:
          "Without an error destination: 'stall' keeps the message and holds its ordering unit (status failed) until resumed; 'drop' discards it (counted in `discarded`).",
      },
    }),
    batchSize: integer('Source acknowledgements sent together (WebLogic BatchSize).', 1, 1),
    batchIntervalMs: integer(
      'A partial batch of acknowledgements is sent after at most this many ms (WebLogic BatchInterval).',
      0,
      0,
    ),
    sendBatch: object(
      'Batches of messages to a target that takes many at once (AMQP, MQTT, Kafka, jms): a batch goes when full or after its linger. `maxMessages: 1` sends one at a time.',
      {
        maxMessages: integer('Messages in one batch, at most.', 1, 500),
        maxBytes: integer(
          'Bytes in one batch, at most (message size as the engine counts it); a larger message goes alone.',
          1,
          1048576,
        ),
        lingerMs: integer(
          'How long a batch waits for more messages after its first, ms. 0: it goes as soon as the target can take it.',
          0,
          0,
        ),
      },
    ),
    reconnect: object('Delays between connection attempts after a loss on either side (BRG-5).', {
      minMs: integer('Delay before the first attempt, ms.', 0, 15000),
      increaseFactor: {
        type: 'number',
        minimum: 1,
        default: 2,
        description: 'Each further attempt waits this many times longer.',
      },
      maxMs: atLeast(integer('The delay never exceeds this, ms (>= minMs).', 0, 60000), 'minMs'),
    }),
    concurrency: integer('Ordering units sending at the same time.', 1, 1),
    maxInFlight: atLeast(
      integer(
        'Deliveries read and not yet finished, at most (backpressure; >= maxInFlightPerUnit). A send batch holds only what was read: keep it at least twice `sendBatch.maxMessages`.',
        1,
        1000,
      ),
      'maxInFlightPerUnit',
    ),
    maxInFlightPerUnit: integer(
      'Of those, at most this many in one ordering unit. Default: `maxInFlight`.',
      1,
    ),
    stopTimeoutMs: integer(
      'How long stopping lets in-flight messages finish before they are given back to the source, ms. Default: `shutdown.deadlineMs` less a reserve for closing the rest.',
      0,
    ),
    duplicateWindow: object(
      'With exactly-once: the window of JMSMessageIDs already forwarded. Kept in the file or PostgreSQL store, named after the bridge, so it survives a restart (into an engine destination, in the same commit as the message); in memory with `store.memory`. A Kafka target also rebuilds it from the topic at every connect.',
      {
        maxEntries: integer(
          'Most ids kept; the oldest is forgotten first. A Kafka target reads back this many of its last messages per partition at connect.',
          1,
          100000,
        ),
        maxAgeMs: integer(
          'Ids older than this are forgotten, ms; a Kafka target reads back nothing older. Default: no age limit.',
          1,
        ),
      },
    ),
  });
}

/** The root schema of a gateway configuration file, for a registry of connectors. */
export function gatewaySchema(registry: ConnectorRegistry): ObjectNode {
  return object('The jms-gateway configuration file.', {
    store: object('Where durable state goes (PER-1..4).', {
      type: {
        type: 'enum',
        values: ['file', 'memory', 'postgres'],
        description:
          "Default 'file' (or 'memory' with `memory: true`). 'file': the embedded file store at `path`; 'memory': nothing survives a restart (as `memory: true`); 'postgres': tables in a PostgreSQL schema (`url`, `schema`).",
      },
      url: {
        type: 'string',
        secret: true,
        description:
          'With `type: postgres`: the database, `postgres://user:password@host:5432/database`, best from the environment (`url: ${PG_URL}`). Never logged; its password is masked everywhere.',
      },
      schema: {
        type: 'string',
        pattern: '^[A-Za-z_][A-Za-z0-9_]{0,62}$',
        description:
          "With `type: postgres`: the schema that holds the store's tables (default `jms_gateway`), created if missing; it must hold nothing else.",
      },
      migrate: {
        type: 'boolean',
        description:
          'With `type: postgres`: create the schema or apply pending migrations at start (default true). false: start only on a schema at the current version (`jms-gateway store migrate` brings it there).',
      },
      connectAttempts: {
        type: 'integer',
        minimum: 1,
        maximum: 100,
        description:
          'With `type: postgres`: connection attempts at start (default 1) before the gateway gives up, with a doubling pause from 0.5 s (at most 10 s) between them.',
      },
      path: {
        type: 'string',
        default: './data',
        description:
          'Directory of the embedded file store (SQLite, `gateway.db` inside), created if missing; relative to the working directory.',
      },
      memory: {
        type: 'boolean',
        default: false,
        description: 'Keep everything in memory instead: nothing survives a restart.',
      },
      synchronous: {
        type: 'enum',
        values: ['full', 'normal'],
        default: 'full',
        description:
          "'full': every commit is fsynced (survives power loss); 'normal': survives a gateway crash, the last commits may be lost if the machine fails.",
      },
      largeBodyBytes: {
        type: 'integer',
        minimum: 1,
        description:
          'File store: a message body of this many bytes or more (default 131072, 128 KiB) is written to a file of its own beside the database (`gateway.db-bodies/`), off the event loop, so a large message does not stall the gateway while it is stored.',
      },
      maxBytes: {
        type: 'integer',
        minimum: 1048576,
        description:
          'File store: the most bytes its database and its body files may take together (at least 1 MiB; default: no bound but the disk). A commit that would need more fails with a "store is full" error, as on a full disk, and stores nothing: sends to persistent destinations fail until messages are consumed or deleted.',
      },
    }),
    admin: object(
      'The admin HTTP API: health, metrics, destinations, browse and replay, bridge control.',
      {
        enabled: { type: 'boolean', default: true, description: 'Serve the admin API.' },
        host: {
          type: 'string',
          default: '127.0.0.1',
          description:
            'Interface to listen on. Anything but loopback requires a bearer token in the environment variable JMS_GATEWAY_ADMIN_TOKEN.',
        },
        port: {
          type: 'integer',
          minimum: 0,
          maximum: 65535,
          default: 8161,
          description: 'Port; 0 picks a free one. `run --admin-port` overrides it.',
        },
      },
      {
        refused: {
          token:
            'the admin token is never written in the configuration: set the environment variable JMS_GATEWAY_ADMIN_TOKEN',
        },
      },
    ),
    ha: object(
      'Active/standby high availability on the PostgreSQL store: several gateways with this configuration, one active (it holds a lease in the database, runs the bridges and serves the destinations), the others standbys that take over when it dies, hangs or steps down.',
      {
        enabled: {
          type: 'boolean',
          default: false,
          description: 'Run as one of several instances, one active at a time. Needs `store.type: postgres`.',
        },
        group: {
          type: 'string',
          default: 'default',
          description:
            'Instances with the same group share one lease: one gateway of the group is active. Gateways of different groups may share a database schema only if they share nothing else, so give each group its own schema.',
        },
        leaseMs: integer(
          'How long a grant of the lease lasts unless renewed, ms: a standby takes over at most this long (plus claimEveryMs) after the active stopped renewing. An active that could not renew for this long stops on its own.',
          1000,
          6000,
        ),
        renewEveryMs: integer(
          'How often the active renews its lease, ms; less than leaseMs (a third of it lets two renewals fail).',
          100,
          2000,
        ),
        claimEveryMs: integer('How often a standby tries to take the lease, ms.', 100, 1000),
      },
    ),
    shutdown: object('Stopping on SIGINT or SIGTERM (a second signal exits at once).', {
      deadlineMs: integer(
        'How long bridges may drain in-flight messages before the admin API, engine and store close, ms.',
        0,
        10000,
      ),
    }),
    log: object('Logging: JSON lines (pino) on stdout.', {
      level: {
        type: 'enum',
        values: [...LOG_LEVELS],
        default: 'info',
        description:
          "The least severe level written: 'trace', 'debug' (per message, broker client chatter), 'info' (lifecycle, admin actions), 'warn' (recovered problems), 'error' (an operator must act), 'fatal' or 'silent'. The environment variable LOG_LEVEL wins over it, and `run --log-level` over both. Default info.",
      },
      format: {
        type: 'enum',
        values: ['auto', 'json', 'pretty'],
        default: 'auto',
        description:
          "'json': one JSON object per line; 'pretty': coloured lines for a person (pino-pretty); 'auto': pretty when stdout is a terminal and NODE_ENV is not production, JSON otherwise (files, pipes, containers). Default auto.",
      },
    }),
    engine: object('The JMS engine.', {
      autoCreateDestinations: {
        type: 'boolean',
        default: true,
        description:
          'A producer or consumer on an undeclared destination creates it with default settings. With false, bridges must name declared destinations.',
      },
      expirationScanIntervalMs: integer(
        'Ms between active scans for expired messages; 0 disables the scan (DLV-4).',
        0,
        30000,
      ),
      quota: object('Gateway-wide quota over every destination (DLV-7). Default: unlimited.', {
        messagesMaximum: integer('Most messages held. Default: unlimited.', 0),
        bytesMaximum: integer('Most bytes held. Default: unlimited.', 0),
      }),
      throttling: object('Producer throttling (DLV-8).', {
        enabled: { type: 'boolean', default: false, description: 'Turn throttling on.' },
        serverThreshold: integer(
          'Gateway-wide undelivered messages above which throttling may start.',
          0,
          100000,
        ),
        destinationThreshold: atLeast(
          integer(
            'Undelivered messages of a destination above which its producers pause, each send for up to its send timeout (>= lag).',
            0,
            1000,
          ),
          'lag',
        ),
        lag: integer('Throttling stops once the destination is below threshold minus lag.', 0, 100),
      }),
      xpath: xpathLimitsNode(),
    }),
    connectionFactory: object(
      "The gateway's connection factory (`Gateway.connectionFactory` for embedding programs); bridges' internal targets take `sendTimeout` from it.",
      {
        messagesMaximum: integer(
          'Messages in flight to an async consumer, the one being processed included (SES-6).',
          1,
          10,
        ),
        redeliveryDelay: integer(
          'Ms before a rolled-back or recovered message is available again (DLV-1).',
          0,
          0,
        ),
        acknowledgePolicy: {
          type: 'enum',
          values: ['all', 'previous'],
          default: 'all',
          description: "What acknowledge() covers in CLIENT_ACKNOWLEDGE mode: 'all' or 'previous' (SES-2).",
        },
        sendTimeout: integer(
          'Ms a send blocked by a full destination, or paused by throttling, waits before it fails (DLV-7, DLV-8); 0 fails at once.',
          0,
          10000,
        ),
        applicationId: {
          type: 'string',
          pattern: '\\S',
          description:
            'JMSXAppID of every message sent through this factory (MSG-2). Default: none. (Bridges name themselves: what a bridge writes to a gateway destination has the bridge name as JMSXAppID.)',
        },
      },
    ),
    security: object('Who connects to the engine (MSG-2).', {
      users: {
        type: 'array',
        description:
          "Users that `Gateway.connectionFactory.createConnection(user, password)` may name; a wrong user or password is refused with a JMSSecurityError. A connection's user is the JMSXUserID of what it sends. Connections naming no user (bridges among them) stay anonymous. Default: no list, so a named user is taken as given.",
        items: object('One user.', {
          name: {
            type: 'string',
            required: true,
            pattern: '^\\S+$',
            description: 'The user name, as JMSXUserID shows it.',
          },
          password: {
            type: 'string',
            required: true,
            secret: true,
            fromEnvironment: true,
            description:
              'The password, from an environment variable only: `password: ${ORDERS_PASSWORD}`. Never logged.',
          },
        }),
      },
    }),
    destinations: object('Destinations created at start (existing ones, e.g. from the store, are kept).', {
      queues: { type: 'array', description: 'Queues (DST-1).', items: destinationNode('queue') },
      topics: { type: 'array', description: 'Topics (DST-2).', items: destinationNode('topic') },
      distributedQueues: {
        type: 'array',
        description: 'Distributed queues (DST-8).',
        items: distributedNode('queue'),
      },
      distributedTopics: {
        type: 'array',
        description: 'Distributed topics (DST-8).',
        items: distributedNode('topic'),
      },
    }),
    connections: {
      type: 'map',
      keyPattern: NAME_PATTERN,
      description:
        'Named broker connections that endpoints reuse with `connection: <name>` (URL and credentials in one place).',
      values: connectionNode(registry),
    },
    bridges: { type: 'array', description: 'Bridges (BRG-1..7).', items: bridgeNode(registry) },
  });
}
