import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../../src/spi/index.js';
import type { FieldSpec } from '../../../../src/spi/index.js';
import { checkKafkaConfig, kafkaConfigSchema } from '../../../../connectors/kafka/spec.js';
import type { KafkaConfig } from '../../../../connectors/kafka/spec.js';
import { kafkaConnector } from '../../../../connectors/kafka/index.js';

function resolve(value: Record<string, unknown>): KafkaConfig {
  const { config, errors } = resolveConfig(kafkaConfigSchema, value, 'target');
  assert.deepEqual(errors, []);
  return config!;
}

test('kafka connector - defaults are safe: acks all, idempotent, key from JMSXGroupID (BRG-2)', () => {
  const config = resolve({ brokers: ['k:9092'], topic: 'orders' });
  assert.equal(config.acks, -1);
  assert.equal(config.idempotent, true);
  assert.equal(config.maxInFlightRequests, 1);
  assert.deepEqual(config.key, { from: 'property' });
  assert.equal(config.fromBeginning, false);
  assert.equal(config.compression, 'none');
  assert.equal(config.allowAutoTopicCreation, false);
  assert.deepEqual(config.sasl, { mechanism: 'none' });
  assert.equal(config.ssl.enabled, false);
  assert.deepEqual(checkKafkaConfig(config, 'sink'), []);
  assert.deepEqual(checkKafkaConfig(config, 'source'), []);
});

test('kafka connector - every field is described and passwords are secret (BRG-5)', () => {
  const visit = (fields: Readonly<Record<string, FieldSpec>>, path: string): void => {
    for (const [name, field] of Object.entries(fields)) {
      assert.ok(field.description.length > 10, `${path}${name} has a description`);
      if (field.type === 'object') visit(field.fields, `${path}${name}.`);
    }
  };
  visit(kafkaConfigSchema.fields, '');
  const sasl = kafkaConfigSchema.fields['sasl'];
  assert.ok(sasl?.type === 'object');
  const password = sasl.fields['password'];
  assert.ok(password?.type === 'string' && password.secret === true);
  const ssl = kafkaConfigSchema.fields['ssl'];
  assert.ok(ssl?.type === 'object');
  const key = ssl.fields['key'];
  assert.ok(key?.type === 'string' && key.secret === true);
});

test('kafka connector - unknown keys and malformed brokers are rejected with their path (BRG-5)', () => {
  const { errors } = resolveConfig(
    kafkaConfigSchema,
    { brokers: ['nohost'], topic: 't', acks: 2, prefech: 1 },
    'x',
  );
  const paths = errors.map((error) => error.path).sort();
  assert.deepEqual(paths, ['x.acks', 'x.brokers[0]', 'x.prefech']);
});

test('kafka connector - settings that contradict each other are refused (BRG-2)', () => {
  const base = { brokers: ['k:9092'], topic: 't' };
  const paths = (value: Record<string, unknown>, role: 'source' | 'sink'): string[] =>
    checkKafkaConfig(resolve({ ...base, ...value }), role).map((error) => error.path);
  assert.deepEqual(paths({ acks: 1 }, 'sink'), ['acks']);
  assert.deepEqual(paths({ acks: 1, idempotent: false }, 'sink'), []);
  assert.deepEqual(paths({ maxInFlightRequests: 6 }, 'sink'), ['maxInFlightRequests']);
  assert.deepEqual(paths({ transactionalId: 'tx', idempotent: false }, 'sink'), ['idempotent']);
  assert.deepEqual(paths({ key: { from: 'header', name: 'JMSDestination' } }, 'sink'), ['key.name']);
  assert.deepEqual(paths({ key: { from: 'xpath' } }, 'sink'), ['key.expression']);
  assert.deepEqual(paths({ sasl: { mechanism: 'plain' } }, 'sink'), ['sasl.username', 'sasl.password']);
  assert.deepEqual(paths({ heartbeatInterval: 5000, sessionTimeout: 5000 }, 'source'), ['heartbeatInterval']);
  const logger = { error() {}, warn() {}, info() {}, debug() {} };
  assert.throws(
    () => kafkaConnector.createSink!(resolve({ ...base, acks: 0 }), { name: 'b', logger }),
    /acks: expected -1/,
  );
});

test('kafka connector - createTopic is off unless given; given, unset counts take the broker defaults', async () => {
  const { topicToCreate } = await import('../../../../connectors/kafka/create-topic.js');
  assert.equal(resolve({ brokers: ['k:9092'], topic: 'orders' }).createTopic, undefined);
  const config = resolve({
    brokers: ['k:9092'],
    topic: 'orders',
    createTopic: { configs: { 'retention.ms': 86400000, 'cleanup.policy': 'compact' } },
  });
  assert.deepEqual(topicToCreate(config.topic, config.createTopic!), {
    topic: 'orders',
    numPartitions: -1,
    replicationFactor: -1,
    configEntries: [
      { name: 'retention.ms', value: '86400000' },
      { name: 'cleanup.policy', value: 'compact' },
    ],
  });
  const { errors } = resolveConfig(
    kafkaConfigSchema,
    { brokers: ['k:9092'], topic: 'orders', createTopic: { partitions: 0, replicas: 1 } },
    'target',
  );
  assert.deepEqual(
    errors.map((error) => error.message),
    [
      'target.createTopic.replicas: unknown setting (known: configs, partitions, replicationFactor)',
      'target.createTopic.partitions: expected an integer >= 1',
    ],
  );
});
