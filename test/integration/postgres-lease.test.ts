import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { PostgresLease } from '../../src/store/postgres-lease.js';
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres-schema.js';
import { PostgresStore } from '../../src/store/postgres-store.js';
import type { StoreError } from '../../src/store/store-error.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { addOps } from '../helpers/store-contract.js';
import { PG_URL, adminQuery, dropSchema, postgresSkip, uniqueSchema } from '../helpers/postgres.js';
import { type Cleanup, teardown } from '../helpers/teardown.js';

const skip = await postgresSkip();
const TTL_MS = 5_000;

async function leases(cleanup: Cleanup, count: number, clock = new FakeClock()) {
  const schema = uniqueSchema('lease');
  await adminQuery(`CREATE SCHEMA "${schema}"`);
  const made = Array.from(
    { length: count },
    (_, i) =>
      new PostgresLease({
        url: PG_URL,
        schema,
        ttlMs: TTL_MS,
        clock,
        instanceId: `gw-${i}`,
        lockTimeoutMs: 200,
      }),
  );
  cleanup(async () => {
    await Promise.all(made.map((lease) => lease.close()));
    await dropSchema(schema);
  });
  await made[0]!.ensureTable();
  return { made, clock, schema };
}

test('lease - one of ten instances claiming at once gets the lease, with epoch 1', { skip }, async (t) => {
  const cleanup = teardown(t);
  const { made } = await leases(cleanup, 10);
  const epochs = await Promise.all(made.map((lease) => lease.tryAcquire()));
  assert.deepEqual(
    epochs.filter((epoch) => epoch !== undefined),
    [1],
  );
  const holder = await made[0]!.read();
  assert.equal(holder?.holder, made[epochs.indexOf(1)]!.instanceId);
});

test(
  'lease - a standby takes over only once the grant ran out, with the next epoch; the old holder cannot renew',
  { skip },
  async (t) => {
    const cleanup = teardown(t);
    const { made, clock } = await leases(cleanup, 2);
    const [active, standby] = made as [PostgresLease, PostgresLease];
    assert.equal(await active.tryAcquire(), 1);
    await clock.advance(TTL_MS - 1);
    assert.equal(await standby.tryAcquire(), undefined, 'the grant still runs');
    assert.equal(await active.renew(1), true);
    await clock.advance(TTL_MS - 1);
    assert.equal(await standby.tryAcquire(), undefined, 'renewed, so it runs again');
    await clock.advance(1);
    assert.equal(await standby.tryAcquire(), 2);
    assert.equal(await active.renew(1), false);
    assert.equal(await active.tryAcquire(), undefined);
  },
);

test('lease - a released grant is taken at once', { skip }, async (t) => {
  const cleanup = teardown(t);
  const { made } = await leases(cleanup, 2);
  assert.equal(await made[0]!.tryAcquire(), 1);
  await made[0]!.release(1);
  assert.equal((await made[0]!.read())?.holder, undefined);
  assert.equal(await made[1]!.tryAcquire(), 2);
});

test(
  'lease - a renewal after the grant ran out keeps it when nobody took over (the epoch did not move)',
  { skip },
  async (t) => {
    const cleanup = teardown(t);
    const { made, clock } = await leases(cleanup, 1);
    assert.equal(await made[0]!.tryAcquire(), 1);
    await clock.advance(TTL_MS * 3);
    assert.equal(await made[0]!.renew(1), true);
  },
);

test(
  'fence - a write of an old epoch is refused, and a takeover waits for a write in progress',
  { skip },
  async (t) => {
    const cleanup = teardown(t);
    const { made, clock } = await leases(cleanup, 2);
    const [active, standby] = made as [PostgresLease, PostgresLease];
    assert.equal(await active.tryAcquire(), 1);
    const writer = new pg.Client({ connectionString: PG_URL });
    await writer.connect();
    cleanup(() => writer.end());
    const fence = active.fence(1);

    // A write in progress holds the lease row: past the grant, the claim gives up for this round.
    await writer.query('BEGIN');
    const { text, values } = fence.statement();
    assert.equal((await writer.query(text, [...values])).rowCount, 1);
    await clock.advance(TTL_MS);
    assert.equal(await standby.tryAcquire(), undefined, 'the claim waits for the write, then gives up');
    await writer.query('COMMIT');
    assert.equal(await standby.tryAcquire(), 2);

    // The old active, paused through the takeover, comes back: its next write finds no grant.
    await writer.query('BEGIN');
    const stale = fence.statement();
    assert.equal((await writer.query(stale.text, [...stale.values])).rowCount, 0);
    await writer.query('ROLLBACK');
    assert.match(fence.describe(), /gw-0.*no longer holds the active lease of epoch 1/);
  },
);

