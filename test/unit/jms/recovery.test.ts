import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JmsEngine, type MessageStore, type RecoveredState, TextMessage } from '../../../src/index.js';

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

test('recovery - references in seq order are restored in that order, one message shared by its references (PER-1)', async () => {
  const engine = await JmsEngine.open({
    store: storeReturning({
      destinations: [queue],
      subscriptions: [],
      refs: [ref('ID:1', 1), ref('ID:2', 2)],
      maxSeq: 2,
    }),
  });
  assert.equal(engine.destinationStatistics('queue://q').messagesCurrent, 2);
  await engine.close();
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
