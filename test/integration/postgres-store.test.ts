/**
 * The PostgreSQL store against a real PostgreSQL: the store contract, then what only it has —
 * schema checks and migrations, group commit's per-commit failures, and bad input (unreachable
 * server, unknown user, read-only database).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionFactory, JmsEngine, type MessageStore, TextMessage } from '../../src/index.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-schema.js';
import { StoreError } from '../../src/store/store-error.js';
import { addOps, storeContract } from '../helpers/store-contract.js';
import {
  PG_URL,
  adminQuery,
  dropSchema,
  endConnectionsNamed,
  postgresSkip,
  uniqueSchema,
} from '../helpers/postgres.js';
import { closedPort } from '../helpers/ports.js';
import { storeError } from '../helpers/store-error.js';

const skip = (await postgresSkip()) ?? false;

storeContract({
  name: 'postgres store',
  pages: true,
  skip,
  create() {
    const schema = uniqueSchema('contract');
    const opened: MessageStore[] = [];
    return Promise.resolve({
      async open() {
        const store = await PostgresStore.open({ url: PG_URL, schema });
        opened.push(store);
        return store;
      },
      drop: (store: MessageStore) => store.close(),
      async dispose() {
        for (const store of opened) await store.close();
        await dropSchema(schema);
      },
    });
  },
});

async function withSchema(fn: (schema: string) => Promise<void>): Promise<void> {
  const schema = uniqueSchema('pgstore');
  try {
    await fn(schema);
  } finally {
    await dropSchema(schema);
  }
}

/** Runs `fn` on a store opened and recovered in a schema of its own; closes it and drops the schema after. */
function withRecoveredStore(fn: (store: PostgresStore, schema: string) => Promise<void>): Promise<void> {
  return withSchema(async (schema) => {
    const store = await PostgresStore.open({ url: PG_URL, schema });
    try {
      await store.recover();
      await fn(store, schema);
    } finally {
      await store.close();
    }
  });
}

test('postgres store - a new schema is created at the current version, and opens again as is', { skip }, () =>
  withSchema(async (schema) => {
    const store = await PostgresStore.open({ url: PG_URL, schema });
    await store.close();
    const meta = await adminQuery(`SELECT key, value FROM "${schema}".meta ORDER BY key`);
    const values = Object.fromEntries(
      meta.rows.map((row: { key: string; value: string }) => [row.key, row.value]),
    );
    assert.equal(values.application, 'jms-gateway');
    assert.equal(values.schema, String(POSTGRES_SCHEMA_VERSION));
    const again = await PostgresStore.open({ url: PG_URL, schema, migrate: false });
    await again.close();
  }),
);

test(
  'postgres store - a foreign schema, a newer one, or a missing one without migrate is refused with a clear error',
  { skip },
  () =>
    withSchema(async (schema) => {
      await assert.rejects(
        PostgresStore.open({ url: PG_URL, schema, migrate: false }),
        storeError(
          'incompatible',
          /holds no store and store\.migrate is false: run 'jms-gateway store migrate'/,
        ),
      );
      await adminQuery(`CREATE SCHEMA "${schema}"`);
      await adminQuery(`CREATE TABLE "${schema}".orders (id int)`);
      await assert.rejects(
        PostgresStore.open({ url: PG_URL, schema }),
        storeError('incompatible', /is not a jms-gateway store \(it holds tables orders\)/),
      );
      await adminQuery(`DROP TABLE "${schema}".orders`);
      await PostgresStore.open({ url: PG_URL, schema }).then((store) => store.close());
      await adminQuery(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema'`, [
        String(POSTGRES_SCHEMA_VERSION + 1),
      ]);
      await assert.rejects(
        PostgresStore.open({ url: PG_URL, schema }),
        storeError('incompatible', /newer than this gateway reads/),
      );
    }),
);

test('postgres store - three migrations of a new schema at once make it once (advisory lock)', { skip }, () =>
  withSchema(async (schema) => {
    const outcomes = await Promise.all([1, 2, 3].map(() => PostgresStore.migrate({ url: PG_URL, schema })));
    assert.deepEqual(outcomes.map((o) => o.from).sort(), [
      0,
      POSTGRES_SCHEMA_VERSION,
      POSTGRES_SCHEMA_VERSION,
    ]);
    await (await PostgresStore.open({ url: PG_URL, schema, migrate: false })).close();
  }),
);

