import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createProducer, disconnectFully } from '../../../../connectors/kafka/client.js';
import { kafkaClientLevel } from '../../../../connectors/kafka/client-log.js';
import { type KafkaConfig, kafkaConfigSchema } from '../../../../connectors/kafka/spec.js';
import { type EngineLogger, resolveConfig } from '../../../../src/spi/index.js';
import { closedPort } from '../../../helpers/ports.js';

type Line = { level: 'error' | 'warn' | 'info' | 'debug'; message: string };

function capturing(lines: Line[]): EngineLogger {
  const at = (level: Line['level']) => (_fields: Record<string, unknown>, message: string) =>
    void lines.push({ level, message });
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

test('kafka connector - the client retrying an unreachable broker logs its attempts at debug, not warn', async () => {
  const port = await closedPort();
  const { config } = resolveConfig(
    kafkaConfigSchema,
    { brokers: [`127.0.0.1:${port}`], topic: 't', retries: 2, connectionTimeout: 300 },
    'target',
  );
  const lines: Line[] = [];
  const producer = createProducer(
    config as KafkaConfig,
    { name: 'chatter', logger: capturing(lines) },
    {
      retry: { retries: 2, initialRetryTime: 10 },
    },
  );
  await assert.rejects(producer.connect());
  await disconnectFully(producer);
  const kafka = lines.filter((line) => line.message.startsWith('kafka client:'));
  assert.ok(
    kafka.some((line) => /ECONNREFUSED/.test(line.message)),
    JSON.stringify(kafka),
  );
  assert.deepEqual(
    kafka.filter((line) => line.level !== 'debug'),
    [],
    'reconnect chatter is debug; the connector reports the failure to the runtime',
  );
});

test('kafka connector - kafkajs lines by kind: credentials and TLS are errors, routine is debug, the rest warn', () => {
  const ERROR = 1;
  const WARN = 2;
  const INFO = 4;
  const level = (message: string, extra: { level?: number; error?: string; retryCount?: number } = {}) =>
    kafkaClientLevel({
      level: extra.level ?? ERROR,
      message,
      error: extra.error,
      retryCount: extra.retryCount,
    });
  // An operator must act.
  assert.equal(
    level('SASL PLAIN authentication failed: Authentication failed: Invalid username or password'),
    'error',
  );
  assert.equal(
    level('Response SaslAuthenticate(key: 36, version: 2)', { error: 'Authentication failed' }),
    'error',
  );
  assert.equal(
    level('Response Metadata(key: 3, version: 6)', {
      error: 'Not authorized to access topics: [Topic authorization failed]',
    }),
    'error',
  );
  assert.equal(level('Connection error: self-signed certificate in certificate chain'), 'error');
  // Routine: the runtime reports the outcome, or nothing is wrong.
  for (const message of [
    'Connection error: connect ECONNREFUSED 127.0.0.1:9092',
    'Connection timeout',
    'Failed to connect to seed broker, trying another broker from the list: Connection error',
    'Connection error: connection closed by the connector: the client was disconnected',
    'Response Metadata(key: 3, version: 6)',
    'The group is rebalancing, re-joining',
    'The coordinator is not aware of this member, re-joining the group',
    'Specified group generation id is not valid, resync group',
    'Restarting the consumer in 300ms',
    'Crash: KafkaJSNumberOfRetriesExceeded: Connection error: connect ECONNREFUSED 127.0.0.1:9092',
    'KafkaJS v2.0.0 switched default partitioner. To retain the same partitioning behavior ...',
  ])
    assert.equal(level(message, { level: message.startsWith('The group') ? WARN : ERROR }), 'debug', message);
  assert.equal(level('Some request failed', { retryCount: 1 }), 'debug');
  assert.equal(level('Consumer has joined the group', { level: INFO }), 'debug');
  // Rare and worth a look.
  assert.equal(level('Offset out of range, resetting to default offset'), 'warn');
  assert.equal(level('Consumer group received unsubscribed topics', { level: WARN }), 'warn');
});