test('fence - a grant that ran out refuses writes even before anyone takes over', { skip }, async (t) => {
  const cleanup = teardown(t);
  const { made, clock } = await leases(cleanup, 1);
  assert.equal(await made[0]!.tryAcquire(), 1);
  await clock.advance(TTL_MS);
  const { text, values } = made[0]!.fence(1).statement();
  const writer = new pg.Client({ connectionString: PG_URL });
  await writer.connect();
  cleanup(() => writer.end());
  assert.equal((await writer.query(text, [...values])).rowCount, 0);
});

test(
  'lease - an unreachable database rejects the claim with the cause, never the password',
  { skip },
  async () => {
    const lease = new PostgresLease({
      url: 'postgres://gateway:s3cret-pw@127.0.0.1:1/test',
      schema: 'nowhere',
      ttlMs: TTL_MS,
    });
    try {
      await assert.rejects(lease.tryAcquire(), (error: Error) => {
        assert.match(error.message, /ECONNREFUSED|connect/);
        assert.doesNotMatch(error.message, /s3cret-pw/);
        return true;
      });
    } finally {
      await lease.close();
    }
  },
);

test(
  'fenced store - the active writes; once its lease is taken over, every commit fails as fenced and nothing of it is stored',
  { skip },
  async (t) => {
    const cleanup = teardown(t);
    const schema = uniqueSchema('fenced');
    const clock = new FakeClock();
    cleanup(() => dropSchema(schema));
    // The store's migrations make the lease table: no ensureTable here.
    const lease = (id: string) =>
      new PostgresLease({ url: PG_URL, schema, ttlMs: TTL_MS, clock, instanceId: id, lockTimeoutMs: 200 });
    const migrated = await PostgresStore.migrate({ url: PG_URL, schema });
    assert.equal(migrated.to, POSTGRES_SCHEMA_VERSION);
    const [first, second] = [lease('gw-1'), lease('gw-2')];
    cleanup(() => Promise.all([first.close(), second.close()]));
    assert.equal(await first.tryAcquire(), 1);
    const active = await PostgresStore.open({ url: PG_URL, schema, fence: first.fence(1) });
    cleanup(() => active.close());
    await active.recover();
    await active.commit(addOps('ID:1', 1));

    // A second store on the same schema opens while the first is open: the lease, not a lock, decides who writes.
    await clock.advance(TTL_MS);
    assert.equal(await second.tryAcquire(), 2);
    const next = await PostgresStore.open({ url: PG_URL, schema, fence: second.fence(2) });
    cleanup(() => next.close());
    await assert.rejects(active.commit(addOps('ID:2', 2)), (error: StoreError) => {
      assert.equal(error.kind, 'fenced');
      assert.match(
        error.message,
        /nothing of this commit was stored.*gw-1.*no longer holds the active lease of epoch 1/s,
      );
      return true;
    });
    const recovered = [...(await next.recover()).refs].map((ref) => ref.id);
    assert.deepEqual(recovered, ['ID:1'], 'the fenced commit left nothing');
    await next.commit(addOps('ID:3', 3));
    assert.deepEqual([...(await next.recover()).refs].map((ref) => ref.id).sort(), ['ID:1', 'ID:3']);
  },
);

test(
  'fenced store - a grant that ran out stops writes at once, and a renewal lets them go on',
  { skip },
  async (t) => {
    const cleanup = teardown(t);
    const schema = uniqueSchema('fenced');
    const clock = new FakeClock();
    cleanup(() => dropSchema(schema));
    await PostgresStore.migrate({ url: PG_URL, schema });
    const holder = new PostgresLease({ url: PG_URL, schema, ttlMs: TTL_MS, clock, instanceId: 'gw-1' });
    cleanup(() => holder.close());
    assert.equal(await holder.tryAcquire(), 1);
    const store = await PostgresStore.open({ url: PG_URL, schema, fence: holder.fence(1) });
    cleanup(() => store.close());
    await store.recover();
    await clock.advance(TTL_MS);
    await assert.rejects(store.commit(addOps('ID:1', 1)), { kind: 'fenced' });
    assert.equal(await holder.renew(1), true);
    await store.commit(addOps('ID:2', 2));
    assert.deepEqual(
      [...(await store.recover()).refs].map((ref) => ref.id),
      ['ID:2'],
    );
  },
);