test(
  'postgres store - a bad commit in a group is rejected alone; the others are stored (group commit)',
  { skip },
  () =>
    withRecoveredStore(async (store) => {
      // Held back by a first commit, so the next ones share a group; one of them breaks a constraint.
      const first = store.commit(addOps('ID:0', 100));
      const good1 = store.commit(addOps('ID:1', 1));
      const bad = store.commit(addOps('ID:2', 1)); // same seq as ID:1: the primary key refuses it
      const good2 = store.commit(addOps('ID:3', 3));
      await first;
      await good1;
      await assert.rejects(bad, storeError('write', /nothing of this commit was stored/));
      await good2;
      const refs = [...(await store.recover()).refs].map((r) => r.id);
      assert.deepEqual(refs, ['ID:1', 'ID:3', 'ID:0']);
    }),
);

test(
  'postgres store - nothing listening: a clear error after the configured attempts',
  { skip },
  async () => {
    const port = await closedPort();
    const waits: number[] = [];
    await assert.rejects(
      PostgresStore.open({
        url: `postgres://gateway:s3cret-pw@127.0.0.1:${port}/test`,
        connectAttempts: 3,
        connectBackoffMs: 100,
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      }),
      storeError(
        'open',
        /could not connect \(attempt 3 of 3\).*ECONNREFUSED.*is PostgreSQL running/,
        's3cret-pw',
      ),
    );
    assert.deepEqual(waits, [100, 200]);
  },
);

test('postgres store - an unknown user is refused without showing the password', { skip }, async () => {
  const url = new URL(PG_URL);
  url.username = `nobody_${process.pid}`;
  url.password = 'wrong-pass-123';
  await assert.rejects(
    PostgresStore.open({ url: url.toString(), schema: uniqueSchema() }),
    storeError('open', /could not connect.*28000.*nobody_.*check the user and password/, 'wrong-pass-123'),
  );
});

test(
  'postgres store - a read-only database: sends fail and nothing is acknowledged that was not stored',
  { skip },
  () =>
    withSchema(async (schema) => {
      const role = `ro_${process.pid}_${Date.now()}`;
      await adminQuery(`CREATE ROLE ${role} LOGIN`);
      try {
        const url = new URL(PG_URL);
        url.username = role;
        await adminQuery(`CREATE SCHEMA "${schema}" AUTHORIZATION ${role}`);
        const store = await PostgresStore.open({ url: url.toString(), schema });
        try {
          await store.recover();
          await store.commit(addOps('ID:1', 1));
          await adminQuery(`ALTER ROLE ${role} SET default_transaction_read_only = on`);
          // The setting applies to new sessions: end the store's, as a failover to a replica would.
          await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [
            role,
          ]);
          const results = await Promise.allSettled([
            store.commit(addOps('ID:2', 2)),
            store.commit(addOps('ID:3', 3)),
          ]);
          for (const result of results) assert.equal(result.status, 'rejected');
          await assert.rejects(store.commit(addOps('ID:4', 4)), storeError('write', /read-only/));
        } finally {
          await store.close();
        }
        const stored = await adminQuery(`SELECT id FROM "${schema}".messages ORDER BY seq`);
        assert.deepEqual(
          stored.rows.map((row: { id: string }) => row.id),
          ['ID:1'],
        );
      } finally {
        await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await adminQuery(`DROP ROLE IF EXISTS ${role}`);
      }
    }),
);

test(
  'postgres store - operations on the same rows in one group keep their order (group commit)',
  { skip },
  () =>
    withRecoveredStore(async (store) => {
      const first = store.commit(addOps('ID:0', 100));
      const message = new TextMessage('one');
      message.setJMSMessageID('ID:1');
      const group = [
        store.commit([
          { op: 'addMessage', id: 'ID:1', seq: 1, message },
          { op: 'addRef', backlog: 'queue://q', id: 'ID:1', seq: 1, deliveryCount: 0, notBefore: 0 },
          { op: 'addRef', backlog: 'queue://r', id: 'ID:1', seq: 1, deliveryCount: 0, notBefore: 0 },
        ]),
        store.commit([
          { op: 'updateRef', backlog: 'queue://q', id: 'ID:1', deliveryCount: 1, notBefore: 10 },
        ]),
        store.commit([
          { op: 'updateRef', backlog: 'queue://q', id: 'ID:1', deliveryCount: 2, notBefore: 20 },
        ]),
        store.commit([{ op: 'removeRef', backlog: 'queue://r', id: 'ID:1' }]),
        store.commit([
          { op: 'addRef', backlog: 'queue://r', id: 'ID:1', seq: 1, deliveryCount: 5, notBefore: 50 },
        ]),
        store.commit([{ op: 'removeRef', backlog: 'queue://a', id: 'ID:0' }]),
      ];
      await first;
      await Promise.all(group);
      assert.ok(store.stats.transactions < store.stats.commits, 'the commits shared transactions');
      const refs = [...(await store.recover()).refs].map(
        (r) => `${r.backlog} ${r.id} ${r.deliveryCount} ${r.notBefore}`,
      );
      assert.deepEqual(refs.sort(), ['queue://q ID:1 2 20', 'queue://r ID:1 5 50']);
      assert.equal(store.readMessage('ID:0'), undefined);
    }),
);

