import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ConnectionFactory,
  JmsEngine,
  MemoryStore,
  type Message,
  type MessageStore,
  TextMessage,
  XMLMessage,
} from '../../../../src/index.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

test('paging - past the threshold bodies leave memory and come back intact at delivery, in order (PER-4)', async (context) => {
  const cleanup = teardown(context);
  const store = new MemoryStore({ paging: true });
  const engine = new JmsEngine({ store, clock: new FakeClock(), pagingThresholdBytes: 100 });
  cleanup(() => engine.close());
  const connection = new ConnectionFactory(engine).createConnection();
  cleanup(() => connection.close());
  connection.start();
  const session = connection.createSession();
  const queue = session.createQueue('big');
  const producer = session.createProducer(queue);
  for (let i = 0; i < 20; i++) {
    const message = new XMLMessage(`<order id="${i}"><region>${i % 2 === 0 ? 'eu' : 'us'}</region></order>`);
    message.setIntProperty('n', i);
    await producer.send(message);
  }
  assert.ok(engine.messagesPagedOut > 10, `paged ${engine.messagesPagedOut}`);
  const browsed = session.createBrowser(queue).getEnumeration();
  assert.equal(
    text(browsed[19]!),
    '<order id="19"><region>us</region></order>',
    'a browser sees paged bodies',
  );
  const eu = session.createConsumer(queue, "JMS_BEA_SELECT('xpath', '/order/region/text()') = 'eu'");
  const got: number[] = [];
  for (let m = await eu.receiveNoWait(); m; m = await eu.receiveNoWait()) {
    assert.match(text(m)!, /<region>eu<\/region>/);
    got.push(m.getIntProperty('n'));
  }
  assert.deepEqual(got, [0, 2, 4, 6, 8, 10, 12, 14, 16, 18], 'an XPath selector reads paged bodies');
});

test('paging - non-persistent messages and stores that cannot read back are never paged (PER-4)', async (context) => {
  const cleanup = teardown(context);
  const engine = new JmsEngine({ store: new MemoryStore(), clock: new FakeClock(), pagingThresholdBytes: 1 });
  cleanup(() => engine.close());
  const connection = new ConnectionFactory(engine).createConnection();
  cleanup(() => connection.close());
  const session = connection.createSession();
  const producer = session.createProducer(session.createQueue('q'));
  for (let i = 0; i < 5; i++) await producer.send(new TextMessage('body'));
  assert.equal(engine.messagesPagedOut, 0);
});

/** A paging memory store that counts the messages read back. */
function countingStore(): { store: MessageStore; reads: string[] } {
  const inner = new MemoryStore({ paging: true });
  const reads: string[] = [];
  const store: MessageStore = {
    recover: () => inner.recover(),
    commit: (operations) => inner.commit(operations),
    close: () => inner.close(),
    readMessage: (id) => {
      reads.push(id);
      return inner.readMessage!(id);
    },
  };
  return { store, reads };
}

test('paging - a paged message is ordered, scheduled, expired and acknowledged from its record, read back only to be delivered (PER-4)', async () => {
  const { store, reads } = countingStore();
  const clock = new FakeClock();
  const engine = new JmsEngine({ store, clock, pagingThresholdBytes: 0, expirationScanIntervalMs: 0 });
  const connection = new ConnectionFactory(engine).createConnection();
  const session = connection.createSession();
  const queue = session.createQueue('records');
  const producer = session.createProducer(queue);
  try {
    const send = async (name: string, priority: number, settings: { ttl?: number; delay?: number } = {}) => {
      producer.setPriority(priority);
      producer.setTimeToLive(settings.ttl ?? 0);
      producer.setDeliveryDelay(settings.delay ?? 0);
      const message = new TextMessage(name);
      await producer.send(message);
      return message.getJMSMessageID()!;
    };
    const low = await send('low', 1);
    await send('expiring', 9, { ttl: 1_000 });
    const high = await send('high', 8);
    const later = await send('later', 9, { delay: 5_000 });
    assert.equal(engine.messagesPagedOut, 4);
    await clock.advance(2_000);
    assert.deepEqual(reads, [], 'nothing read back before a delivery');

    connection.start();
    const consumer = session.createConsumer(queue);
    assert.equal(text(await consumer.receiveNoWait()), 'high', 'priority from the record');
    assert.equal(text(await consumer.receiveNoWait()), 'low');
    assert.equal(
      await consumer.receiveNoWait(),
      null,
      "the expired one is never delivered, the scheduled one's time is not up",
    );
    await clock.advance(5_000);
    const scheduled = await consumer.receiveNoWait();
    assert.equal(text(scheduled), 'later');
    assert.equal(scheduled!.getJMSMessageID(), later, 'the id rebuilt from the record is the one sent');
    assert.deepEqual(
      reads,
      [high, low, later],
      'read back once each, to be delivered; never the expired one',
    );
  } finally {
    await connection.close();
    await engine.close();
  }
});

test('paging - selectors on properties and destination keys read a paged message back and see it as sent (PER-4, SEL-3, DST-1)', async () => {
  const { store, reads } = countingStore();
  const engine = new JmsEngine({ store, clock: new FakeClock(), pagingThresholdBytes: 0 });
  await engine.createQueue('keyed', { keys: [{ property: 'rank', direction: 'descending' }] });
  const connection = new ConnectionFactory(engine).createConnection();
  const session = connection.createSession();
  const queue = session.createQueue('keyed');
  const producer = session.createProducer(queue);
  try {
    for (const [rank, region] of [
      [2, 'eu'],
      [7, 'us'],
      [5, 'eu'],
      [1, 'eu'],
    ] as const) {
      const message = new TextMessage(`${region}-${rank}`);
      message.setIntProperty('rank', rank);
      message.setStringProperty('region', region);
      await producer.send(message);
    }
    assert.equal(engine.messagesPagedOut, 4);
    assert.ok(reads.length > 0, 'the key on a property was read back to order them');
    connection.start();
    const eu = session.createConsumer(queue, "region = 'eu'");
    const got: string[] = [];
    for (let m = await eu.receiveNoWait(); m; m = await eu.receiveNoWait()) got.push(text(m)!);
    assert.deepEqual(got, ['eu-5', 'eu-2', 'eu-1'], 'the selector saw the properties, the key order held');
    const rest = session.createConsumer(queue);
    assert.equal(text(await rest.receiveNoWait()), 'us-7');
  } finally {
    await connection.close();
    await engine.close();
  }
});
