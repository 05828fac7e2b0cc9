/**
 * Builds the kafkajs client for an endpoint: brokers, TLS, SASL, timeouts, and kafkajs's own log
 * lines routed to the bridge's logger.
 */
import { type Socket, connect as netConnect, isIP } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type {
  Admin,
  Consumer,
  ConsumerConfig,
  ISocketFactory,
  KafkaConfig as KafkaJSConfig,
  LogEntry,
  Producer,
  ProducerConfig,
  SASLOptions,
} from 'kafkajs';
import type { ConnectorContext, EngineLogger } from '../../src/spi/index.js';
import { kafkaClientLevel } from './client-log.js';
import { Kafka, logLevel } from './kafkajs.js';
import type { KafkaConfig, KafkaSaslConfig, KafkaSslConfig } from './spec.js';

/** The default client id and group id: one per bridge, readable in broker tools. */
export function defaultClientId(context: ConnectorContext): string {
  return `jms-gateway-${context.name}`;
}

/** As kafkajs's own socket factory: TCP keep-alive after a minute of silence. */
const KEEP_ALIVE_DELAY_MS = 60_000;

/**
 * The connections of one kafkajs client. kafkajs can leave a connection open after `disconnect()`
 * resolved: a request retried across a broker restart reconnects behind it, and nothing closes
 * that connection (it then keeps the process alive). The connectors close what is left once the
 * client is disconnected, and any connection it opens after that.
 */
class ClientSockets {
  readonly #open = new Set<Socket>();
  #closed = false;

  readonly factory: ISocketFactory = ({ host, port, ssl, onConnect }) => {
    const socket: Socket = ssl
      ? tlsConnect({ host, port, ...(isIP(host) ? {} : { servername: host }), ...ssl }, onConnect)
      : netConnect({ host, port }, onConnect);
    socket.setKeepAlive(true, KEEP_ALIVE_DELAY_MS);
    if (this.#closed) {
      socket.destroy(closedByConnector());
      return socket;
    }
    this.#open.add(socket);
    socket.once('close', () => this.#open.delete(socket));
    return socket;
  };

  closeAll(): void {
    this.#closed = true;
    // With an error: kafkajs reacts to 'error' (not to 'close') by failing the connection's
    // requests and stopping its timers, which would otherwise keep the process alive too.
    for (const socket of this.#open) socket.destroy(closedByConnector());
    this.#open.clear();
  }
}

function closedByConnector(): Error {
  return new Error('connection closed by the connector: the client was disconnected');
}

const socketsOf = new WeakMap<Consumer | Producer | Admin, ClientSockets>();

/** A kafkajs consumer on its own client for the endpoint; close it with {@link disconnectFully}. */
export function createConsumer(
  config: KafkaConfig,
  context: ConnectorContext,
  options: ConsumerConfig,
): Consumer {
  return onOwnClient(config, context, (kafka) => kafka.consumer(options));
}

/** A kafkajs producer on its own client for the endpoint; close it with {@link disconnectFully}. */
export function createProducer(
  config: KafkaConfig,
  context: ConnectorContext,
  options: ProducerConfig,
): Producer {
  return onOwnClient(config, context, (kafka) => kafka.producer(options));
}

/**
 * A kafkajs admin client for the endpoint (the sink reads size limits with it, the bridge its
 * duplicate window, `check --connect` what exists); close it with {@link disconnectFully}. `retries`
 * replaces the endpoint's for connecting and for every request (0: a check reports at once).
 */
export function createAdmin(config: KafkaConfig, context: ConnectorContext, retries?: number): Admin {
  const client = retries === undefined ? config : { ...config, retries };
  return onOwnClient(client, context, (kafka) => kafka.admin({ retry: { retries: client.retries } }));
}

/** Builds `create`'s client (consumer, producer, admin) on a new client whose connections are tracked. */
function onOwnClient<T extends Consumer | Producer | Admin>(
  config: KafkaConfig,
  context: ConnectorContext,
  create: (kafka: Kafka) => T,
): T {
  const sockets = new ClientSockets();
  const client = create(createKafkaClient(config, context, sockets.factory));
  socketsOf.set(client, sockets);
  return client;
}

/** Disconnects a consumer, producer or admin, then closes every connection its client still holds. */
export async function disconnectFully(client: Consumer | Producer | Admin): Promise<void> {
  await client.disconnect().catch(() => undefined);
  socketsOf.get(client)?.closeAll();
}

/** A kafkajs client for the endpoint, opening its connections through `socketFactory`. */
function createKafkaClient(
  config: KafkaConfig,
  context: ConnectorContext,
  socketFactory: ISocketFactory,
): Kafka {
  const options: KafkaJSConfig = {
    brokers: [...config.brokers],
    clientId: config.clientId ?? defaultClientId(context),
    connectionTimeout: config.connectionTimeout,
    requestTimeout: config.requestTimeout,
    retry: { retries: config.retries },
    // INFO too: its lifecycle lines (joined the group, ...) are there at debug.
    logLevel: logLevel.INFO,
    logCreator: () => (entry) => logEntry(context.logger, entry),
    socketFactory,
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

/** A kafkajs line at the level its kind deserves (client-log.ts); kafkajs does not log credentials. */
function logEntry(logger: EngineLogger, entry: LogEntry): void {
  const { message, ...fields } = entry.log;
  const level = kafkaClientLevel({
    level: entry.level,
    message,
    error: fields.error,
    retryCount: fields.retryCount,
  });
  logger[level]({ namespace: entry.namespace, ...fields }, `kafka client: ${message}`);
}
