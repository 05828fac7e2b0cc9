/**
 * Creates an endpoint's topic at connect when it is missing (`createTopic:`), through Kafka's
 * admin API. A topic that exists is left as it is: its partitions and configs are not compared
 * or changed (Kafka would refuse to lower partitions, and changing configs is an operator's call).
 */
import { untilAborted, type ConnectorContext } from '../../src/spi/index.js';
import { createAdmin, disconnectFully } from './client.js';
import { classifyConnectionError } from './errors.js';
import type { KafkaConfig, KafkaCreateTopicConfig } from './spec.js';

/** The admin API's form of the configured topic settings; unset counts and configs take the broker's defaults. */
export function topicToCreate(
  topic: string,
  create: KafkaCreateTopicConfig,
): {
  topic: string;
  numPartitions: number;
  replicationFactor: number;
  configEntries: { name: string; value: string }[];
} {
  return {
    topic,
    // -1 asks the broker for its num.partitions / default.replication.factor.
    numPartitions: create.partitions ?? -1,
    replicationFactor: create.replicationFactor ?? -1,
    configEntries: Object.entries(create.configs ?? {}).map(([name, value]) => ({
      name,
      value: String(value),
    })),
  };
}

/**
 * Creates `config.topic` with `config.createTopic` unless it exists; resolves whether it created
 * it. Waits until the new partitions have leaders, so a producer or consumer can use them at once.
 */
export async function ensureTopic(
  config: KafkaConfig & { readonly createTopic: KafkaCreateTopicConfig },
  context: ConnectorContext,
  signal: AbortSignal,
): Promise<boolean> {
  const admin = createAdmin(config, context);
  try {
    await untilAborted(admin.connect(), signal);
    const created = await untilAborted(
      admin.createTopics({ topics: [topicToCreate(config.topic, config.createTopic)], waitForLeaders: true }),
      signal,
    );
    if (created) context.logger.info({ topic: config.topic }, 'kafka topic created');
    return created;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw classifyConnectionError(error, `creating kafka topic '${config.topic}'`);
  } finally {
    await disconnectFully(admin);
  }
}
