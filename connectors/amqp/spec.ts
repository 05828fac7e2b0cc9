/**
 * Configuration of an AMQP 0-9-1 endpoint (RabbitMQ and compatible brokers). A source consumes
 * from `queue`; a sink publishes to `exchange` with `routingKey` (by default to `queue` through
 * the default exchange).
 */
import { defineSchema } from '../../src/spi/index.js';
import type { PersistentPolicy } from './mapping.js';

/** The kinds of exchange a sink may declare. */
export type ExchangeType = 'direct' | 'fanout' | 'topic' | 'headers';

/** A broker argument value (`x-queue-type: quorum`, `x-max-length: 10000`), typed as written. */
export type AmqpArgument = string | number | boolean;

/** A queue the endpoint declares at connect. */
export interface AmqpQueueDeclaration {
  readonly name: string;
  readonly durable: boolean;
  /** `x-` arguments (queue type, dead-letter exchange, length limits, TTL). */
  readonly arguments?: Readonly<Record<string, AmqpArgument>>;
}

/** An exchange the endpoint declares at connect. */
export interface AmqpExchangeDeclaration {
  readonly name: string;
  readonly type: ExchangeType;
  readonly durable: boolean;
}

/** A binding of a queue to an exchange the endpoint declares at connect. */
export interface AmqpBindingDeclaration {
  readonly queue: string;
  readonly exchange: string;
  readonly routingKey: string;
}

/** What an endpoint declares at connect (idempotent: assertExchange, assertQueue, bindQueue). */
export interface AmqpDeclarations {
  readonly exchanges?: readonly AmqpExchangeDeclaration[];
  readonly queues?: readonly AmqpQueueDeclaration[];
  readonly bindings?: readonly AmqpBindingDeclaration[];
}

/** A validated AMQP endpoint configuration. */
export interface AmqpConfig {
  /** Broker URL with credentials: `amqp://user:pass@host:5672/vhost` (secret). */
  readonly url: string;
  /** Source: the queue to consume. Sink: the queue to publish to through the default exchange. */
  readonly queue?: string;
  /** Sink: the exchange to publish to; `''` is the default exchange. */
  readonly exchange: string;
  /** Sink: the routing key; defaults to `queue`. */
  readonly routingKey?: string;
  /** Exchanges, queues and bindings to declare at connect; absent: only check that they exist. */
  readonly declare?: AmqpDeclarations;
  /** Source: unacknowledged messages the broker may push ahead (basic.qos). */
  readonly prefetch: number;
  /** Sink: make an unroutable message a failed send (basic.return) instead of a silent drop. */
  readonly mandatory: boolean;
  /** Sink: how `deliveryMode` is set. */
  readonly persistent: PersistentPolicy;
  /** Sink: set the AMQP per-message TTL (`expiration`) from JMSExpiration. */
  readonly ttl: boolean;
  /** Heartbeat period in seconds; 0 disables heartbeats. */
  readonly heartbeat: number;
  /** How long to wait for the TCP connection, in ms. */
  readonly connectTimeout: number;
  /** Sink: the largest message body published, in bytes; default: the broker's default `max_message_size`. */
  readonly maxMessageBytes?: number;
}

