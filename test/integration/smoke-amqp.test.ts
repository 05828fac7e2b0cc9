import assert from 'node:assert/strict';
import { connect } from 'amqplib';
import type { ConsumeMessage } from 'amqplib';
import { brokerTest } from '../helpers/brokers.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';

brokerTest(
  'amqp',
  'amqp broker - a message published to a fresh queue is consumed back',
  async ({ url }) => {
    const queue = uniqueName('q-smoke');
    const body = `hello ${queue}`;
    const connection = await connect(url);
    try {
      const channel = await connection.createChannel();
      try {
        await channel.assertQueue(queue, { durable: false });
        const received = new Promise<ConsumeMessage>((resolve) => {
          void channel.consume(queue, (message) => {
            if (message !== null) resolve(message);
          });
        });
        channel.sendToQueue(queue, Buffer.from(body), { contentType: 'text/plain' });
        const message = await withTimeout(received, 10_000, `a message on queue '${queue}'`);
        channel.ack(message);
        assert.equal(message.content.toString('utf8'), body);
        assert.equal(message.properties.contentType, 'text/plain');
      } finally {
        await channel.deleteQueue(queue);
        await channel.close();
      }
    } finally {
      await connection.close();
    }
  },
  { timeout: 30_000 },
);
