import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ConnectionFactory,
  JmsEngine,
  MemoryStore,
  type Message,
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
