/**
 * The AMQP 0-9-1 connector (RabbitMQ and compatible brokers): a source consuming a queue with
 * manual acknowledgement, a sink publishing with publisher confirms. Mapping: `mapping.ts` and
 * `docs/mapping.md`.
 */
import type { ConnectorDefinition } from '../../src/spi/index.js';
import { checkAmqpEndpoint } from './check.js';
import { AmqpSink } from './sink.js';
import { AmqpSource } from './source.js';
import { amqpConfigSchema, type AmqpConfig } from './spec.js';

/** The `type: amqp` connector. */
export const amqpConnector: ConnectorDefinition<AmqpConfig> = {
  type: 'amqp',
  summary:
    'AMQP 0-9-1 (RabbitMQ): consume a queue with manual acks, publish to an exchange with publisher confirms',
  config: amqpConfigSchema,
  createSource: (config, context) => new AmqpSource(config, context),
  createSink: (config, context) => new AmqpSink(config, context),
  check: checkAmqpEndpoint,
};

export type { AmqpConfig, ExchangeType } from './spec.js';
export { amqpConfigSchema } from './spec.js';
export { AmqpSource } from './source.js';
export { AmqpSink } from './sink.js';
