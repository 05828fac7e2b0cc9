import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { Gateway } from '../../../src/gateway/index.js';

/** What the examples reference; nothing connects, so any well-formed values do. */
const env = {
  AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
  MQTT_URL: 'mqtt://127.0.0.1:1883',
  KAFKA_BROKER: '127.0.0.1:9092',
};

const files = [
  'config/gateway.yaml',
  ...(await readdir('config/examples'))
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .map((name) => `config/examples/${name}`),
];

test('config - the examples are the ones the docs name', () => {
  assert.deepEqual(files.slice(1), [
    'config/examples/error-replay.yaml',
    'config/examples/kafka-to-mqtt-durable.yaml',
    'config/examples/mqtt-devices-to-kafka.yaml',
    'config/examples/xml-orders-rabbitmq-to-kafka.yaml',
  ]);
});

for (const file of files) {
  test(`config - ${file} validates (schema, cross-field checks and a dry build)`, async () => {
    const { config } = await loadConfig(file, { registry: builtinRegistry, env });
    assert.deepEqual(await Gateway.check(config), []);
    assert.ok(config.bridges.length > 0);
  });
}

test('config - docker/gateway-ha.yaml, the compose file’s active/standby instance, validates and builds', async () => {
  const { config } = await loadConfig('docker/gateway-ha.yaml', {
    registry: builtinRegistry,
    env: {
      ...env,
      PG_URL: 'postgres://gateway:gateway@postgres:5432/gateway',
      JMS_GATEWAY_ADMIN_TOKEN: 'f3a9c1d27b8e4f60a5d9c3b1e7f2a48d',
    },
  });
  assert.deepEqual(await Gateway.check(config), []);
  assert.equal(config.store.type, 'postgres');
  assert.equal(config.ha.enabled, true);
});
