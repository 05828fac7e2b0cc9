import assert from 'node:assert/strict';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import type { KafkaMessage } from 'kafkajs';
import { brokerTest } from '../helpers/brokers.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';

brokerTest(
  'kafka',
  'kafka broker - a message produced to a fresh topic is consumed back by a fresh group',
  async ({ brokers }) => {
    const topic = uniqueName('t-smoke');
    const groupId = uniqueName('g-smoke');
    const body = `hello ${topic}`;
    const kafka = new Kafka({ clientId: uniqueName('smoke'), brokers, logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    const producer = kafka.producer();
    const consumer = kafka.consumer({ groupId });
    await admin.connect();
    try {
      await createKafkaTopics(admin, [{ topic, numPartitions: 1, replicationFactor: 1 }]);
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'k', value: body }] });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const received = new Promise<KafkaMessage>((resolve) => {
        void consumer.run({
          eachMessage: ({ message }) => {
            resolve(message);
            return Promise.resolve();
          },
        });
      });
      const message = await withTimeout(received, 20_000, `a message on topic '${topic}'`);
      assert.equal(message.key?.toString('utf8'), 'k');
      assert.equal(message.value?.toString('utf8'), body);
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await admin.deleteGroups([groupId]).catch(() => undefined);
      await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await admin.disconnect();
    }
  },
  { timeout: 30_000 },
);
