import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ConnectionFactory,
  type ConnectionFactoryOptions,
  JmsEngine,
  MemoryStore,
  type Message,
  type MessageStore,
  Queue,
  type RecoveredState,
  Session,
  TextMessage,
} from '../../../src/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { teardown } from '../../helpers/teardown.js';

const text = (m: Message | null) => (m as TextMessage | null)?.getText() ?? null;

/** A store that hands back what it is given, as a broken store implementation might. */
function storeReturning(state: RecoveredState): MessageStore {
  return {
    recover: () => Promise.resolve(state),
    commit: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

function ref(id: string, seq: number) {
  const message = new TextMessage(id);
  message.setJMSMessageID(id);
  return { backlog: 'queue://q', id, seq, deliveryCount: 0, notBefore: 0, message };
}

const queue = { kind: 'queue' as const, name: 'q', options: {} };

test('recovery - references in seq order are restored in that order, one message shared by its references (PER-1)', async (context) => {
  const cleanup = teardown(context);
  const engine = await JmsEngine.open({
    store: storeReturning({
      destinations: [queue],
      subscriptions: [],
      refs: [ref('ID:1', 1), ref('ID:2', 2)],
      maxSeq: 2,
    }),
  });
  cleanup(() => engine.close());
  assert.equal(engine.destinationStatistics('queue://q').messagesCurrent, 2);
});

test('recovery - a store handing back references out of seq order stops the start with a clear error (PER-1)', async () => {
  // Recovery streams references and shares one stored message among neighbours: out of order, a
  // message could be restored twice, so it refuses instead of guessing.
  await assert.rejects(
    JmsEngine.open({
      store: storeReturning({
        destinations: [queue],
        subscriptions: [],
        refs: [ref('ID:2', 2), ref('ID:1', 1)],
        maxSeq: 2,
      }),
    }),
    /the store returned message references out of order \(seq 1 after 2\)/,
  );
});

/** An engine on `store` and a started connection to it: a restart is a second one on the same store, the first left as a crash leaves it. */
async function openOn(store: MemoryStore, clock: FakeClock, factory: ConnectionFactoryOptions = {}) {
  const engine = await JmsEngine.open({ store, clock, expirationScanIntervalMs: 0 });
  const connection = new ConnectionFactory(engine, factory).createConnection();
  connection.start();
  return { engine, connection };
}

test('recovery - a delivery count and the rest of a redelivery delay survive a restart (PER-2, DLV-1)', async (context) => {
  const cleanup = teardown(context);
  const store = new MemoryStore();
  const clock = new FakeClock();
  const before = await openOn(store, clock, { redeliveryDelay: 5_000 });
  await before.engine.createQueue('q');
  const tx = before.connection.createSession(true);
  await tx.createProducer(tx.createQueue('q')).send(new TextMessage('m'));
  await tx.commit();
  const consumer = tx.createConsumer(tx.createQueue('q'));
  assert.equal((await consumer.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), 1);
  await tx.rollback();
  await before.engine.flush();
  await clock.advance(2_000);

  const after = await openOn(store, clock);
  cleanup(() => after.connection.close());
  cleanup(() => after.engine.close());
  const again = after.connection.createSession().createConsumer(new Queue('q'));
  assert.equal(await again.receiveNoWait(), null, '3 s of the delay are left');
  assert.equal(after.engine.destinationStatistics('queue://q').pendingMessagesByCause.redeliveryDelay, 1);
  await clock.advance(2_999);
  assert.equal(await again.receiveNoWait(), null);
  await clock.advance(1);
  const back = await again.receiveNoWait();
  assert.equal(back?.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(back?.getJMSRedelivered(), true);
});

test('recovery - a message the crash left delivered with its redeliveries used up goes to the error destination, not to a consumer (PER-1, DLV-2)', async (context) => {
  const cleanup = teardown(context);
  const store = new MemoryStore();
  const clock = new FakeClock();
  const before = await openOn(store, clock);
  await before.engine.createQueue('errors');
  await before.engine.createQueue('q', { redeliveryLimit: 1, errorDestination: 'queue://errors' });
  const session = before.connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const producer = session.createProducer(session.createQueue('q'));
  await producer.send(new TextMessage('used up'));
  await producer.send(new TextMessage('one left'));
  const consumer = session.createConsumer(session.createQueue('q'));
  assert.equal(text(await consumer.receiveNoWait()), 'used up');
  await session.recover();
  assert.equal((await consumer.receiveNoWait())?.getIntProperty('JMSXDeliveryCount'), 2);
  assert.equal(text(await consumer.receiveNoWait()), 'one left');
  await before.engine.flush();

  const after = await openOn(store, clock);
  const session2 = after.connection.createSession();
  const parked = await session2.createConsumer(new Queue('errors')).receiveNoWait();
  assert.equal(text(parked), 'used up');
  assert.equal(parked?.getStringProperty('JMS_ErrorReason'), 'redelivery limit 1 reached after 2 deliveries');
  const redelivered = await session2.createConsumer(new Queue('q')).receiveNoWait();
  assert.equal(text(redelivered), 'one left', 'a message with a redelivery left is delivered again');
  assert.equal(redelivered?.getIntProperty('JMSXDeliveryCount'), 2);
  await after.engine.flush();

  const third = await openOn(store, clock);
  cleanup(() => third.engine.close());
  const q = third.engine.destinationStatistics('queue://q');
  assert.equal(q.messagesCurrent + q.messagesPending, 0, 'the move was stored: nothing comes back');
});
