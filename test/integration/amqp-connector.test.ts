import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { connect, type Channel, type ChannelModel, type Message } from 'amqplib';
import {
  BackOffError,
  EndpointConfigurationError,
  NotConnectedError,
  TextMessage,
  type SendResult,
  messageSnapshot,
  resolveConfig,
  type ConnectorContext,
  type Delivery,
} from '../../src/spi/index.js';
import { amqpConnector, type AmqpConfig, AmqpSink, AmqpSource } from '../../connectors/amqp/index.js';
import { brokerTest } from '../helpers/brokers.js';
import {
  OVERSIZE_AT,
  assertOversizeFailedAlone,
  kinds,
  numberOf,
  numbered,
  oversizeBatch,
  relayedBroker,
} from '../helpers/batch-sends.js';
import { withTimeout } from '../helpers/timeout.js';
import { ALL_BODY_TYPES, sampleMessage } from '../unit/spi/sample-messages.js';

const TIMEOUT = { timeout: 30_000 };
const WAIT_MS = 10_000;

const warnings: string[] = [];
const context: ConnectorContext = {
  name: 'amqp-it',
  logger: { error: () => {}, warn: (_, message) => warnings.push(message), info: () => {}, debug: () => {} },
};

function config(url: string, fields: Record<string, unknown>): AmqpConfig {
  const { config, errors } = resolveConfig(amqpConnector.config, { url, ...fields }, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

/** `declare:` for one non-durable queue (removed by the tests' cleanup). */
function declareQueue(queue: string): Record<string, unknown> {
  return { queues: [{ name: queue, durable: false }] };
}

function signal(ms = WAIT_MS): AbortSignal {
  return AbortSignal.timeout(ms);
}

/** A plain amqplib connection for setup, checks and cleanup: what a foreign client sees. */
async function admin<T>(
  url: string,
  use: (channel: Channel, connection: ChannelModel) => Promise<T>,
): Promise<T> {
  const connection = await connect(url);
  try {
    const channel = await connection.createChannel();
    return await use(channel, connection);
  } finally {
    await connection.close().catch(() => {});
  }
}

async function deleteQueues(url: string, ...queues: string[]): Promise<void> {
  await admin(url, async (channel) => {
    for (const queue of queues) await channel.deleteQueue(queue);
  });
}

async function messageCount(url: string, queue: string): Promise<number> {
  return admin(url, async (channel) => (await channel.checkQueue(queue)).messageCount);
}

async function receive(source: AmqpSource): Promise<Delivery> {
  return withTimeout(source.receive(signal()), WAIT_MS, 'a delivery from the amqp source');
}

async function pair(
  url: string,
  queue: string,
  extra: Record<string, unknown> = {},
): Promise<{ source: AmqpSource; sink: AmqpSink }> {
  const source = new AmqpSource(config(url, { queue, declare: declareQueue(queue), ...extra }), context);
  const sink = new AmqpSink(config(url, { queue }), context);
  await source.connect(signal());
  await sink.connect(signal());
  return { source, sink };
}

/**
 * Runs `fn` with a connected source and sink on a queue of its own ({@link pair}, `extra` for the
 * source), then closes both and deletes the queue.
 */
async function withPair(
  url: string,
  extra: Record<string, unknown>,
  fn: (endpoints: { source: AmqpSource; sink: AmqpSink; queue: string }) => Promise<void>,
): Promise<void> {
  const queue = `q-${randomUUID()}`;
  const { source, sink } = await pair(url, queue, extra);
  try {
    await fn({ source, sink, queue });
  } finally {
    await sink.close();
    await source.close();
    await deleteQueues(url, queue);
  }
}

brokerTest(
  'amqp',
  'amqp connector - every body type, header and typed property comes back identical through sink and source (BRG-6)',
  async ({ url }) => {
    await withPair(url, {}, async ({ source, sink }) => {
      for (const bodyType of ALL_BODY_TYPES) {
        const sent = sampleMessage(bodyType, Date.now());
        await sink.send(sent, signal());
        const delivery = await receive(source);
        assert.equal(delivery.message.constructor, sent.constructor, bodyType);
        assert.deepEqual(messageSnapshot(delivery.message), messageSnapshot(sent), bodyType);
        assert.equal(delivery.message.getJMSRedelivered(), false);
        await delivery.settle({ kind: 'ack' });
      }
    });
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - a plain amqplib consumer sees natural properties, headers and body (BRG-6)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const sink = new AmqpSink(config(url, { queue, declare: declareQueue(queue) }), context);
    try {
      await sink.connect(signal());
      const now = Date.now();
      await sink.send(sampleMessage('text', now), signal());
      const raw = await admin(url, async (channel) => {
        const got = await channel.get(queue, { noAck: true });
        assert.ok(got, 'a message on the queue');
        return got;
      });
      const { properties } = raw;
      assert.equal(raw.content.toString('utf8'), 'héllo wörld ✓ — "quotes" \n and newlines');
      assert.equal(properties.contentType, 'text/plain; charset=utf-8');
      assert.equal(properties.messageId, 'ID:sample-text-1');
      assert.equal(properties.correlationId, 'corr-ü-42');
      assert.equal(properties.replyTo, 'replies');
      assert.equal(properties.type, 'order.created');
      assert.equal(properties.timestamp, Math.floor(now / 1000));
      assert.equal(properties.priority, 7);
      assert.equal(properties.deliveryMode, 1);
      const headers = properties.headers!;
      assert.equal(headers['qty'], 42);
      assert.equal(headers['tiny'], -7);
      assert.equal(headers['shortish'], 1234);
      assert.equal(headers['flag'], true);
      assert.equal(headers['ratio'], 1.5);
      assert.equal(headers['price'], 19.99);
      assert.equal(headers['name'], 'wïdget, "quoted": yes');
      assert.equal(headers['numeric'], '42');
      assert.equal(headers['JMSXGroupID'], 'group-1');
      assert.equal(headers['x-jms-timestamp'], now);
    } finally {
      await sink.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - messages a plain amqplib producer publishes are read with natural types',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const source = new AmqpSource(config(url, { queue, declare: declareQueue(queue) }), context);
    try {
      await source.connect(signal());
      await admin(url, async (channel) => {
        channel.sendToQueue(queue, Buffer.from('plain'), {
          contentType: 'text/plain',
          messageId: 'foreign-1',
          correlationId: 'c-1',
          replyTo: 'client-replies',
          headers: { count: 3, price: 2.5, ok: true, who: 'me' },
        });
        await channel.close();
      });
      const delivery = await receive(source);
      const message = delivery.message as TextMessage;
      assert.equal(message.getText(), 'plain');
      assert.equal(message.getJMSMessageID(), 'foreign-1');
      assert.equal(message.getJMSReplyTo()?.toString(), 'queue://client-replies');
      assert.equal(message.getIntProperty('count'), 3);
      assert.equal(message.getDoubleProperty('price'), 2.5);
      assert.equal(message.getBooleanProperty('ok'), true);
      assert.equal(message.getStringProperty('who'), 'me');
      await delivery.settle({ kind: 'ack' });
    } finally {
      await source.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - settle(retry) makes the broker deliver the message again, marked redelivered (BRG-4)',
  async ({ url }) => {
    await withPair(url, {}, async ({ source, sink, queue }) => {
      await sink.send(new TextMessage('again'), signal());
      const first = await receive(source);
      assert.equal(first.message.getJMSRedelivered(), false);
      await first.settle({ kind: 'retry' });
      const second = await receive(source);
      assert.equal((second.message as TextMessage).getText(), 'again');
      assert.equal(second.message.getJMSRedelivered(), true);
      assert.equal(second.message.deliveryCount, 2, 'the source reports the redelivery to the runtime');
      await second.settle({ kind: 'ack' });
      await assert.rejects(second.settle({ kind: 'ack' }), /already settled/);
      await source.close();
      assert.equal(await messageCount(url, queue), 0);
    });
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - settle(reject) drops the message, to the dead-letter exchange when configured (DLV-9)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const deadLetters = `dlq-${randomUUID()}`;
    const exchange = `dlx-${randomUUID()}`;
    await admin(url, async (channel) => {
      await channel.assertExchange(exchange, 'fanout', { durable: false, autoDelete: false });
      await channel.assertQueue(deadLetters, { durable: false });
      await channel.bindQueue(deadLetters, exchange, '');
    });
    const { source, sink } = await pair(url, queue, {
      declare: {
        queues: [{ name: queue, durable: false, arguments: { 'x-dead-letter-exchange': exchange } }],
      },
    });
    try {
      const poison = new TextMessage('poison');
      poison.setJMSMessageID('ID:poison');
      await sink.send(poison, signal());
      const delivery = await receive(source);
      await delivery.settle({ kind: 'reject', reason: new Error('bad') });
      const parked = await admin(url, async (channel) => {
        for (let i = 0; i < 100; i++) {
          const got = await channel.get(deadLetters, { noAck: true });
          if (got) return got;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return undefined;
      });
      assert.ok(parked, 'the rejected message reached the dead-letter queue');
      assert.equal(parked.properties.messageId, 'ID:poison');
      assert.equal(parked.properties.headers?.['x-first-death-reason'], 'rejected');
      await source.close();
      assert.equal(await messageCount(url, queue), 0);
    } finally {
      await sink.close();
      await source.close();
      await deleteQueues(url, queue, deadLetters);
      await admin(url, (channel) => channel.deleteExchange(exchange));
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - a message delivered again after its consumer went away keeps the message-id it was published with; without one it has no JMSMessageID (BRG-2)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const open = () => new AmqpSource(config(url, { queue, declare: declareQueue(queue) }), context);
    const first = open();
    const second = open();
    try {
      await first.connect(signal());
      await admin(url, async (channel) => {
        channel.sendToQueue(queue, Buffer.from('with id'), { persistent: true, messageId: 'order-7' });
        channel.sendToQueue(queue, Buffer.from('without id'), { persistent: true });
        await channel.close();
      });
      const before = [await receive(first), await receive(first)].map((d) => d.message);
      assert.deepEqual(
        before.map((m) => [m.getJMSMessageID(), m.getJMSRedelivered()]),
        [
          ['order-7', false],
          [null, false],
        ],
      );
      // Unacknowledged when the consumer goes, as after a crash: the broker delivers both again.
      await first.close();
      await second.connect(signal());
      const again = [await receive(second), await receive(second)];
      assert.deepEqual(
        again.map((d) => [d.message.getJMSMessageID(), d.message.getJMSRedelivered()]),
        [
          ['order-7', true],
          [null, true],
        ],
        'the id the duplicate window compares is the same on redelivery, and absent without message-id',
      );
      for (const delivery of again) await delivery.settle({ kind: 'ack' });
    } finally {
      await first.close();
      await second.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - 1,000 messages arrive in send order (ORD-1)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const { source, sink } = await pair(url, queue, { prefetch: 100 });
    const count = 1000;
    try {
      const sends: Array<Promise<void>> = [];
      for (let seq = 0; seq < count; seq++) {
        const message = new TextMessage(`m${seq}`);
        message.setIntProperty('seq', seq);
        sends.push(sink.send(message, signal(20_000)));
      }
      await Promise.all(sends);
      for (let seq = 0; seq < count; seq++) {
        const delivery = await receive(source);
        assert.equal(delivery.message.getIntProperty('seq'), seq);
        await delivery.settle({ kind: 'ack' });
      }
    } finally {
      await sink.close();
      await source.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - an unroutable message (mandatory, NO_ROUTE) is a back-off, sent once a queue is bound',
  async ({ url }) => {
    const exchange = `ex-${randomUUID()}`;
    const sink = new AmqpSink(
      config(url, {
        exchange,
        routingKey: 'nobody-listens',
        declare: { exchanges: [{ name: exchange, type: 'direct', durable: false }] },
      }),
      context,
    );
    try {
      await sink.connect(signal());
      const message = new TextMessage('lost?');
      message.setJMSMessageID('ID:unroutable');
      await assert.rejects(sink.send(message, signal()), (error: unknown) => {
        assert.ok(error instanceof BackOffError, String(error));
        assert.match(error.message, /'ID:unroutable' is unroutable.*nobody-listens.*312 NO_ROUTE/);
        return true;
      });
      const queue = `q-${randomUUID()}`;
      await admin(url, async (channel) => {
        await channel.assertQueue(queue, { durable: false });
        await channel.bindQueue(queue, exchange, 'nobody-listens');
      });
      await sink.send(message, signal());
      assert.equal(await messageCount(url, queue), 1, 'the sink still works once a queue is bound');
      await deleteQueues(url, queue);
    } finally {
      await sink.close();
      await admin(url, (channel) => channel.deleteExchange(exchange));
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - closing the source returns unsettled messages to the queue (BRG-7)',
  async ({ url }) => {
    await withPair(url, {}, async ({ source, sink }) => {
      await sink.send(new TextMessage('in flight'), signal());
      const unsettled = await receive(source);
      await source.close();
      await assert.rejects(unsettled.settle({ kind: 'ack' }), NotConnectedError);
      await assert.rejects(source.receive(signal()), NotConnectedError);
      await source.connect(signal());
      const again = await receive(source);
      assert.equal((again.message as TextMessage).getText(), 'in flight');
      assert.equal(again.message.getJMSRedelivered(), true);
      await again.settle({ kind: 'ack' });
    });
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - a lost consumer fails receive with NotConnectedError (BRG-5)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const source = new AmqpSource(config(url, { queue, declare: declareQueue(queue) }), context);
    try {
      await source.connect(signal());
      const failed = assert.rejects(
        withTimeout(source.receive(signal()), WAIT_MS, 'receive to fail'),
        NotConnectedError,
      );
      await deleteQueues(url, queue);
      await failed;
      await assert.rejects(source.receive(signal()), NotConnectedError);
    } finally {
      await source.close();
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - declare creates exchanges, queues with typed arguments and bindings at connect, idempotently',
  async ({ url }) => {
    const exchange = `ex-${randomUUID()}`;
    const queue = `q-${randomUUID()}`;
    const endpoint = config(url, {
      exchange,
      routingKey: 'orders.eu',
      declare: {
        exchanges: [{ name: exchange, type: 'topic', durable: false }],
        queues: [
          { name: queue, durable: false, arguments: { 'x-max-length': 2, 'x-overflow': 'drop-head' } },
        ],
        bindings: [{ queue, exchange, routingKey: 'orders.#' }],
      },
    });
    const sink = new AmqpSink(endpoint, context);
    const again = new AmqpSink(endpoint, context);
    try {
      await sink.connect(signal());
      await again.connect(signal());
      for (const text of ['1', '2', '3']) await sink.send(new TextMessage(text), signal());
      // The topic binding routed all three; x-max-length (an integer, as written) kept the last two.
      assert.equal(await messageCount(url, queue), 2);
    } finally {
      await sink.close();
      await again.close();
      await deleteQueues(url, queue);
      await admin(url, (channel) => channel.deleteExchange(exchange));
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - declaring a queue that exists with other settings is a configuration error naming the queue and what differs',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    await admin(url, (channel) => channel.assertQueue(queue, { durable: false }));
    const source = new AmqpSource(config(url, { queue, declare: { queues: [{ name: queue }] } }), context);
    try {
      await assert.rejects(source.connect(signal()), (error: unknown) => {
        assert.ok(error instanceof EndpointConfigurationError, String(error));
        assert.match(
          error.message,
          new RegExp(
            `^declare\\.queues\\[0\\]: queue '${queue}' exists on the broker with other settings: 'durable' is 'false' there, the configuration asks for 'true'`,
          ),
        );
        return true;
      });
    } finally {
      await source.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - a missing queue or exchange is a configuration error, an unreachable broker is not connected',
  async ({ url }) => {
    const missing = new AmqpSource(config(url, { queue: `missing-${randomUUID()}` }), context);
    await assert.rejects(missing.connect(signal()), (error: unknown) => {
      assert.ok(error instanceof EndpointConfigurationError, String(error));
      assert.match(error.message, /queue 'missing-.*not found/);
      return true;
    });
    const noExchange = new AmqpSink(config(url, { exchange: `missing-${randomUUID()}` }), context);
    await assert.rejects(noExchange.connect(signal()), EndpointConfigurationError);
    const unreachable = new AmqpSink(config('amqp://guest:secret-pw@127.0.0.1:1', { queue: 'q' }), context);
    await assert.rejects(unreachable.connect(signal()), (error: unknown) => {
      assert.ok(error instanceof NotConnectedError, String(error));
      assert.doesNotMatch(error.message, /secret-pw/, 'credentials never appear in errors');
      return true;
    });
    await assert.rejects(unreachable.send(new TextMessage('x'), signal()), NotConnectedError);
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - an aborted receive rejects with the abort reason and leaves the source usable',
  async ({ url }) => {
    await withPair(url, {}, async ({ source, sink }) => {
      const controller = new AbortController();
      const waiting = source.receive(controller.signal);
      controller.abort(new Error('stop waiting'));
      await assert.rejects(waiting, /stop waiting/);
      await sink.send(new TextMessage('after abort'), signal());
      const delivery = await receive(source);
      assert.equal((delivery.message as TextMessage).getText(), 'after abort');
      await delivery.settle({ kind: 'ack' });
    });
  },
  TIMEOUT,
);

/** The numbers of the messages on `queue`, in queue order (taken off the queue). */
async function drainNumbers(url: string, queue: string): Promise<number[]> {
  return admin(url, async (channel) => {
    const numbers: number[] = [];
    for (;;) {
      const got = await channel.get(queue, { noAck: true });
      if (got === false) return numbers;
      numbers.push(numberOf(got.content.toString('utf8')));
    }
  });
}

/** Results are confirmed ones first, then failed ones: nothing after a failure is confirmed. */
function assertOkPrefix(results: readonly SendResult[]): number {
  const confirmed = results.findIndex((result) => !result.ok);
  const prefix = confirmed === -1 ? results.length : confirmed;
  assert.ok(
    results.slice(prefix).every((result) => !result.ok),
    `a message after the first failure was confirmed: ${kinds(results).join(' ')}`,
  );
  return prefix;
}

brokerTest(
  'amqp',
  'amqp connector - sendBatch publishes a batch pipelined under confirms, and it arrives in order; receiveBatch hands over what is buffered',
  async ({ url }) => {
    await withPair(url, { prefetch: 200 }, async ({ source, sink }) => {
      const batch = numbered(500);
      const [first, second] = await Promise.all([
        sink.sendBatch(batch.slice(0, 250), signal()),
        sink.sendBatch(batch.slice(250), signal()),
      ]);
      assert.deepEqual(kinds([...first, ...second]), Array(500).fill('ok'));
      const numbers: number[] = [];
      let largest = 0;
      while (numbers.length < 500) {
        const deliveries = await withTimeout(
          source.receiveBatch(100, signal()),
          WAIT_MS,
          'a batch of deliveries',
        );
        assert.ok(deliveries.length >= 1 && deliveries.length <= 100);
        largest = Math.max(largest, deliveries.length);
        for (const delivery of deliveries) {
          numbers.push(numberOf((delivery.message as TextMessage).getText()!));
          await delivery.settle({ kind: 'ack' });
        }
      }
      assert.deepEqual(numbers, [...Array(500).keys()]);
      assert.ok(largest > 1, 'receiveBatch took more than one buffered delivery at least once');
      assert.ok(sink.maxBatchesInFlight > 1);
    });
  },
  TIMEOUT,
);

/**
 * Runs `body` with the named methods of `target` first calling `observe` with their receiver and
 * arguments, then doing what they did; the originals are back once `body` ends, however it ends.
 */
async function whilePatched<T>(
  target: object,
  names: readonly string[],
  observe: (self: unknown, args: unknown[]) => void,
  body: () => Promise<T>,
): Promise<T> {
  const methods = target as Record<string, (...args: unknown[]) => unknown>;
  const originals = Object.fromEntries(names.map((name) => [name, methods[name]!]));
  for (const name of names) {
    const original = originals[name]!;
    methods[name] = function (this: unknown, ...args: unknown[]) {
      observe(this, args);
      return original.apply(this, args);
    };
  }
  try {
    return await body();
  } finally {
    Object.assign(methods, originals);
  }
}

/**
 * Counts the writes that reach the system from sockets connected to `port` while `body` runs:
 * a write of one buffer (`_write`) or of several at once (`_writev`) is one system call.
 */
async function socketWritesTo<T>(
  port: number,
  body: () => Promise<T>,
): Promise<{ result: T; writes: number }> {
  let writes = 0;
  const result = await whilePatched(
    Socket.prototype,
    ['_write', '_writev'],
    (socket) => {
      if ((socket as Socket).remotePort === port) writes++;
    },
    body,
  );
  return { result, writes };
}

brokerTest(
  'amqp',
  'amqp connector - the frames of a batch leave in a few socket writes, not one a message, and arrive in order',
  async ({ url }, t) => {
    await withPair(url, { prefetch: 500 }, async ({ source, sink }) => {
      const batch = numbered(300, 1024);
      const { result, writes } = await socketWritesTo(Number(new URL(url).port || 5672), () =>
        sink.sendBatch(batch, signal()),
      );
      assert.deepEqual(kinds(result), Array(300).fill('ok'));
      // amqplib writes each message (its method, header and body frames) with a write of its
      // own: 300 uncorked. Corked, one goes each time the socket's buffer fills (16 KiB, about a
      // dozen 1 KiB messages).
      t.diagnostic(`${writes} socket writes for 300 messages`);
      assert.ok(writes < 100, `${writes} socket writes for 300 messages`);
      const numbers: number[] = [];
      while (numbers.length < 300) {
        for (const delivery of await withTimeout(source.receiveBatch(100, signal()), WAIT_MS, 'deliveries')) {
          numbers.push(numberOf((delivery.message as TextMessage).getText()!));
          await delivery.settle({ kind: 'ack' });
        }
      }
      assert.deepEqual(numbers, [...Array(300).keys()]);
    });
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - an oversize message in a batch fails alone as MessageTooLargeError, the rest arrive in order (DLV-9)',
  async ({ url }) => {
    const queue = `q-${randomUUID()}`;
    const sink = new AmqpSink(
      config(url, { queue, declare: declareQueue(queue), maxMessageBytes: 100 }),
      context,
    );
    try {
      await sink.connect(signal());
      assertOversizeFailedAlone(await sink.sendBatch(oversizeBatch(500), signal()));
      assert.deepEqual(
        await drainNumbers(url, queue),
        [...Array(20).keys()].filter((n) => n !== OVERSIZE_AT),
      );
    } finally {
      await sink.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

brokerTest(
  'amqp',
  'amqp connector - a connection lost in the middle of a batch fails every unconfirmed message, and nothing later is confirmed before a failed one (ORD-3)',
  async ({ url }, t) => {
    const queue = `q-${randomUUID()}`;
    const { relay, url: relayed } = await relayedBroker(t, url, 5672);
    const sink = new AmqpSink(config(relayed, { queue, declare: declareQueue(queue) }), context);
    try {
      await sink.connect(signal());
      const count = 400;
      const batch = numbered(count, 1024);
      // About half the batch reaches the broker; the rest is held back until the connection is cut.
      relay.holdAfter(200 * 1100);
      const sending = sink.sendBatch(batch, signal());
      // Broker round trips, not time: wait until the broker has queued what got through.
      let queued = 0;
      for (let seen = -1; queued === 0 || queued !== seen;) {
        seen = queued;
        queued = await messageCount(url, queue);
      }
      relay.cut();
      const results = await withTimeout(sending, WAIT_MS, 'the batch results');
      const confirmed = assertOkPrefix(results);
      assert.ok(confirmed < count, 'the unconfirmed messages failed');
      for (const result of results.slice(confirmed))
        assert.ok(
          !result.ok && result.error instanceof NotConnectedError,
          String(!result.ok && result.error),
        );
      const arrived = await drainNumbers(url, queue);
      assert.deepEqual(arrived, [...Array(arrived.length).keys()], 'what arrived is a prefix, in order');
      assert.ok(arrived.length >= confirmed, 'every confirmed message is on the queue');
      assert.ok(arrived.length > 0 && arrived.length < count, `${arrived.length} of ${count} arrived`);
    } finally {
      await sink.close();
      await deleteQueues(url, queue);
    }
  },
  TIMEOUT,
);

/**
 * The `basic.ack` frames amqplib's channels write while `body` runs, as `7` or `≤9` (multiple),
 * in order.
 */
async function ackFramesDuring<T>(url: string, body: () => Promise<T>): Promise<string[]> {
  // The class of every channel amqplib makes, taken from one.
  const prototype = await admin(url, (channel) => Promise.resolve(Object.getPrototypeOf(channel) as object));
  const frames: string[] = [];
  await whilePatched(
    prototype,
    ['ack'],
    (_channel, [message, allUpTo]) =>
      frames.push(`${allUpTo ? '≤' : ''}${(message as Message).fields.deliveryTag}`),
    body,
  );
  return frames;
}

brokerTest(
  'amqp',
  'amqp connector - acks settled in one turn go as one multiple ack; a delivery left open is not acknowledged with them and comes back (BRG-1)',
  async ({ url }) => {
    await withPair(url, { prefetch: 300 }, async ({ source, sink, queue }) => {
      assert.deepEqual(kinds(await sink.sendBatch(numbered(300), signal())), Array(300).fill('ok'));
      const received: Delivery[] = [];
      while (received.length < 300)
        received.push(
          ...(await withTimeout(source.receiveBatch(300 - received.length, signal()), WAIT_MS, 'deliveries')),
        );
      const open = received[149]!;
      const frames = await ackFramesDuring(url, () =>
        Promise.all(
          received
            .filter((delivery) => delivery !== open)
            .map((delivery) => delivery.settle({ kind: 'ack' })),
        ),
      );
      assert.equal(frames[0], '≤149', 'one frame for the run before the open delivery');
      assert.equal(frames.length, 151, 'and one each after it, which must not wait for it');
      await source.close();
      assert.equal(await messageCount(url, queue), 1, 'only the open delivery is back in the queue');
      await source.connect(signal());
      const again = await receive(source);
      assert.equal(numberOf((again.message as TextMessage).getText()!), 149);
      assert.equal(again.message.getJMSRedelivered(), true);
      await again.settle({ kind: 'ack' });
    });
  },
  TIMEOUT,
);
