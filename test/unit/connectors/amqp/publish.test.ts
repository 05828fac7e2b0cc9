import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import type { ConfirmChannel } from 'amqplib';
import { TextMessage } from '../../../../src/spi/index.js';
import { toAmqp, type AmqpOutgoing } from '../../../../connectors/amqp/mapping.js';
import { confirmPublisher, publishFields } from '../../../../connectors/amqp/publish.js';
import { ALL_BODY_TYPES, sampleMessage } from '../../spi/sample-messages.js';

// amqplib's own argument builder and frame codec: what `channel.publish` would have written.
const require = createRequire(import.meta.url);
const amqplibDir = dirname(require.resolve('amqplib'));
const defs = require(join(amqplibDir, 'lib/defs.js')) as {
  encodeMethod(id: number, channel: number, fields: unknown): Buffer;
  encodeProperties(id: number, channel: number, size: number, fields: unknown): Buffer;
  BasicPublish: number;
  BasicProperties: number;
};
const args = require(join(amqplibDir, 'lib/api_args.js')) as {
  publish(exchange: string, routingKey: string, options: unknown): unknown;
};

const NOW = 1_700_000_000_123;

/** The method and header frames of a publish, as amqplib encodes `fields`. */
function frames(fields: unknown, content: Buffer): Buffer[] {
  return [
    defs.encodeMethod(defs.BasicPublish, 1, fields),
    defs.encodeProperties(defs.BasicProperties, 1, content.length, fields),
  ];
}

/** Every kind of message the mapping writes: each body type with every header, and AMQP's own userId and appId. */
function outgoingSamples(): AmqpOutgoing[] {
  const samples = ALL_BODY_TYPES.map((bodyType) =>
    toAmqp(sampleMessage(bodyType, NOW), { persistent: 'message', ttl: true, now: NOW }),
  );
  const identified = new TextMessage('<order/>');
  identified.setProviderProperty('JMSXUserID', { type: 'string', value: 'gateway' });
  identified.setProviderProperty('JMSXAppID', { type: 'string', value: 'orders' });
  const withIdentity = toAmqp(identified, { persistent: 'always', ttl: false, now: NOW, user: 'gateway' });
  assert.equal(withIdentity.properties.userId, 'gateway');
  assert.equal(withIdentity.properties.appId, 'orders');
  return [
    ...samples,
    withIdentity,
    toAmqp(new TextMessage(''), { persistent: 'never', ttl: true, now: NOW }),
  ];
}

test('amqp publish - the fields the sink builds encode to the very frames channel.publish writes', () => {
  for (const outgoing of outgoingSamples()) {
    for (const mandatory of [true, false]) {
      const ours = publishFields('orders', 'eu', outgoing, mandatory);
      const amqplib = args.publish('orders', 'eu', { ...outgoing.properties, mandatory });
      assert.deepEqual(frames(ours, outgoing.content), frames(amqplib, outgoing.content));
    }
  }
});

test('amqp publish - sends the frames and then queues the confirm callback, as a confirm channel does; an encoding error queues none', () => {
  const calls: string[] = [];
  let sent: unknown;
  const channel = {
    sendMessage(fields: unknown, properties: unknown, content: Buffer) {
      assert.equal(fields, properties);
      if (content.length === 0) throw new TypeError('cannot encode');
      sent = fields;
      calls.push('send');
      return false;
    },
    pushConfirmCallback(callback: (error: unknown) => void) {
      calls.push('confirm');
      callback(null);
    },
  };
  const publish = confirmPublisher(channel as unknown as ConfirmChannel);
  const outgoing = toAmqp(new TextMessage('<order/>'), { persistent: 'message', ttl: true, now: NOW });
  const confirmed: unknown[] = [];
  assert.equal(
    publish('x', 'rk', outgoing, true, (error) => confirmed.push(error)),
    false,
    'the socket buffer is full',
  );
  assert.deepEqual(calls, ['send', 'confirm']);
  assert.deepEqual(confirmed, [null]);
  assert.deepEqual(sent, publishFields('x', 'rk', outgoing, true));

  const empty: AmqpOutgoing = { ...outgoing, content: Buffer.alloc(0) };
  assert.throws(() => publish('x', 'rk', empty, true, () => {}), TypeError);
  assert.deepEqual(calls, ['send', 'confirm'], 'no callback queued for a publish that was not sent');
});

test('amqp publish - an amqplib without those methods gets channel.publish with the same properties', () => {
  const published: unknown[][] = [];
  const channel = {
    publish: (...publishArgs: unknown[]) => {
      published.push(publishArgs);
      return true;
    },
  };
  const publish = confirmPublisher(channel as unknown as ConfirmChannel);
  const outgoing = toAmqp(new TextMessage('<order/>'), { persistent: 'message', ttl: true, now: NOW });
  const confirmed = (): void => {};
  assert.equal(publish('x', 'rk', outgoing, false, confirmed), true);
  assert.deepEqual(published, [
    ['x', 'rk', outgoing.content, { ...outgoing.properties, mandatory: false }, confirmed],
  ]);
});