/** The schema of {@link AmqpConfig}: every field described, defaults declared. */
export const amqpConfigSchema = defineSchema<AmqpConfig>({
  url: {
    type: 'string',
    required: true,
    secret: true,
    pattern: '^amqps?://',
    description:
      'Broker URL, `amqp://user:pass@host:5672/vhost` or `amqps://...`. Put credentials in an environment variable: `url: ${AMQP_URL}`; it is never logged.',
  },
  queue: {
    type: 'string',
    description:
      'Source: the queue to consume (required). Sink: the queue to publish to through the default exchange, and the default routing key.',
  },
  exchange: {
    type: 'string',
    default: '',
    description:
      "Sink: the exchange to publish to; '' (the default) is the default exchange, which routes by queue name.",
  },
  routingKey: {
    type: 'string',
    description: 'Sink: the routing key of every message. Default: `queue`.',
  },
  declare: {
    type: 'object',
    optional: true,
    description:
      'Exchanges, queues and bindings to declare at connect, each created if missing and left as it is when it exists with the same settings (a queue or exchange that exists with other settings is a configuration error naming what differs). Default: none declared; the endpoint checks at connect that its queue or exchange exists and fails otherwise, so a typo does not create an orphan queue.',
    fields: {
      exchanges: {
        type: 'array',
        description: 'Exchanges to declare. Default none.',
        items: {
          type: 'object',
          description: 'An exchange.',
          fields: {
            name: { type: 'string', required: true, description: 'The exchange name.' },
            type: {
              type: 'enum',
              values: ['direct', 'fanout', 'topic', 'headers'],
              default: 'direct',
              description: 'The exchange type. Default direct.',
            },
            durable: {
              type: 'boolean',
              default: true,
              description: 'Whether it survives a broker restart. Default true.',
            },
          },
        },
      },
      queues: {
        type: 'array',
        description: 'Queues to declare. Default none.',
        items: {
          type: 'object',
          description: 'A queue.',
          fields: {
            name: { type: 'string', required: true, description: 'The queue name.' },
            durable: {
              type: 'boolean',
              default: true,
              description: 'Whether it survives a broker restart. Default true.',
            },
            arguments: {
              type: 'map',
              description:
                'Queue arguments, typed as written: `x-queue-type: quorum`, `x-dead-letter-exchange: orders.dlx` (where a rejected message goes instead of being dropped), `x-max-length: 10000`, `x-message-ttl: 60000`. Default none.',
              values: { type: 'scalar', description: 'An argument value.' },
            },
          },
        },
      },
      bindings: {
        type: 'array',
        description: 'Bindings to declare, after the exchanges and queues. Default none.',
        items: {
          type: 'object',
          description: 'A binding of a queue to an exchange.',
          fields: {
            queue: { type: 'string', required: true, description: 'The queue.' },
            exchange: { type: 'string', required: true, description: 'The exchange.' },
            routingKey: {
              type: 'string',
              default: '',
              description: "The binding key (a pattern on a topic exchange, e.g. `payments.#`). Default ''.",
            },
          },
        },
      },
    },
  },
  prefetch: {
    type: 'integer',
    minimum: 1,
    maximum: 65535,
    default: 10,
    description:
      'Source: how many unacknowledged messages the broker may push ahead of settlement (basic.qos). Default 10.',
  },
  mandatory: {
    type: 'boolean',
    default: true,
    description:
      'Sink: publish with the mandatory flag, so a message no queue is bound for comes back (basic.return, NO_ROUTE) instead of being dropped silently: the bridge retries it with its retry delay (status retrying, not counted toward the retry limit) until a queue is bound, keeping later messages behind it. Default true.',
  },
  persistent: {
    type: 'enum',
    values: ['message', 'always', 'never'],
    default: 'message',
    description:
      "Sink: AMQP deliveryMode. 'message' (the default) follows JMSDeliveryMode; 'always' makes every message persistent (2); 'never' non-persistent (1).",
  },
  ttl: {
    type: 'boolean',
    default: true,
    description:
      'Sink: set the AMQP per-message TTL (`expiration`, relative ms) from JMSExpiration, so the broker drops a message once it expires. The exact JMSExpiration travels in `x-jms-expiration` either way. Default true.',
  },
  heartbeat: {
    type: 'integer',
    minimum: 0,
    maximum: 65535,
    default: 30,
    description:
      'Heartbeat period in seconds, so a dead connection is noticed (and the runtime reconnects); 0 disables. Default 30.',
  },
  connectTimeout: {
    type: 'integer',
    minimum: 1,
    default: 10_000,
    description: 'How long to wait for the TCP connection to the broker, in ms. Default 10000.',
  },
  maxMessageBytes: {
    type: 'integer',
    minimum: 1,
    description:
      "Sink: the largest message body the sink publishes, in bytes; a larger one is poison and goes to the bridge's error destination with a reason naming both sizes. RabbitMQ does not announce its max_message_size, so the default is its default for the version the broker reports at connect: 134217728 (128 MiB) for RabbitMQ 3.8 to 3.13, 16777216 (16 MiB) from 4.0; no check for other brokers. Set it when the broker's max_message_size is configured otherwise.",
  },
});
