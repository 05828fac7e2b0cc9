import assert from 'node:assert/strict';
import { test } from 'node:test';
import { amqpConnector } from '../../../../connectors/amqp/index.js';
import { declarationError } from '../../../../connectors/amqp/declare.js';
import { EndpointConfigurationError, resolveConfig } from '../../../../src/spi/index.js';

const URL = 'amqp://guest:guest@127.0.0.1:5672';

test('amqp spec - nothing is declared unless the endpoint says so', () => {
  const { config, errors } = resolveConfig(amqpConnector.config, { url: URL, queue: 'orders' }, 'source');
  assert.deepEqual(errors, []);
  assert.equal(config?.declare, undefined);
});

test('amqp spec - declarations take their defaults and keep argument types as written', () => {
  const { config, errors } = resolveConfig(
    amqpConnector.config,
    {
      url: URL,
      exchange: 'payments',
      declare: {
        exchanges: [{ name: 'payments', type: 'topic' }],
        queues: [{ name: 'payments.out', arguments: { 'x-queue-type': 'quorum', 'x-max-length': 100 } }],
        bindings: [{ queue: 'payments.out', exchange: 'payments' }],
      },
    },
    'target',
  );
  assert.deepEqual(errors, []);
  assert.deepEqual(config?.declare, {
    exchanges: [{ name: 'payments', type: 'topic', durable: true }],
    queues: [
      { name: 'payments.out', durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length': 100 } },
    ],
    bindings: [{ queue: 'payments.out', exchange: 'payments', routingKey: '' }],
  });
});

test('amqp spec - a bad declaration names its path and what was expected', () => {
  const { errors } = resolveConfig(
    amqpConnector.config,
    {
      url: URL,
      queue: 'orders',
      declare: {
        queues: [{ durable: 'yes', arguments: { 'x-max-length': [1] } }],
        exchanges: [{ name: 'x', type: 'fan-out' }],
        bindings: [{ queue: 'orders' }],
        exchnages: [],
      },
    },
    'source',
  );
  assert.deepEqual(
    errors.map((error) => error.message),
    [
      'source.declare.exchnages: unknown setting (known: bindings, exchanges, queues)',
      "source.declare.exchanges[0].type: expected one of 'direct', 'fanout', 'topic', 'headers'",
      'source.declare.queues[0].name: is required: The queue name.',
      'source.declare.queues[0].durable: expected true or false',
      'source.declare.queues[0].arguments.x-max-length: expected a string, number or boolean',
      'source.declare.bindings[0].exchange: is required: The exchange.',
    ],
  );
});

test('amqp declare - a PRECONDITION_FAILED mismatch names the queue, the argument and both values', () => {
  const broker = Object.assign(
    new Error(
      `Operation failed: QueueDeclare; 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'orders' in vhost '/': received the value 'quorum' of type 'longstr' but current is none"`,
    ),
    { code: 406 },
  );
  const error = declarationError(broker, 'declare.queues[1]', "queue 'orders'");
  assert.ok(error instanceof EndpointConfigurationError);
  assert.equal(
    error.message,
    "declare.queues[1]: queue 'orders' exists on the broker with other settings: 'x-queue-type' is none there, the configuration asks for the value 'quorum' of type 'longstr'; declare it as it is, or delete the queue first (the broker never changes an existing queue)",
  );
});
