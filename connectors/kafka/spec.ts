/**
 * The configuration of a Kafka endpoint (source or sink): one schema, every field described with
 * its default, plus the cross-field checks the schema language cannot express.
 */
import { CARRIED_HEADERS, ConfigValidationError, defineSchema } from '../../src/spi/index.js';
import type { ConfigSchema, FieldSpec } from '../../src/spi/index.js';

/** Where the sink takes a record's key from. */
export type KafkaKeySource = 'none' | 'header' | 'property' | 'xpath';

/** How the sink chooses a record's key (and so, without a fixed partition, its partition). */
export interface KafkaKeyConfig {
  readonly from: KafkaKeySource;
  /** The JMS header (`from: header`) or property (`from: property`) whose value is the key. */
  readonly name?: string;
  /** The XPath expression evaluated on an XML body (`from: xpath`). */
  readonly expression?: string;
}

/** SASL mechanisms kafkajs supports without plugins. */
export type KafkaSaslMechanism = 'none' | 'plain' | 'scram-sha-256' | 'scram-sha-512';

export interface KafkaSaslConfig {
  readonly mechanism: KafkaSaslMechanism;
  readonly username?: string;
  readonly password?: string;
}

export interface KafkaSslConfig {
  readonly enabled: boolean;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly passphrase?: string;
  readonly rejectUnauthorized: boolean;
  readonly servername?: string;
}

/** Record compression the sink applies; kafkajs ships gzip only (snappy, lz4, zstd need codecs). */
export type KafkaCompression = 'none' | 'gzip';

/** Body type given to records that carry no `jms.bodyType` header (written by foreign producers). */
export type KafkaForeignBody = 'bytes' | 'text';

/** How the endpoint creates its topic at connect when it is missing (`createTopic:`). */
export interface KafkaCreateTopicConfig {
  /** Default: the broker's `num.partitions`. */
  readonly partitions?: number;
  /** Default: the broker's `default.replication.factor`. */
  readonly replicationFactor?: number;
  /** Topic configs (`retention.ms`, `cleanup.policy`), as strings for the admin API. */
  readonly configs?: Readonly<Record<string, string | number | boolean>>;
}

/** A validated Kafka endpoint configuration. */
export interface KafkaConfig {
  readonly brokers: readonly string[];
  readonly clientId?: string;
  readonly topic: string;
  /** Create `topic` at connect if it is missing; absent: a missing topic is an error. */
  readonly createTopic?: KafkaCreateTopicConfig;
  readonly connectionTimeout: number;
  readonly requestTimeout: number;
  readonly retries: number;
  readonly sasl: KafkaSaslConfig;
  readonly ssl: KafkaSslConfig;
  // source
  readonly groupId?: string;
  readonly fromBeginning: boolean;
  readonly prefetch: number;
  readonly fetchMaxWait: number;
  readonly sessionTimeout: number;
  readonly heartbeatInterval: number;
  readonly rebalanceTimeout: number;
  readonly readUncommitted: boolean;
  readonly keyProperty?: string;
  readonly foreignBody: KafkaForeignBody;
  // sink
  readonly key: KafkaKeyConfig;
  readonly partition?: number;
  readonly acks: number;
  readonly ackTimeout: number;
  readonly idempotent: boolean;
  readonly maxInFlightRequests: number;
  readonly transactionalId?: string;
  readonly transactionTimeout: number;
  readonly compression: KafkaCompression;
  readonly allowAutoTopicCreation: boolean;
  /** Sink: the largest record batch sent, in bytes; default: the limits read from the brokers at connect. */
  readonly maxMessageBytes?: number;
  /** Sink: bytes of records per produce request a batch is cut into. */
  readonly maxRequestBytes: number;
}

const optionalString = (description: string, secret = false): FieldSpec => ({
  type: 'string',
  description,
  ...(secret ? { secret: true } : {}),
});

