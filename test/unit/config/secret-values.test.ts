import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { credentialsIn, maskUrlCredentials } from '../../../src/config/credentials.js';
import { parseConfig } from '../../../src/config/load-config.js';

test('config - secrets are the values of fields declared secret, only the credentials of URLs, from the file or the environment', () => {
  const text = [
    'store: { memory: true }',
    'connections:',
    '  rabbit: { type: amqp, url: "${AMQP_URL}" }',
    'bridges:',
    '  - name: orders',
    '    source: { type: amqp, connection: rabbit, queue: orders }',
    '    target:',
    '      type: kafka',
    '      brokers: ["${KAFKA_BROKERS}"]',
    '      topic: "${TOPIC}"',
    '      sasl: { mechanism: plain, username: gateway, password: written-in-file }',
    '      ssl: { enabled: true, passphrase: "${KEY_PASSPHRASE}" }',
  ].join('\n');
  const env = {
    AMQP_URL: 'amqp://gw:p%40ss-word@rabbit.internal:5672/prod',
    KAFKA_BROKERS: 'kafka-1.internal:9092',
    TOPIC: 'orders.v1',
    KEY_PASSPHRASE: 'key-passphrase',
  };
  const { config } = parseConfig(text, 'gw.yaml', { registry: builtinRegistry, env });
  assert.deepEqual([...config.secrets].sort(), [
    'key-passphrase',
    'p%40ss-word',
    'p@ss-word',
    'written-in-file',
  ]);
});

test('config - credentials of a URL are its password and secret query values; a URL without them has none', () => {
  assert.deepEqual(credentialsIn('mqtts://device:s3cret@broker:8883?token=abc123&qos=1'), [
    's3cret',
    'abc123',
  ]);
  assert.deepEqual(credentialsIn('amqp://rabbit.internal:5672'), []);
  assert.deepEqual(credentialsIn('plain-password'), ['plain-password']);
  assert.equal(
    maskUrlCredentials(
      'connect amqp://gw:p@ss@10.0.0.1:5672/vh?heartbeat=30&password=x1 failed; mqtt://10.0.0.2:1883 ok',
    ),
    'connect amqp://gw:***@10.0.0.1:5672/vh?heartbeat=30&password=*** failed; mqtt://10.0.0.2:1883 ok',
  );
});
