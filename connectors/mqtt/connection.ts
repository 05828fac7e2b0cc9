/**
 * Opening an MQTT client and telling the runtime what a broker error means: a connection that
 * is down (reconnect with backoff) or an endpoint that is misconfigured (an operator must act).
 * The runtime owns reconnection, so mqtt.js's own reconnect is off.
 */
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import {
  EndpointConfigurationError,
  NotConnectedError,
  type ConnectorContext,
  untilAborted,
} from '../../src/spi/index.js';
import type { MqttConfig } from './spec.js';

/**
 * CONNACK and SUBACK reason codes that mean the configuration is wrong: 3.1.1's 1 (protocol
 * version), 2 (client id rejected), 4 (bad user name or password), 5 (not authorized), and MQTT
 * 5's 0x84-0x87, 0x8a (banned), 0x8c (bad authentication method), 0x8f/0x90 (invalid topic),
 * 0x9a-0x9b (retain, QoS not supported), 0x9e (shared subscriptions not supported), 0xa1-0xa2.
 */
const CONFIGURATION_CODES = new Set([
  1, 2, 4, 5, 0x84, 0x85, 0x86, 0x87, 0x8a, 0x8c, 0x8f, 0x90, 0x9a, 0x9b, 0x9e, 0xa1, 0xa2,
]);

/** The MQTT reason code of an mqtt.js error, if it has one. */
export function reasonCode(error: unknown): number | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'number' ? code : undefined;
}

/** The runtime's view of an mqtt.js error (see {@link CONFIGURATION_CODES}); never includes the URL. */
export function classify(error: unknown, what: string): NotConnectedError | EndpointConfigurationError {
  if (error instanceof NotConnectedError || error instanceof EndpointConfigurationError) return error;
  const detail = error instanceof Error ? error.message : String(error);
  const code = reasonCode(error);
  if (code !== undefined && CONFIGURATION_CODES.has(code)) {
    return new EndpointConfigurationError(`${what}: ${detail} (reason code ${code})`, { cause: error });
  }
  return new NotConnectedError(`${what}: ${detail}`, { cause: error });
}

/** The broker's host and port, for messages (the URL itself holds credentials). */
export function brokerAddress(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the configured URL';
  }
}

/**
 * Creates a client, lets `prepare` install its hooks before any packet can arrive (a persistent
 * session's queued messages come right after CONNACK), connects and waits for CONNACK.
 */
export async function openClient(
  config: MqttConfig,
  context: ConnectorContext,
  options: IClientOptions,
  prepare: (client: MqttClient) => void,
  signal: AbortSignal,
): Promise<MqttClient> {
  const address = brokerAddress(config.url);
  let client: MqttClient;
  try {
    client = connect(config.url, {
      protocolVersion: config.protocolVersion,
      keepalive: config.keepalive,
      connectTimeout: config.connectTimeout,
      reconnectPeriod: 0,
      queueQoSZero: false,
      resubscribe: false,
      ...options,
      manualConnect: true,
    });
  } catch (error) {
    throw new EndpointConfigurationError(
      `invalid MQTT url for bridge '${context.name}': ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  prepare(client);
  const connected = new Promise<void>((resolve, reject) => {
    client.once('connect', () => resolve());
    client.once('error', reject);
    client.once('close', () =>
      reject(new NotConnectedError(`the MQTT broker at ${address} closed the connection`)),
    );
  });
  client.connect();
  try {
    await untilAborted(connected, signal);
    return client;
  } catch (error) {
    client.end(true);
    if (signal.aborted) throw error;
    throw classify(error, `cannot connect to the MQTT broker at ${address}`);
  }
}

/** Disconnects politely (DISCONNECT) when the connection is up, and gives up waiting after a second. */
export async function closeClient(client: MqttClient): Promise<void> {
  if (!client.connected) {
    client.end(true);
    return;
  }
  await Promise.race([
    new Promise<void>((resolve) => client.end(false, {}, () => resolve())),
    new Promise<void>((resolve) => setTimeout(resolve, 1000).unref()),
  ]);
  client.end(true);
}
