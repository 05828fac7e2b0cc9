/**
 * The conformance suite against RabbitMQ: each endpoint is a fresh durable queue (so a broker
 * restart keeps it), declared by the source and published to through the default exchange.
 */
import assert from 'node:assert/strict';
import { connect } from 'amqplib';
import { resolveConfig } from '../../src/spi/index.js';
import { amqpConnector, type AmqpConfig } from '../../connectors/amqp/index.js';
import { uniqueName } from '../helpers/names.js';
import { conformanceSuite } from './suite.js';

function config(fields: Record<string, unknown>): AmqpConfig {
  const { config, errors } = resolveConfig(amqpConnector.config, fields, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

conformanceSuite('amqp', {
  broker: 'amqp',
  endpoint: ({ url }) => {
    const queue = uniqueName('q-conformance');
    return Promise.resolve({
      source: (context) =>
        amqpConnector.createSource!(
          config({ url, queue, declare: { queues: [{ name: queue }] }, prefetch: 50 }),
          context,
        ),
      sink: (context) => amqpConnector.createSink!(config({ url, queue }), context),
      cleanup: async () => {
        const connection = await connect(url);
        try {
          const channel = await connection.createChannel();
          await channel.deleteQueue(queue);
        } finally {
          await connection.close();
        }
      },
    });
  },
  parallel: { readers: 1, perUnitOrder: true },
});
