/**
 * Builds the kafkajs client for an endpoint: brokers, TLS, SASL, timeouts, and kafkajs's own log
 * lines routed to the bridge's logger.
 */
import { Kafka, logLevel } from 'kafkajs';
import type { KafkaConfig as KafkaJSConfig, LogEntry, SASLOptions } from 'kafkajs';
import type { ConnectorContext, EngineLogger } from '../../src/spi/index.js';
import type { KafkaConfig, KafkaSaslConfig, KafkaSslConfig } from './spec.js';

/**
 * kafkajs warnings that restate a choice this connector made on purpose: the bridge runtime owns
 * retries (DESIGN.md), so the client's retries are bounded even for the idempotent producer.
 */
const EXPECTED_WARNINGS = ['Limiting retries for the idempotent producer'];

/** The default client id and group id: one per bridge, readable in broker tools. */
export function defaultClientId(context: ConnectorContext): string {
  return `jms-gateway-${context.name}`;
}

/** A kafkajs client for the endpoint. */
export function createKafkaClient(config: KafkaConfig, context: ConnectorContext): Kafka {
  const options: KafkaJSConfig = {
    brokers: [...config.brokers],
    clientId: config.clientId ?? defaultClientId(context),
    connectionTimeout: config.connectionTimeout,
    requestTimeout: config.requestTimeout,
    retry: { retries: config.retries },
    logLevel: logLevel.WARN,
    logCreator: () => (entry) => logEntry(context.logger, entry),
  };
  const ssl = sslOptions(config.ssl);
  if (ssl !== undefined) options.ssl = ssl;
  const sasl = saslOptions(config.sasl);
  if (sasl !== undefined) options.sasl = sasl;
  return new Kafka(options);
}

function sslOptions(ssl: KafkaSslConfig): KafkaJSConfig['ssl'] {
  if (!ssl.enabled) return undefined;
  return {
    rejectUnauthorized: ssl.rejectUnauthorized,
    ...(ssl.ca !== undefined ? { ca: ssl.ca } : {}),
    ...(ssl.cert !== undefined ? { cert: ssl.cert } : {}),
    ...(ssl.key !== undefined ? { key: ssl.key } : {}),
    ...(ssl.passphrase !== undefined ? { passphrase: ssl.passphrase } : {}),
    ...(ssl.servername !== undefined ? { servername: ssl.servername } : {}),
  };
}

function saslOptions(sasl: KafkaSaslConfig): SASLOptions | undefined {
  if (sasl.mechanism === 'none') return undefined;
  // checkKafkaConfig has made sure both are set.
  const username = sasl.username ?? '';
  const password = sasl.password ?? '';
  return { mechanism: sasl.mechanism, username, password };
}

/**
 * kafkajs logs every failed attempt at ERROR although it retries and then reports the failure
 * (which the connector turns into a typed error for the runtime): its errors are `warn` here,
 * "recovered or reported". Secrets never reach these lines: kafkajs does not log credentials.
 */
function logEntry(logger: EngineLogger, entry: LogEntry): void {
  const { message, ...fields } = entry.log;
  const text = `kafka client: ${message}`;
  const extra = { namespace: entry.namespace, ...fields };
  if (EXPECTED_WARNINGS.some((known) => message.startsWith(known))) {
    logger.debug(extra, text);
    return;
  }
  switch (entry.level) {
    case logLevel.ERROR:
    case logLevel.WARN:
      logger.warn(extra, text);
      return;
    default:
      logger.debug(extra, text);
  }
}
