/** JMSXUserID and JMSXAppID (MSG-2): who sends and through which application, where known. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ConnectionFactory,
  JMSSecurityError,
  JmsEngine,
  MemoryStore,
  type Message,
  TextMessage,
} from '../../../../src/index.js';
import { FakeClock } from '../../../helpers/fake-clock.js';
import { teardown } from '../../../helpers/teardown.js';

function engineWith(users?: { name: string; password: string }[]): JmsEngine {
  return new JmsEngine({ store: new MemoryStore(), clock: new FakeClock(), ...(users ? { users } : {}) });
}

/** Sends `message` through a connection of `factory` (as `user`, if given) and receives it back. */
async function roundTrip(
  factory: ConnectionFactory,
  message: Message,
  user?: [string, string],
): Promise<Message> {
  const sender = user ? factory.createConnection(...user) : factory.createConnection();
  const receiver = factory.createConnection();
  try {
    receiver.start();
    const queue = sender.createSession().createQueue('orders');
    await sender.createSession().createProducer(queue).send(message);
    const received = await receiver.createSession().createConsumer(queue).receiveNoWait();
    assert.ok(received, 'the message arrived');
    return received;
  } finally {
    await sender.close();
    await receiver.close();
  }
}

test('identity - a connection made with a listed user and its password sets JMSXUserID on every send (MSG-2)', async () => {
  const engine = engineWith([{ name: 'alice', password: 's3cret-pw' }]);
  try {
    const factory = new ConnectionFactory(engine);
    const message = new TextMessage('m');
    const received = await roundTrip(factory, message, ['alice', 's3cret-pw']);
    assert.equal(received.getStringProperty('JMSXUserID'), 'alice');
    assert.ok(received.getPropertyNames().includes('JMSXUserID'));
    // Set by the provider on send, so the sender's message shows it too (as JMSMessageID).
    assert.equal(message.getStringProperty('JMSXUserID'), 'alice');
  } finally {
    await engine.close();
  }
});

test('identity - a wrong password or an unknown user is a JMSSecurityError that never echoes the password (MSG-2)', async () => {
  const engine = engineWith([{ name: 'alice', password: 's3cret-pw' }]);
  try {
    const factory = new ConnectionFactory(engine);
    for (const [user, password] of [
      ['alice', 'wrong-guess-123'],
      ['mallory', 's3cret-pw'],
      ['alice', null],
    ] as const) {
      assert.throws(
        () => factory.createConnection(user, password),
        (error: unknown) => {
          assert.ok(error instanceof JMSSecurityError, `a JMSSecurityError for '${user}'`);
          assert.equal(error.message, `user '${user}' is not known or the password is wrong`);
          assert.ok(!error.message.includes('wrong-guess-123') && !error.message.includes('s3cret-pw'));
          return true;
        },
      );
    }
  } finally {
    await engine.close();
  }
});

test('identity - with no user list a named user is taken as given, and an anonymous connection sets no JMSXUserID (MSG-2)', async () => {
  const engine = engineWith();
  try {
    const factory = new ConnectionFactory(engine);
    const named = await roundTrip(factory, new TextMessage('a'), ['bob', 'anything']);
    assert.equal(named.getStringProperty('JMSXUserID'), 'bob');
    const anonymous = await roundTrip(factory, new TextMessage('b'));
    assert.equal(anonymous.propertyExists('JMSXUserID'), false);
    assert.equal(anonymous.propertyExists('JMSXAppID'), false);
  } finally {
    await engine.close();
  }
});

test("identity - the factory's application id is every send's JMSXAppID, and a selector can read both (MSG-2, SEL-3)", async (t) => {
  const cleanup = teardown(t);
  const engine = engineWith();
  cleanup(() => engine.close());
  const factory = new ConnectionFactory(engine, { applicationId: 'order-entry' });
  const sender = factory.createConnection('carol', 'pw');
  cleanup(() => sender.close());
  const receiver = factory.createConnection();
  cleanup(() => receiver.close());
  receiver.start();
  const session = sender.createSession();
  const queue = session.createQueue('orders');
  const consumer = receiver
    .createSession()
    .createConsumer(queue, "JMSXAppID = 'order-entry' AND JMSXUserID = 'carol'");
  await session.createProducer(queue).send(new TextMessage('m'));
  const received = await consumer.receiveNoWait();
  assert.equal(received?.getStringProperty('JMSXAppID'), 'order-entry');
});

test('identity - the provider owns JMSXUserID and JMSXAppID: a known sender replaces what a message carries, an unknown one keeps it (MSG-2)', async () => {
  const engine = engineWith();
  try {
    const carried = () => {
      const message = new TextMessage('forwarded');
      // What a connector sets for a message a broker vouched for.
      message.setProviderProperty('JMSXUserID', { type: 'string', value: 'rabbit-user' });
      message.setProviderProperty('JMSXAppID', { type: 'string', value: 'shop' });
      return message;
    };
    const kept = await roundTrip(new ConnectionFactory(engine), carried());
    assert.equal(kept.getStringProperty('JMSXUserID'), 'rabbit-user');
    assert.equal(kept.getStringProperty('JMSXAppID'), 'shop');
    const replaced = await roundTrip(
      new ConnectionFactory(engine, { applicationId: 'bridge-a' }),
      carried(),
      ['dave', 'pw'],
    );
    assert.equal(replaced.getStringProperty('JMSXUserID'), 'dave');
    assert.equal(replaced.getStringProperty('JMSXAppID'), 'bridge-a');
    assert.throws(() => new TextMessage('x').setStringProperty('JMSXUserID', 'forged'), /reserved/);
  } finally {
    await engine.close();
  }
});
