/**
 * The conformance suite against Kafka: each endpoint is a fresh topic (as many partitions as the
 * test asks for) read by one consumer group from the beginning; the parallel test keys records by
 * JMSXGroupID (the sink's default) over four partitions, which the bridge runs as ordering units.
 */
import assert from 'node:assert/strict';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import { resolveConfig } from '../../src/spi/index.js';
import { kafkaConnector, type KafkaConfig } from '../../connectors/kafka/index.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { conformanceSuite } from './suite.js';

function config(fields: Record<string, unknown>): KafkaConfig {
  const { config, errors } = resolveConfig(kafkaConnector.config, fields, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

conformanceSuite('kafka', {
  broker: 'kafka',
  endpoint: async ({ brokers }, { partitions }) => {
    const topic = uniqueName('t-conformance');
    const groupId = uniqueName('g-conformance');
    const admin = new Kafka({ clientId: 'conformance-admin', brokers, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await createKafkaTopics(admin, [{ topic, numPartitions: partitions, replicationFactor: 1 }]);
    } finally {
      await admin.disconnect();
    }
    return {
      source: (context) =>
        kafkaConnector.createSource!(
          config({
            brokers,
            topic,
            groupId,
            fromBeginning: true,
            sessionTimeout: 6_000,
            heartbeatInterval: 500,
            rebalanceTimeout: 5_000,
          }),
          context,
        ),
      sink: (context) => kafkaConnector.createSink!(config({ brokers, topic }), context),
      cleanup: async () => {
        const cleaner = new Kafka({
          clientId: 'conformance-admin',
          brokers,
          logLevel: logLevel.NOTHING,
        }).admin();
        await cleaner.connect();
        try {
          await cleaner.deleteGroups([groupId]).catch(() => undefined);
          await cleaner.deleteTopics({ topics: [topic] });
        } finally {
          await cleaner.disconnect();
        }
      },
    };
  },
  parallel: { readers: 1, perUnitOrder: true },
  // Every settle of a Kafka source waits for the offset commit that covers it: acknowledging in
  // batches shares one commit among many records.
  bridge: { batchSize: 100, batchIntervalMs: 20 },
});