const fields: Record<string, FieldSpec> = {
  brokers: {
    type: 'array',
    required: true,
    description: "Bootstrap servers as 'host:port', e.g. ['kafka-1:9092', 'kafka-2:9092'].",
    items: { type: 'string', pattern: '^[^:\\s]+:\\d+$', description: "A broker as 'host:port'." },
  },
  clientId: optionalString(
    "Kafka client id, seen in broker logs and quotas. Default: 'jms-gateway-<bridge name>'.",
  ),
  topic: {
    type: 'string',
    required: true,
    description: 'The Kafka topic the source reads or the sink writes.',
  },
  createTopic: {
    type: 'object',
    optional: true,
    description:
      "Create `topic` at connect if it is missing (source and sink), through Kafka's admin API; a topic that exists is left as it is (its partitions and configs are not changed). Default: nothing is created, and a missing topic fails the connection (unless a sink allows `allowAutoTopicCreation`), so a typo does not create a topic.",
    fields: {
      partitions: {
        type: 'integer',
        minimum: 1,
        description: "Partitions of the created topic. Default: the broker's `num.partitions`.",
      },
      replicationFactor: {
        type: 'integer',
        minimum: 1,
        description: "Replicas of each partition. Default: the broker's `default.replication.factor`.",
      },
      configs: {
        type: 'map',
        description:
          'Topic configs of the created topic, e.g. `retention.ms: 604800000`, `cleanup.policy: compact`. Default none (the broker defaults).',
        values: { type: 'scalar', description: 'A config value.' },
      },
    },
  },
  connectionTimeout: {
    type: 'integer',
    minimum: 1,
    default: 3000,
    description: 'Milliseconds to wait for a broker connection. Default 3000.',
  },
  requestTimeout: {
    type: 'integer',
    minimum: 1,
    default: 30000,
    description: 'Milliseconds to wait for a broker response. Default 30000.',
  },
  retries: {
    type: 'integer',
    minimum: 1,
    default: 5,
    description:
      'How often the Kafka client retries a failed request before the connector reports it to the bridge runtime, which owns further retries and backoff. Default 5.',
  },
  sasl: {
    type: 'object',
    description: 'SASL authentication. Default: none.',
    fields: {
      mechanism: {
        type: 'enum',
        values: ['none', 'plain', 'scram-sha-256', 'scram-sha-512'],
        default: 'none',
        description: "SASL mechanism: 'none' (default), 'plain', 'scram-sha-256' or 'scram-sha-512'.",
      },
      username: optionalString('SASL user name; required unless the mechanism is none.'),
      password: optionalString(
        'SASL password; required unless the mechanism is none. Use a ${ENV_VAR} reference.',
        true,
      ),
    },
  },
  ssl: {
    type: 'object',
    description: 'TLS to the brokers. Default: off (plaintext).',
    fields: {
      enabled: { type: 'boolean', default: false, description: 'Connect with TLS. Default false.' },
      ca: optionalString('PEM of the CA certificates to trust. Default: the system CAs.'),
      cert: optionalString('PEM of the client certificate, for mutual TLS.'),
      key: optionalString('PEM of the client private key, for mutual TLS. Use a ${ENV_VAR} reference.', true),
      passphrase: optionalString('Passphrase of the client private key.', true),
      rejectUnauthorized: {
        type: 'boolean',
        default: true,
        description: 'Reject brokers whose certificate does not verify. Default true.',
      },
      servername: optionalString('Server name for SNI and certificate checks. Default: the broker host.'),
    },
  },
  groupId: optionalString(
    "Source: the consumer group; its committed offsets say where the source resumes. Default: 'jms-gateway-<bridge name>'.",
  ),
  fromBeginning: {
    type: 'boolean',
    default: false,
    description:
      'Source: where a group without committed offsets starts: true = the oldest record, false = only new records. Default false.',
  },
  prefetch: {
    type: 'integer',
    minimum: 1,
    default: 100,
    description:
      'Source: how many records are read ahead of the bridge (fetched, not yet received). Reading pauses while it is full. Default 100.',
  },
  fetchMaxWait: {
    type: 'integer',
    minimum: 1,
    default: 500,
    description:
      'Source: milliseconds the broker may hold a fetch open waiting for new records (fetch.max.wait.ms). It also bounds how soon a retry, a resumed partition or close takes effect. Default 500.',
  },
  sessionTimeout: {
    type: 'integer',
    minimum: 1,
    default: 30000,
    description:
      'Source: milliseconds without a heartbeat after which the group coordinator drops this consumer. Default 30000.',
  },
  heartbeatInterval: {
    type: 'integer',
    minimum: 1,
    default: 3000,
    description: 'Source: milliseconds between heartbeats to the group coordinator. Default 3000.',
  },
  rebalanceTimeout: {
    type: 'integer',
    minimum: 1,
    default: 60000,
    description:
      'Source: milliseconds the coordinator waits for members to rejoin during a rebalance. Default 60000.',
  },
  readUncommitted: {
    type: 'boolean',
    default: false,
    description:
      'Source: also read records of open and aborted transactions (isolation level read_uncommitted). Default false (read_committed).',
  },
  keyProperty: optionalString(
    'Source: a JMS property that receives the record key as a string, unless the record already carries that property. Default: the key is not exposed.',
  ),
  foreignBody: {
    type: 'enum',
    values: ['bytes', 'text'],
    default: 'bytes',
    description:
      "Source: the body type of records without a 'jms.bodyType' header (written by other producers): 'bytes' (default) or 'text' (UTF-8).",
  },
  key: {
    type: 'object',
    description:
      'Sink: where the record key comes from. Default: the JMSXGroupID property, so a message group stays in one partition and keeps its order; messages without it get no key.',
    fields: {
      from: {
        type: 'enum',
        values: ['none', 'header', 'property', 'xpath'],
        default: 'property',
        description:
          "'none' (no key), 'header' (a JMS header, e.g. JMSCorrelationID), 'property' (a JMS property, the default) or 'xpath' (an XPath on an XML body; needs the runtime's XPath evaluator).",
      },
      name: optionalString(
        "The header or property name (from: header|property). Default 'JMSXGroupID' for property.",
      ),
      expression: optionalString("The XPath expression (from: xpath), e.g. '/order/customer/@id'."),
    },
  },
  partition: {
    type: 'integer',
    minimum: 0,
    description:
      'Sink: write every record to this partition. Default: chosen from the key (murmur2, as the Java client).',
  },
  acks: {
    type: 'integer',
    minimum: -1,
    maximum: 1,
    default: -1,
    description:
      'Sink: acknowledgements a send waits for: -1 = all in-sync replicas (the default; needed for at-least-once and for idempotence), 1 = the leader only, 0 = none.',
  },
  ackTimeout: {
    type: 'integer',
    minimum: 1,
    default: 30000,
    description: 'Sink: milliseconds the broker may take to gather the acknowledgements. Default 30000.',
  },
  idempotent: {
    type: 'boolean',
    default: true,
    description:
      "Sink: idempotent producer: the broker drops duplicates of the client's own retries, so they neither duplicate nor reorder records. Needs acks -1. Default true.",
  },
  maxInFlightRequests: {
    type: 'integer',
    minimum: 1,
    default: 1,
    description:
      'Sink: unacknowledged requests per broker connection. At most 5 with idempotence (the broker keeps 5 sequence windows); a transactional producer always uses 1 (it sends one transaction at a time). Default 1.',
  },
  transactionalId: optionalString(
    "Sink: makes the producer transactional (each send, and each batch the bridge hands over, goes in one transaction; a restarted gateway fences its old producer; records carry a 'jms.forwardedBy' header, from which an exactly-once bridge rebuilds its duplicate window). Needs idempotent true. Default: 'jms-gateway-<bridge name>' on an exactly-once bridge, otherwise not transactional.",
  ),
  transactionTimeout: {
    type: 'integer',
    minimum: 1,
    default: 60000,
    description: 'Sink: milliseconds after which the broker aborts an open transaction. Default 60000.',
  },
  compression: {
    type: 'enum',
    values: ['none', 'gzip'],
    default: 'none',
    description: "Sink: record batch compression: 'none' (default) or 'gzip'.",
  },
  allowAutoTopicCreation: {
    type: 'boolean',
    default: false,
    description:
      'Sink: let the broker create a missing topic on first send with its defaults, when the broker allows it (`auto.create.topics.enable`). Default false: a missing topic is a configuration error. `createTopic` creates it explicitly, with the settings given there.',
  },
  maxMessageBytes: {
    type: 'integer',
    minimum: 1,
    description:
      "Sink: the largest message the sink sends, in bytes of its record batch before compression; a larger one is poison and goes to the bridge's error destination with a reason naming both sizes. Default: read from the brokers at connect (needs the DescribeConfigs permission): the topic's max.message.bytes (the brokers' message.max.bytes for a topic not yet created), and the brokers' socket.request.max.bytes, over which Kafka closes the connection instead of answering; with compression the sink leaves the read limits to the broker.",
  },
  maxRequestBytes: {
    type: 'integer',
    minimum: 1,
    default: 1048576,
    description:
      "Sink: the most bytes of records in one produce request when the bridge sends a batch (as the Java producer's max.request.size); a batch is cut into requests of at most this size, sent one after the other, and a single larger record goes in a request of its own. Default 1048576 (1 MiB).",
  },
};

