/**
 * Creates an endpoint's topic at connect when it is missing (`createTopic:`), through Kafka's
 * admin API. A topic that exists is left as it is: its partitions and configs are not compared
 * or changed (Kafka would refuse to lower partitions, and changing configs is an operator's call).
 */
import type { Admin, ITopicConfig } from 'kafkajs';
import { untilAborted, type ConnectorContext } from '../../src/spi/index.js';
import { createAdmin, disconnectFully } from './client.js';
import { classifyConnectionError, isSettlingTopicError } from './errors.js';
import type { KafkaConfig, KafkaCreateTopicConfig } from './spec.js';

type Clock = NonNullable<ConnectorContext['clock']>;

/** The clock of a context that brings none: the system's time and timers. */
const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => setTimeout(callback, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How often and how patiently a topic creation that met a settling broker is tried again. */
export interface TopicCreationRetry {
  /** Attempts in all, the first one included. */
  readonly attempts: number;
  /** The pause after the first failed attempt, ms; each next pause doubles, up to `maxDelayMs`. */
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
}

/**
 * Eight attempts, pauses of 0.25, 0.5, 1, 2, 4, 4 and 4 s (about 16 s in all): longer than a
 * freshly formatted broker takes to know its own topics, short enough that a broker that stays
 * wrong is reported soon.
 */
export const TOPIC_CREATION_RETRY: TopicCreationRetry = { attempts: 8, firstDelayMs: 250, maxDelayMs: 4000 };

/** The pause before attempt `attempt + 1`, after `attempt` failed ones (1-based). */
export function topicCreationDelay(
  attempt: number,
  retry: TopicCreationRetry = TOPIC_CREATION_RETRY,
): number {
  return Math.min(retry.maxDelayMs, retry.firstDelayMs * 2 ** (attempt - 1));
}

/** What {@link createTopicsRetrying} waits with, and whom it tells of a retry. */
export interface TopicCreationOptions {
  /** Absent, the system clock. */
  readonly clock?: Clock | undefined;
  readonly signal?: AbortSignal;
  readonly retry?: TopicCreationRetry;
  /** Called before each pause, with the error that made the attempt fail. */
  readonly onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
}

/**
 * `admin.createTopics(… waitForLeaders)` tried again, after a pause that doubles, while the
 * broker answers as one that is still settling ({@link isSettlingTopicError}: the new topic or
 * its leaders not known yet, the controller moved); any other error, or the last attempt's, is
 * thrown as kafkajs gave it. Resolves whether the topics were made: false when they all existed.
 *
 * A failed attempt may have made the topics before it failed (most often in the wait for
 * leaders), so the next one finds them existing: then the leaders are waited for here, and the
 * topics count as made.
 */
export async function createTopicsRetrying(
  admin: Admin,
  topics: ITopicConfig[],
  options: TopicCreationOptions = {},
): Promise<boolean> {
  const { clock = systemClock, signal, retry = TOPIC_CREATION_RETRY } = options;
  const names = topics.map(({ topic }) => topic);
  for (let attempt = 1; ; attempt += 1) {
    try {
      const made = await abortable(admin.createTopics({ topics, waitForLeaders: true }), signal);
      if (made || attempt === 1) return made;
      await abortable(leadersElected(admin, names), signal);
      return true;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (attempt >= retry.attempts || !isSettlingTopicError(error)) throw error;
      const delayMs = topicCreationDelay(attempt, retry);
      options.onRetry?.(error, attempt, delayMs);
      await pause(clock, delayMs, signal);
    }
  }
}

/** Resolves when every partition of `topics` has a leader; rejects as a settling broker does otherwise. */
async function leadersElected(admin: Admin, topics: string[]): Promise<void> {
  const metadata = await admin.fetchTopicMetadata({ topics });
  const leaderless = metadata.topics.filter(
    ({ partitions }) => partitions.length === 0 || partitions.some(({ leader }) => leader < 0),
  );
  if (leaderless.length > 0)
    throw Object.assign(new Error(`no leader yet for topic '${leaderless[0]!.name}'`), {
      type: 'LEADER_NOT_AVAILABLE',
    });
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal === undefined ? promise : untilAborted(promise, signal);
}

/** Waits `delayMs` on `clock`; rejects with the signal's reason when it aborts first. */
function pause(clock: Clock, delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  let handle: unknown;
  const waited = new Promise<void>((resolve) => {
    handle = clock.setTimer(resolve, delayMs);
  });
  return abortable(waited, signal).finally(() => clock.clearTimer(handle));
}

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
 * A broker that is still settling (just started, the topic's news not everywhere yet) is asked
 * again with backoff ({@link createTopicsRetrying}), not reported as a wrong configuration.
 */
export async function ensureTopic(
  config: KafkaConfig & { readonly createTopic: KafkaCreateTopicConfig },
  context: ConnectorContext,
  signal: AbortSignal,
): Promise<boolean> {
  const admin = createAdmin(config, context);
  try {
    await untilAborted(admin.connect(), signal);
    const created = await createTopicsRetrying(admin, [topicToCreate(config.topic, config.createTopic)], {
      clock: context.clock,
      signal,
      onRetry: (error, attempt, delayMs) =>
        context.logger.warn(
          {
            topic: config.topic,
            attempt,
            delayMs,
            error: error instanceof Error ? error.message : String(error),
          },
          'kafka topic creation met a broker that is still settling, trying again',
        ),
    });
    if (created) context.logger.info({ topic: config.topic }, 'kafka topic created');
    return created;
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw classifyConnectionError(error, `creating kafka topic '${config.topic}'`);
  } finally {
    await disconnectFully(admin);
  }
}
