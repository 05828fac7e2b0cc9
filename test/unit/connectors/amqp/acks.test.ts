import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from 'amqplib';
import { type AckChannel, ChannelAcks } from '../../../../connectors/amqp/acks.js';
import { NotConnectedError } from '../../../../src/spi/index.js';

/** A channel that records the frames written to it, as `ack 7`, `ack ≤9` (multiple) or `nack 3`. */
function recordingChannel(): { channel: AckChannel; frames: string[]; closed: { now: boolean } } {
  const frames: string[] = [];
  const closed = { now: false };
  const write = (frame: string) => {
    if (closed.now) throw new Error('Channel closed');
    frames.push(frame);
  };
  const channel: AckChannel = {
    ack: (message, allUpTo) => write(`ack ${allUpTo ? '≤' : ''}${message.fields.deliveryTag}`),
    nack: (message, _allUpTo, requeue) =>
      write(`nack ${message.fields.deliveryTag}${requeue === false ? ' drop' : ''}`),
  };
  return { channel, frames, closed };
}

function deliveries(acks: ChannelAcks, count: number): Message[] {
  const messages = Array.from(
    { length: count },
    (_, index) => ({ fields: { deliveryTag: index + 1 } }) as unknown as Message,
  );
  for (const message of messages) acks.delivered(message);
  return messages;
}

test('amqp acks - the acks of one turn over the oldest deliveries go as one multiple ack', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const messages = deliveries(acks, 100);
  await Promise.all(messages.map((message) => acks.ack(message)));
  assert.deepEqual(frames, ['ack ≤100']);
});

test('amqp acks - a delivery still open ends the run: acks beyond it go one by one, at once', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const [one, two, three, four, five] = deliveries(acks, 5);
  await Promise.all([acks.ack(one!), acks.ack(two!), acks.ack(four!), acks.ack(five!)]);
  assert.deepEqual(frames, ['ack ≤2', 'ack 4', 'ack 5'], 'three stays unacknowledged at the broker');
  frames.length = 0;
  await acks.ack(three!);
  assert.deepEqual(
    frames,
    ['ack ≤3'],
    'four and five were written already: the run covers them, no frame again',
  );
});

test('amqp acks - a nack is written at once and a later run passes over it', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const [one, two, three, four] = deliveries(acks, 4);
  acks.nack(two!, true);
  acks.nack(three!, false);
  assert.deepEqual(frames, ['nack 2', 'nack 3 drop']);
  await Promise.all([acks.ack(one!), acks.ack(four!)]);
  assert.deepEqual(frames, ['nack 2', 'nack 3 drop', 'ack ≤4'], 'the broker no longer holds 2 and 3');
});

test('amqp acks - acks of later turns each go in their own write, covering only what was settled', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const messages = deliveries(acks, 3000);
  for (let from = 0; from < 3000; from += 500)
    await Promise.all(messages.slice(from, from + 500).map((message) => acks.ack(message)));
  assert.deepEqual(frames, ['ack ≤500', 'ack ≤1000', 'ack ≤1500', 'ack ≤2000', 'ack ≤2500', 'ack ≤3000']);
  const more = { fields: { deliveryTag: 3001 } } as unknown as Message;
  acks.delivered(more);
  await acks.ack(more);
  assert.equal(frames.at(-1), 'ack ≤3001', 'tags go on after the passed deliveries were dropped');
});

test('amqp acks - a delivery held open keeps only itself unacknowledged while thousands after it are acknowledged', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const [held, ...rest] = deliveries(acks, 5_001);
  for (let from = 0; from < rest.length; from += 100)
    await Promise.all(rest.slice(from, from + 100).map((message) => acks.ack(message)));
  assert.equal(frames.length, 5_000, 'one frame each: they must not wait behind the open one');
  assert.equal(acks.unacknowledged, 1);
  await acks.ack(held!);
  assert.deepEqual(frames.at(-1), 'ack ≤1');
  assert.equal(acks.unacknowledged, 0);
});

test('amqp acks - a lost channel fails the acks not yet written and every later settle, as NotConnectedError', async () => {
  const { channel, frames } = recordingChannel();
  const acks = new ChannelAcks(channel);
  const [one, two, three] = deliveries(acks, 3);
  const waiting = acks.ack(one!);
  acks.lose(new NotConnectedError('the channel is closed'));
  await assert.rejects(waiting, NotConnectedError);
  await assert.rejects(acks.ack(two!), NotConnectedError);
  assert.throws(() => acks.nack(three!, true), NotConnectedError);
  assert.deepEqual(frames, []);

  const other = recordingChannel();
  const failing = new ChannelAcks(other.channel);
  const [first] = deliveries(failing, 1);
  const settle = failing.ack(first!);
  other.closed.now = true;
  await assert.rejects(settle, NotConnectedError, 'a write the closed channel refuses fails too');
});