test(
  'postgres store - a second gateway on a store in use is refused; after close it opens (one gateway per store)',
  { skip },
  () =>
    withSchema(async (schema) => {
      const first = await PostgresStore.open({ url: PG_URL, schema });
      try {
        await assert.rejects(
          PostgresStore.open({ url: PG_URL, schema, lockTimeoutMs: 0 }),
          storeError('locked', /is in use by another gateway/),
        );
      } finally {
        await first.close();
      }
      const second = await PostgresStore.open({ url: PG_URL, schema, lockTimeoutMs: 0 });
      await second.close();
    }),
);

test(
  'postgres store - a lost connection is made again, and the store keeps its hold on the schema',
  { skip },
  () =>
    withRecoveredStore(async (store, schema) => {
      await store.commit(addOps('ID:1', 1));
      await endConnectionsNamed(`jms-gateway store ${schema}`);
      // The first commit after the loss may fail (its connection was cut); the next ones go through.
      await store.commit(addOps('ID:2', 2)).catch(() => undefined);
      await store.commit(addOps('ID:3', 3));
      await assert.rejects(
        PostgresStore.open({ url: PG_URL, schema, lockTimeoutMs: 0 }),
        storeError('locked', /in use by another gateway/),
      );
      assert.ok(store.readMessage('ID:3'));
    }),
);

test(
  'postgres store - a full database: the persistent send fails, the message is never delivered, and sends work again once there is room',
  { skip },
  () =>
    withSchema(async (schema) => {
      const store = await PostgresStore.open({ url: PG_URL, schema });
      const engine = await JmsEngine.open({ store, clock: new FakeClock() });
      try {
        const connection = new ConnectionFactory(engine).createConnection();
        connection.start();
        const session = connection.createSession();
        const queue = session.createQueue('orders');
        const producer = session.createProducer(queue);
        await producer.send(new TextMessage('before'));
        // What the server answers when its disk is full (SQLSTATE 53100), for every new message row.
        await adminQuery(`CREATE FUNCTION "${schema}".disk_full() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`);
        await adminQuery(
          `CREATE TRIGGER disk_full BEFORE INSERT ON "${schema}".messages FOR EACH ROW EXECUTE FUNCTION "${schema}".disk_full()`,
        );
        await assert.rejects(
          producer.send(new TextMessage('refused')),
          storeError('write', /53100.*the database is full/),
        );
        await adminQuery(`DROP TRIGGER disk_full ON "${schema}".messages`);
        await producer.send(new TextMessage('after'));
        const consumer = session.createConsumer(queue);
        const got: (string | null)[] = [];
        for (let m = await consumer.receiveNoWait(); m !== null; m = await consumer.receiveNoWait())
          got.push((m as TextMessage).getText());
        assert.deepEqual(got, ['before', 'after']);
        await connection.close();
      } finally {
        await engine.close();
      }
      const stored = await adminQuery(`SELECT count(*)::int AS n FROM "${schema}".messages`);
      assert.equal((stored.rows[0] as { n: number }).n, 0, 'both delivered and acknowledged: nothing left');
    }),
);

test(
  'postgres store - the reading connection is made again after a loss: a paged-out body is read back',
  { skip },
  () =>
    withRecoveredStore(async (store, schema) => {
      await store.commit(addOps('ID:1', 1));
      assert.equal((store.readMessage('ID:1') as TextMessage).getText(), 'ID:1');
      await endConnectionsNamed(`jms-gateway store reader ${schema}`);
      // The read that meets the cut connection fails with a store error (the engine tries a paged
      // body again); the next one connects anew.
      let text: string | null | undefined;
      for (let attempt = 0; attempt < 2 && text === undefined; attempt++) {
        try {
          text = (store.readMessage('ID:1') as TextMessage).getText();
        } catch (error) {
          assert.ok(error instanceof StoreError, String(error));
        }
      }
      assert.equal(text, 'ID:1');
    }),
);
