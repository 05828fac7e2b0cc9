/**
 * A send that carries store operations (`storeWith`): they are written in the same store commit
 * as the message, which is how a bridge stores a forwarded message and its duplicate-window
 * record together (BRG-2, PER-1).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DeliveryMode,
  IllegalStateError,
  type StoreOperation,
  Session,
  TextMessage,
} from '../../../../src/index.js';
import { testEngine } from '../../../helpers/engine.js';
import { teardown } from '../../../helpers/teardown.js';

const marker = (name: string): StoreOperation => ({
  op: 'putDestination',
  destination: { kind: 'queue', name, options: {} },
});

test('producer - storeWith operations are written in the same commit as a persistent message (PER-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q');
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('q'));
  const before = t.store.commits;
  await producer.send(new TextMessage('one'), { storeWith: [marker('rides-along')] });
  assert.equal(t.store.commits, before + 1, 'one commit for the message and what rides with it');
  const stored = await t.store.recover();
  assert.ok(stored.destinations.some((d) => d.name === 'rides-along'));
  assert.deepEqual(
    [...stored.refs].map((ref) => ref.backlog),
    ['queue://q'],
  );
});

test('producer - storeWith operations are stored even when the message itself is not (PER-1)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q');
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('q'));
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  await producer.send(new TextMessage('one'), { storeWith: [marker('still-stored')] });
  const stored = await t.store.recover();
  assert.ok(stored.destinations.some((d) => d.name === 'still-stored'));
  assert.deepEqual([...stored.refs], [], 'the non-persistent message is not stored');
});

test('producer - storeWith is refused in a transacted session, whose sends are stored at commit', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('q');
  const session = t.connect().createSession(true, Session.SESSION_TRANSACTED);
  const producer = session.createProducer(session.createQueue('q'));
  await assert.rejects(
    producer.send(new TextMessage('one'), { storeWith: [marker('never')] }),
    (error: unknown) =>
      error instanceof IllegalStateError && /not for transacted sessions/.test(error.message),
  );
});
