/**
 * Configuration of an AMQP 0-9-1 endpoint (RabbitMQ and compatible brokers). A source consumes
 * from `queue`; a sink publishes to `exchange` with `routingKey` (by default to `queue` through
 * the default exchange).
 */
import { defineSchema } from '../../src/spi/index.js';
import type { PersistentPolicy } from './mapping.js';

/** The kinds of exchange a sink may declare. */
export type ExchangeType = 'direct' | 'fanout' | 'topic' | 'headers';

/** A validated AMQP endpoint configuration. */
export interface AmqpConfig {
  /** Broker URL with credentials: `amqp://user:pass@host:5672/vhost` (secret). */
  readonly url: string;
  /** Source: the queue to consume. Sink: the queue to publish to through the default exchange. */
  readonly queue?: string;
  /** Sink: the exchange to publish to; `''` is the default exchange. */
  readonly exchange: string;
  /** Sink: the exchange's type, used when `declare` creates it. */
  readonly exchangeType: ExchangeType;
  /** Sink: the routing key; defaults to `queue`. */
  readonly routingKey?: string;
  /** Create the queue (and exchange and binding) if missing, instead of checking they exist. */
  readonly declare: boolean;
  /** Whether a declared queue and exchange survive a broker restart. */
  readonly durable: boolean;
  /** Source: dead-letter exchange of a declared queue, where rejected messages go. */
  readonly deadLetterExchange?: string;
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
  exchangeType: {
    type: 'enum',
    values: ['direct', 'fanout', 'topic', 'headers'],
    default: 'direct',
    description: 'Sink: the type of `exchange` when `declare` creates it. Default direct.',
  },
  routingKey: {
    type: 'string',
    description: 'Sink: the routing key of every message. Default: `queue`.',
  },
  declare: {
    type: 'boolean',
    default: false,
    description:
      'Create the queue (source, or sink with `queue`), the exchange (sink with `exchange`) and the binding between them if missing. Default false: check that they exist and fail the connection otherwise, so a typo does not create an orphan queue.',
  },
  durable: {
    type: 'boolean',
    default: true,
    description:
      'Whether a queue or exchange that `declare` creates survives a broker restart. Default true.',
  },
  deadLetterExchange: {
    type: 'string',
    description:
      'Source: the `x-dead-letter-exchange` of the queue `declare` creates; a rejected message (poison, DLV-9) goes there instead of being dropped by the broker. Default none.',
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
      'Sink: publish with the mandatory flag, so a message no queue is bound for comes back (basic.return) and the send fails with an endpoint configuration error instead of being dropped silently. Default true.',
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
