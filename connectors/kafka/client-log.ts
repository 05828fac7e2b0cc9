/**
 * Which of kafkajs's own log lines an operator needs to see. kafkajs logs every failed attempt
 * and every step of group membership at WARN or ERROR, although it retries, and the connector
 * reports what finally fails to the bridge runtime (which warns once per reason, or fails the
 * bridge). Decided by the kind of message:
 *
 * - `error`: credentials, permissions and TLS: nothing recovers until an operator fixes them.
 * - `debug`: routine: connection attempts and retries, connections the connector itself closes,
 *   broker responses with an error (the request's outcome is reported by the connector), group
 *   rebalancing and re-joins, consumer restarts and crashes (the connector reconnects), notices
 *   about kafkajs's own defaults, and everything kafkajs logs at INFO or DEBUG.
 * - `warn`: anything else kafkajs warns or errors about (an offset reset, unknown topics in the
 *   group): rare, and worth a look.
 */

/** A kafkajs log entry as the connector sees it (its `logCreator` argument, flattened). */
export interface KafkaClientEntry {
  /** kafkajs's level: 1 ERROR, 2 WARN, 4 INFO, 5 DEBUG. */
  readonly level: number;
  readonly message: string;
  /** The `error` field kafkajs adds to some lines (a broker response's error message). */
  readonly error?: unknown;
  /** Set by kafkajs's retrier: the line is one attempt of several. */
  readonly retryCount?: unknown;
}

/** The gateway level a kafkajs line is logged at. */
export type KafkaClientLevel = 'error' | 'warn' | 'debug';

const KAFKA_ERROR = 1;
const KAFKA_WARN = 2;

/** Credentials, permissions, TLS: an operator must act. */
const MUST_ACT =
  /\bSASL\b|authenticat|authoriz|not authorized|access denied|certificate|self[- ]signed|unable to verify|\bSSL\b|\bTLS\b/i;

/** Lines kafkajs writes in the normal course of reconnecting, retrying and group membership. */
const ROUTINE = [
  /^Connection error\b/,
  /^Connection timeout\b/,
  /^Connection closed\b/,
  /^Failed to connect to (seed )?broker/,
  /^Failed to send messages\b/,
  /^Response \w+\(key: \d+, version: \d+\)/,
  /^The group is rebalancing, re-joining/,
  /^The coordinator is not aware of this member, re-joining the group/,
  /, resync group$/,
  /^Consumer is not aware of all assigned partitions, refreshing metadata/,
  /^Restarting the consumer\b/,
  /^Crash: /,
  /^Caught error when (disconnecting|stopping) the consumer/,
  /^KafkaJS v2\.0\.0 switched default partitioner/,
  /^Limiting retries for the idempotent producer/,
];

/** The gateway level of one kafkajs line. */
export function kafkaClientLevel(entry: KafkaClientEntry): KafkaClientLevel {
  if (entry.level !== KAFKA_ERROR && entry.level !== KAFKA_WARN) return 'debug';
  const detail = typeof entry.error === 'string' ? `${entry.message} ${entry.error}` : entry.message;
  if (MUST_ACT.test(detail)) return 'error';
  if (entry.retryCount !== undefined) return 'debug';
  if (ROUTINE.some((pattern) => pattern.test(entry.message))) return 'debug';
  return 'warn';
}
