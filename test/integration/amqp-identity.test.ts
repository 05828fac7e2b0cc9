/**
 * JMSXUserID and JMSXAppID against a real RabbitMQ (MSG-2, BRG-6): `userId` and `appId` round
 * trip, and a JMSXUserID that is not the connection's user, which RabbitMQ would refuse as
 * `userId`, travels as a header without breaking the channel.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect } from 'amqplib';
import { TextMessage, resolveConfig, type ConnectorContext, type Message } from '../../src/spi/index.js';
import { amqpConnector, type AmqpConfig, AmqpSink, AmqpSource } from '../../connectors/amqp/index.js';
import { connectionUser } from '../../connectors/amqp/connection.js';
import { brokerTest } from '../helpers/brokers.js';
import { withTimeout } from '../helpers/timeout.js';

const TIMEOUT = { timeout: 30_000 };
const WAIT_MS = 10_000;
const context: ConnectorContext = {
  name: 'amqp-identity-it',
  logger: { error: () => {}, warn: () => {}, info: () => {}, debug: () => {} },
};

function config(url: string, fields: Record<string, unknown>): AmqpConfig {
  const { config, errors } = resolveConfig(amqpConnector.config, { url, ...fields }, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

function fromSender(user: string, app: string, text: string): Message {
  const message = new TextMessage(text);
  message.setProviderProperty('JMSXUserID', { type: 'string', value: user });
  message.setProviderProperty('JMSXAppID', { type: 'string', value: app });
  return message;
}

brokerTest(
  'amqp',
  "amqp connector - JMSXUserID of the connection's user is the broker-checked user-id, JMSXAppID the app-id; a foreign JMSXUserID travels as a header without breaking publishing (MSG-2, BRG-6)",
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const user = connectionUser(url);
    const source = new AmqpSource(
      config(url, { queue, declare: { queues: [{ name: queue, durable: false }] } }),
      context,
    );
    const sink = new AmqpSink(config(url, { queue }), context);
    const raw = await connect(url);
    try {
      const setup = await raw.createChannel();
      await setup.assertQueue(queue, { durable: false });
      await setup.close();
      await sink.connect(AbortSignal.timeout(WAIT_MS));
      // The foreign user first: had it gone out as user-id, the broker would close the channel
      // and the second send would fail.
      await sink.send(fromSender('someone-else', 'order-entry', 'foreign'), AbortSignal.timeout(WAIT_MS));
      await sink.send(fromSender(user, 'order-entry', 'own'), AbortSignal.timeout(WAIT_MS));

      const channel = await raw.createChannel();
      const foreign = await channel.get(queue, { noAck: false });
      const own = await channel.get(queue, { noAck: false });
      assert.ok(foreign && own, 'both messages reached the queue');
      assert.equal(foreign.properties.userId, undefined);
      assert.equal(String(foreign.properties.headers?.JMSXUserID), 'someone-else');
      assert.equal(foreign.properties.appId, 'order-entry');
      assert.equal(own.properties.userId, user);
      assert.equal(own.properties.appId, 'order-entry');
      channel.nackAll(true);
      await channel.close();

      await source.connect(AbortSignal.timeout(WAIT_MS));
      for (const expected of ['someone-else', user]) {
        const delivery = await withTimeout(
          source.receive(AbortSignal.timeout(WAIT_MS)),
          WAIT_MS,
          'a delivery from the amqp source',
        );
        assert.equal(delivery.message.getStringProperty('JMSXUserID'), expected);
        assert.equal(delivery.message.getStringProperty('JMSXAppID'), 'order-entry');
        await delivery.settle({ kind: 'ack' });
      }

      // What the mapping avoids: RabbitMQ refuses a user-id that is not the connection's user.
      const checked = await raw.createConfirmChannel();
      const closed = new Promise<Error>((resolve) => checked.on('error', resolve));
      checked.publish('', queue, Buffer.from('x'), { userId: `not-${user}` });
      const refusal = await withTimeout(closed, WAIT_MS, "the broker's refusal of a foreign user-id");
      assert.match(refusal.message, /PRECONDITION_FAILED/);
    } finally {
      await sink.close();
      await source.close();
      const cleanup = await raw.createChannel().catch(() => undefined);
      await cleanup?.deleteQueue(queue).catch(() => {});
      await raw.close().catch(() => {});
    }
  },
  TIMEOUT,
);
