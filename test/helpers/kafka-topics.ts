/**
 * Kafka set-up shared by the tests that talk to a real broker: a quiet kafkajs client, an
 * endpoint configuration with group timings short enough for tests, and a fresh topic per test
 * that is deleted afterwards, so parallel runs against the shared broker never meet.
 */
import assert from 'node:assert/strict';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import type { Admin, ITopicConfig } from 'kafkajs';
import { resolveConfig, type ConnectorContext } from '../../src/spi/index.js';
import { KafkaSink, KafkaSource, kafkaConfigSchema } from '../../connectors/kafka/index.js';
import { createTopicsRetrying } from '../../connectors/kafka/create-topic.js';
import type { KafkaConfig } from '../../connectors/kafka/index.js';
import { type BrokerResult, connected } from './brokers.js';
import { uniqueName } from './names.js';

/** A kafkajs client with a unique client id starting with `prefix`, its own logging off. */
export function kafkaClient(brokers: readonly string[], prefix: string): Kafka {
  return new Kafka({ clientId: uniqueName(prefix), brokers: [...brokers], logLevel: logLevel.NOTHING });
}

/**
 * A resolved Kafka endpoint for `topic` whose group timings (session, heartbeat, rebalance) and
 * retries are short enough that a test waits seconds, not minutes; `overrides` win.
 */
export function kafkaEndpoint(
  brokers: readonly string[],
  topic: string,
  overrides: Record<string, unknown> = {},
): KafkaConfig {
  const { config, errors } = resolveConfig(
    kafkaConfigSchema,
    {
      brokers,
      topic,
      sessionTimeout: 6000,
      heartbeatInterval: 500,
      rebalanceTimeout: 5000,
      retries: 2,
      ...overrides,
    },
    'test',
  );
  assert.deepEqual(errors, []);
  return config!;
}

/**
 * Makes `topics` and waits for their leaders, as `admin.createTopics({ topics, waitForLeaders:
 * true })` does, but asks again with backoff while the broker answers as one still settling (a
 * freshly formatted Kafka says UNKNOWN_TOPIC_OR_PARTITION for a few seconds, more so when two
 * files make topics at once): the connector's own retry, so a test never fails on it. Resolves
 * whether the topics were made.
 */
export function createKafkaTopics(admin: Admin, topics: ITopicConfig[]): Promise<boolean> {
  return createTopicsRetrying(admin, topics);
}

/** Where and how `withKafkaTopic` makes its topic. */
export interface KafkaTopicOptions {
  readonly brokers: readonly string[];
  /** The start of the topic's and the admin client's unique names. */
  readonly prefix: string;
  readonly partitions: number;
  readonly configEntries?: Array<{ name: string; value: string }>;
  /** Consumer groups the test made: deleted with the topic, and the set emptied. */
  readonly groups?: Set<string>;
}

/** Runs `fn` with a fresh topic (leaders elected), deleted afterwards whatever `fn` did. */
export async function withKafkaTopic(
  options: KafkaTopicOptions,
  fn: (topic: string, admin: Admin) => Promise<void>,
): Promise<void> {
  const topic = uniqueName(`t-${options.prefix}`);
  const admin = kafkaClient(options.brokers, options.prefix).admin();
  await admin.connect();
  try {
    await createKafkaTopics(admin, [
      {
        topic,
        numPartitions: options.partitions,
        replicationFactor: 1,
        configEntries: options.configEntries ?? [],
      },
    ]);
    await fn(topic, admin);
  } finally {
    if (options.groups) {
      await admin.deleteGroups([...options.groups]).catch(() => undefined);
      options.groups.clear();
    }
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
  }
}

/** What {@link kafkaTestBed} is made for: one test file's broker, names and waits. */
export interface KafkaTestBedOptions {
  /** The file's broker, from `kafkaBroker()`: read only when a test uses it, so a skip stays a skip. */
  readonly broker: BrokerResult<'kafka'>;
  /** The start of the unique names of the file's topics, clients and consumer groups. */
  readonly prefix: string;
  /** The context sinks and sources are made with, unless a test gives its own. */
  readonly context: ConnectorContext;
  /** How long a connect or a wait of a test may take. */
  readonly waitMs: number;
}

/**
 * The set-up a Kafka integration test file starts from: endpoints whose consumer groups are
 * deleted with the topic, a client, a fresh topic per test, an abort signal for one wait, and
 * connected sinks and sources.
 */
export function kafkaTestBed({ broker, prefix, context, waitMs }: KafkaTestBedOptions) {
  /** Consumer groups the tests made, deleted with their topic. */
  const groups = new Set<string>();
  const brokers = (): readonly string[] => connected(broker).brokers;
  const signal = (): AbortSignal => AbortSignal.timeout(waitMs);
  /** A consumer group id (of `kind`, when given), deleted with the test's topic. */
  const groupId = (kind = ''): string => {
    const id = uniqueName(kind === '' ? `g-${prefix}` : `g-${prefix}-${kind}`);
    groups.add(id);
    return id;
  };
  return {
    groups,
    signal,
    groupId,
    /** A resolved endpoint configuration with group timings short enough for tests. */
    endpoint: (topic: string, overrides: Record<string, unknown> = {}): KafkaConfig =>
      kafkaEndpoint(brokers(), topic, { groupId: groupId(), fromBeginning: true, ...overrides }),
    client: (): Kafka => kafkaClient(brokers(), prefix),
    /** Runs `fn` with a fresh topic of `partitions` partitions, deleted afterwards with its groups. */
    withTopic: (
      partitions: number,
      fn: (topic: string, admin: Admin) => Promise<void>,
      configEntries: Array<{ name: string; value: string }> = [],
    ): Promise<void> => withKafkaTopic({ brokers: brokers(), prefix, partitions, configEntries, groups }, fn),
    openSink: async (config: KafkaConfig, sinkContext: ConnectorContext = context): Promise<KafkaSink> => {
      const sink = new KafkaSink(config, sinkContext);
      await sink.connect(signal());
      return sink;
    },
    openSource: async (config: KafkaConfig): Promise<KafkaSource> => {
      const source = new KafkaSource(config, context);
      await source.connect(signal());
      return source;
    },
  };
}
