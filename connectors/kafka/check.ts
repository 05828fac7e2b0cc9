/**
 * `check --connect` for a Kafka endpoint: connects an admin client (no client retries: a check
 * reports, it does not wait) and checks that the topic exists, unless the endpoint creates it
 * (`createTopic`) or, as a sink, lets the broker create it (`allowAutoTopicCreation`).
 */
import type { CheckContext, EndpointCheck } from '../../src/spi/index.js';
import { untilAborted } from '../../src/spi/index.js';
import { createAdmin, disconnectFully } from './client.js';
import { classifyConnectionError } from './errors.js';
import type { KafkaConfig } from './spec.js';

/** The connector's `check`: see the module comment. */
export async function checkKafkaEndpoint(config: KafkaConfig, context: CheckContext): Promise<EndpointCheck> {
  const admin = createAdmin(config, context, 0);
  try {
    try {
      await untilAborted(admin.connect(), context.signal);
    } catch (error) {
      if (context.signal.aborted) throw error;
      const reason = classifyConnectionError(error, `connecting to kafka at ${config.brokers.join(', ')}`);
      return { problems: [{ field: 'brokers', message: reason.message }], notes: [] };
    }
    const topics = await untilAborted(admin.listTopics(), context.signal);
    if (topics.includes(config.topic)) return { problems: [], notes: [] };
    if (config.createTopic !== undefined)
      return {
        problems: [],
        notes: [`topic '${config.topic}' does not exist yet: it is created at connect`],
      };
    if (context.role === 'sink' && config.allowAutoTopicCreation)
      return {
        problems: [],
        notes: [
          `topic '${config.topic}' does not exist yet: the broker creates it on the first send, if it allows that`,
        ],
      };
    return {
      problems: [
        {
          field: 'topic',
          message: `topic '${config.topic}' does not exist on the kafka cluster: create it, or set createTopic on the endpoint`,
        },
      ],
      notes: [],
    };
  } finally {
    await disconnectFully(admin);
  }
}
