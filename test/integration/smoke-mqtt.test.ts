import assert from 'node:assert/strict';
import { connectAsync } from 'mqtt';
import { brokerTest } from '../helpers/brokers.js';
import { uniqueName } from '../helpers/names.js';
import { withTimeout } from '../helpers/timeout.js';

brokerTest(
  'mqtt',
  'mqtt broker - a message published to a fresh topic is received by its subscriber',
  async ({ url }) => {
    const topic = `jms-gateway/smoke/${uniqueName('t')}`;
    const body = `hello ${topic}`;
    const client = await connectAsync(url, {
      clientId: uniqueName('smoke'),
      clean: true,
      protocolVersion: 5,
      reconnectPeriod: 0,
      connectTimeout: 5_000,
    });
    try {
      const received = new Promise<Buffer>((resolve) => {
        client.on('message', (messageTopic, payload) => {
          if (messageTopic === topic) resolve(payload);
        });
      });
      await client.subscribeAsync(topic, { qos: 1 });
      await client.publishAsync(topic, body, { qos: 1 });
      const payload = await withTimeout(received, 10_000, `a message on topic '${topic}'`);
      assert.equal(payload.toString('utf8'), body);
      await client.unsubscribeAsync(topic);
    } finally {
      await client.endAsync();
    }
  },
  { timeout: 30_000 },
);