/** The Kafka endpoint schema (`type: kafka`). */
export const kafkaConfigSchema: ConfigSchema<KafkaConfig> = defineSchema<KafkaConfig>(fields);

/** The property the sink keys records by when `key.name` is not given. */
export const DEFAULT_KEY_PROPERTY = 'JMSXGroupID';

/** The most in-flight requests per connection Kafka allows for an idempotent producer. */
const MAX_IDEMPOTENT_IN_FLIGHT = 5;

/**
 * The checks that span fields, for the side that uses them. Paths are relative to the endpoint,
 * like the schema's own errors, so the config loader can prefix them.
 */
export function checkKafkaConfig(config: KafkaConfig, role: 'source' | 'sink'): ConfigValidationError[] {
  const errors: ConfigValidationError[] = [];
  const fail = (path: string, expected: string): void => {
    errors.push(new ConfigValidationError(path, expected));
  };
  if (config.sasl.mechanism !== 'none') {
    if (config.sasl.username === undefined)
      fail('sasl.username', `is required for mechanism '${config.sasl.mechanism}'`);
    if (config.sasl.password === undefined)
      fail('sasl.password', `is required for mechanism '${config.sasl.mechanism}'`);
  }
  if (role === 'source') {
    if (config.heartbeatInterval >= config.sessionTimeout)
      fail('heartbeatInterval', `expected less than sessionTimeout (${config.sessionTimeout})`);
    return errors;
  }
  if (config.idempotent && config.acks !== -1)
    fail('acks', 'expected -1 (all in-sync replicas) while idempotent is true');
  if (config.idempotent && config.maxInFlightRequests > MAX_IDEMPOTENT_IN_FLIGHT)
    fail('maxInFlightRequests', `expected at most ${MAX_IDEMPOTENT_IN_FLIGHT} while idempotent is true`);
  if (config.transactionalId !== undefined && !config.idempotent)
    fail('idempotent', 'expected true: a transactional producer is idempotent');
  if (config.key.from === 'header' && !(CARRIED_HEADERS as readonly string[]).includes(config.key.name ?? ''))
    fail('key.name', `expected a JMS header that travels with the message (${CARRIED_HEADERS.join(', ')})`);
  if (config.key.from === 'xpath' && config.key.expression === undefined)
    fail('key.expression', "is required for from: 'xpath'");
  return errors;
}
