/**
 * A file store written before the one typed-value codec recovers unchanged. That version wrote a
 * float as its full double expansion (`0.10000000149011612`) where the codec writes its shortest
 * decimal (`0.1`); every other value was already written as the codec writes it.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { MapMessage, StreamMessage, type Message } from '../../../src/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { serializeMessage } from '../../../src/store/message-serializer.js';

/** The columns of a map message as the previous version wrote them (captured from its serializer). */
const PREVIOUS_MAP_ROW = {
  properties:
    '["ratio","float",0.10000000149011612,"nan","double","NaN","tiny","byte",-7,"minLong","long","-9223372036854775808"]',
  body: '["tenth","float",0.10000000149011612,"negZero","double","-0","big","long","9223372036854775807","raw","bytes","AQL/","c","char","ü","s","short",-300]',
};

/** The body of a stream message as the previous version wrote it. */
const PREVIOUS_STREAM_BODY = '["float",3.299999952316284,"float","-Infinity","double","-0","int",-5]';

async function storeWithRows(dir: string, rows: Array<[Message, string | null, string]>): Promise<void> {
  const store = await FileStore.open({ path: dir });
  try {
    await store.commit(
      rows.flatMap(([message], seq) => {
        const id = message.getJMSMessageID()!;
        return [
          { op: 'addMessage' as const, id, seq: seq + 1, message },
          { op: 'addRef' as const, backlog: 'queue://q', id, seq: seq + 1, deliveryCount: 0, notBefore: 0 },
        ];
      }),
    );
  } finally {
    await store.close();
  }
  // Rewrite the value columns as the previous version wrote them.
  const db = new Database(join(dir, 'gateway.db'));
  try {
    const update = db.prepare('UPDATE messages SET properties = ?, body = ? WHERE id = ?');
    for (const [message, properties, body] of rows) update.run(properties, body, message.getJMSMessageID());
  } finally {
    db.close();
  }
}

test('file store - a store written with the previous float encoding recovers every typed value exactly (PER-1, MSG-3)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'previous-encoding-'));
  try {
    const map = new MapMessage();
    map.setJMSMessageID('ID:old-map');
    const stream = new StreamMessage();
    stream.setJMSMessageID('ID:old-stream');
    await storeWithRows(dir, [
      [map, PREVIOUS_MAP_ROW.properties, PREVIOUS_MAP_ROW.body],
      [stream, null, PREVIOUS_STREAM_BODY],
    ]);

    const store = await FileStore.open({ path: dir });
    try {
      const mapBack = store.readMessage('ID:old-map') as MapMessage;
      assert.deepEqual(mapBack.getTypedProperty('ratio'), { type: 'float', value: Math.fround(0.1) });
      assert.ok(Number.isNaN(mapBack.getDoubleProperty('nan')));
      assert.deepEqual(mapBack.getTypedProperty('tiny'), { type: 'byte', value: -7 });
      assert.equal(mapBack.getLongProperty('minLong'), -9223372036854775808n);
      assert.deepEqual(Object.fromEntries(mapBack.getTypedEntries()), {
        tenth: { type: 'float', value: Math.fround(0.1) },
        negZero: { type: 'double', value: -0 },
        big: { type: 'long', value: 9223372036854775807n },
        raw: { type: 'bytes', value: Uint8Array.from([1, 2, 255]) },
        c: { type: 'char', value: 'ü' },
        s: { type: 'short', value: -300 },
      });
      assert.ok(Object.is(mapBack.getDouble('negZero'), -0));

      const streamBack = store.readMessage('ID:old-stream') as StreamMessage;
      assert.deepEqual(streamBack.getTypedItems(), [
        { type: 'float', value: Math.fround(3.3) },
        { type: 'float', value: -Infinity },
        { type: 'double', value: -0 },
        { type: 'int', value: -5 },
      ]);

      // Written again, the same values take the codec's form: the shortest float decimal.
      assert.equal(
        serializeMessage(streamBack).body,
        '["float",3.3,"float","-Infinity","double","-0","int",-5]',
      );
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
