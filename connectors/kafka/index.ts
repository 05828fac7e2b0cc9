/**
 * The Kafka connector (`type: kafka`): a consumer-group source with offsets committed only past
 * settled records, and an idempotent (optionally transactional) acks=all sink. Mapping:
 * `mapping.ts` and `docs/mapping-kafka.md`.
 */
import type { ConnectorContext, ConnectorDefinition, Sink, Source } from '../../src/spi/index.js';
import { checkKafkaEndpoint } from './check.js';
import { KafkaSink } from './sink.js';
import { KafkaSource } from './source.js';
import { checkKafkaConfig, kafkaConfigSchema } from './spec.js';
import type { KafkaConfig } from './spec.js';

function checked(config: KafkaConfig, role: 'source' | 'sink'): KafkaConfig {
  const [first] = checkKafkaConfig(config, role);
  if (first !== undefined) throw first;
  return config;
}

/** The Kafka connector definition, registered in `connectors/index.ts`. */
export const kafkaConnector: ConnectorDefinition<KafkaConfig> = {
  type: 'kafka',
  summary: 'Apache Kafka topics: consumer-group source, idempotent acks=all producer sink.',
  config: kafkaConfigSchema,
  createSource(config: KafkaConfig, context: ConnectorContext): Source {
    return new KafkaSource(checked(config, 'source'), context);
  },
  createSink(config: KafkaConfig, context: ConnectorContext): Sink {
    return new KafkaSink(checked(config, 'sink'), context);
  },
  check: checkKafkaEndpoint,
};

export { KafkaSource } from './source.js';
export { KafkaSink } from './sink.js';
export { kafkaConfigSchema, checkKafkaConfig, type KafkaConfig } from './spec.js';
export { messageToRecord, recordToMessage } from './mapping.js';
