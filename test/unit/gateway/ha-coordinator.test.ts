import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type HaRole, HaCoordinator } from '../../../src/gateway/ha-coordinator.js';
import type { Lease, LeaseHolder } from '../../../src/store/lease.js';
import type { Clock } from '../../../src/jms/clock.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';

const TTL_MS = 6_000;

/** The lease row, shared by the instances of one test, on the test's clock. */
class LeaseRow {
  holder: string | undefined;
  epoch = 0;
  expiresAt = 0;
  /** While set, every call of every instance fails (the database is unreachable). */
  down = false;
  constructor(readonly clock: FakeClock) {}
}

class FakeLease implements Lease {
  constructor(
    readonly row: LeaseRow,
    readonly instanceId: string,
  ) {}
  #check(): void {
    if (this.row.down) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  }
  tryAcquire(): Promise<number | undefined> {
    return Promise.resolve().then(() => {
      this.#check();
      const now = this.row.clock.now();
      if (this.row.holder !== undefined && this.row.expiresAt > now) return undefined;
      Object.assign(this.row, {
        holder: this.instanceId,
        epoch: this.row.epoch + 1,
        expiresAt: now + TTL_MS,
      });
      return this.row.epoch;
    });
  }
  renew(epoch: number): Promise<boolean> {
    return Promise.resolve().then(() => {
      this.#check();
      if (this.row.holder !== this.instanceId || this.row.epoch !== epoch) return false;
      this.row.expiresAt = this.row.clock.now() + TTL_MS;
      return true;
    });
  }
  release(epoch: number): Promise<void> {
    return Promise.resolve().then(() => {
      this.#check();
      if (this.row.holder === this.instanceId && this.row.epoch === epoch) this.row.holder = undefined;
    });
  }
  read(): Promise<LeaseHolder | undefined> {
    return Promise.resolve({ holder: this.row.holder, epoch: this.row.epoch, expiresAt: this.row.expiresAt });
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * One process's view of the shared clock: a killed process's timers never fire; a paused one's
 * fire when it resumes, late, as a SIGSTOPped process's would.
 */
class ProcessClock implements Clock {
  killed = false;
  paused = false;
  readonly #late: Array<() => void> = [];
  constructor(readonly shared: FakeClock) {}
  now(): number {
    return this.shared.now();
  }
  setTimer(callback: () => void, delayMs: number): unknown {
    return this.shared.setTimer(() => {
      if (this.killed) return;
      if (this.paused) this.#late.push(callback);
      else callback();
    }, delayMs);
  }
  clearTimer(handle: unknown): void {
    this.shared.clearTimer(handle);
  }
  async resume(): Promise<void> {
    this.paused = false;
    for (const callback of this.#late.splice(0)) callback();
    await settle();
  }
}

/** An instance: its coordinator and what its handlers were told. */
function instance(row: LeaseRow, id: string, failActivation = false, drainMs = 0) {
  const events: string[] = [];
  const clock = new ProcessClock(row.clock);
  const coordinator = new HaCoordinator({
    lease: new FakeLease(row, id),
    ttlMs: TTL_MS,
    claimEveryMs: 1_000,
    clock,
    handlers: {
      becomeActive: (epoch) => {
        events.push(`active ${epoch}`);
        return failActivation ? Promise.reject(new Error('the store would not open')) : Promise.resolve();
      },
      becomeStandby: (reason) => {
        events.push(`standby: ${reason}`);
        if (drainMs === 0) return Promise.resolve();
        return new Promise<void>((resolve) =>
          clock.setTimer(() => {
            events.push('drained');
            resolve();
          }, drainMs),
        );
      },
    },
  });
  return { coordinator, events, clock, role: (): HaRole => coordinator.state.role };
}

/** Two instances on one lease: `a` started first and active, `b` started after as its standby. */
async function activeAndStandby(options: { drainMs?: number } = {}) {
  const row = new LeaseRow(new FakeClock());
  const a = instance(row, 'a', false, options.drainMs ?? 0);
  const b = instance(row, 'b');
  a.coordinator.start();
  await row.clock.advance(0);
  b.coordinator.start();
  return { row, a, b };
}

test('ha - the first instance becomes active, the second stays a standby while the grant is renewed', async () => {
  const { row, a, b } = await activeAndStandby();
  await row.clock.advance(TTL_MS * 5);
  assert.equal(a.role(), 'active');
  assert.equal(b.role(), 'standby');
  assert.deepEqual(a.events, ['active 1']);
  assert.deepEqual(b.events, []);
  await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
});

test('ha - when the active dies, the standby takes over within the grant and a claim round', async () => {
  const { row, a, b } = await activeAndStandby();
  await row.clock.advance(2_000);
  a.clock.killed = true;
  const grantEnd = row.expiresAt;
  let tookOverAt: number | undefined;
  b.coordinator.onChange((state) => {
    if (state.role === 'active') tookOverAt ??= row.clock.now();
  });
  await row.clock.advance(TTL_MS + 2_000);
  assert.equal(b.role(), 'active');
  assert.ok(
    tookOverAt! >= grantEnd && tookOverAt! <= grantEnd + 1_000,
    'within one claim round of the grant ending',
  );
  assert.deepEqual(b.events, ['active 2']);
  await b.coordinator.stop();
});

test('ha - a paused active that comes back after a takeover becomes a standby at once', async () => {
  const { row, a, b } = await activeAndStandby();
  a.clock.paused = true;
  await row.clock.advance(TTL_MS + 2_000);
  assert.equal(b.role(), 'active');
  assert.equal(a.role(), 'active', 'paused, it has not noticed yet');
  await a.clock.resume();
  assert.equal(a.role(), 'standby');
  assert.match(a.events.at(-1)!, /^standby: the lease (was taken over|could not be renewed)/);
  await row.clock.advance(TTL_MS * 2);
  assert.equal(a.role(), 'standby');
  assert.equal(b.role(), 'active');
  await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
});

test('ha - an active that cannot reach the database stops on its own when its grant runs out, then claims again', async () => {
  const row = new LeaseRow(new FakeClock());
  const a = instance(row, 'a');
  a.coordinator.start();
  await row.clock.advance(TTL_MS);
  row.down = true;
  await row.clock.advance(TTL_MS);
  assert.equal(a.role(), 'standby');
  assert.deepEqual(a.events, ['active 1', 'standby: the lease could not be renewed before it ran out']);
  row.down = false;
  await row.clock.advance(2_000);
  assert.equal(a.role(), 'active', 'nobody else took it: the same instance claims it again');
  assert.deepEqual(a.events.at(-1), 'active 2');
  await a.coordinator.stop();
});

test('ha - a database outage shorter than the grant changes nothing', async () => {
  const row = new LeaseRow(new FakeClock());
  const a = instance(row, 'a');
  a.coordinator.start();
  await row.clock.advance(TTL_MS);
  row.down = true;
  await row.clock.advance(TTL_MS / 2);
  row.down = false;
  await row.clock.advance(TTL_MS * 3);
  assert.equal(a.role(), 'active');
  assert.deepEqual(a.events, ['active 1']);
  await a.coordinator.stop();
});

test('ha - step-down hands over to the standby at once, and the old active stays a standby', async () => {
  const { row, a, b } = await activeAndStandby();
  await row.clock.advance(3_000);
  assert.equal(await a.coordinator.stepDown(), true);
  assert.equal(a.role(), 'standby');
  await row.clock.advance(1_000);
  assert.equal(b.role(), 'active');
  await row.clock.advance(TTL_MS * 3);
  assert.equal(a.role(), 'standby');
  assert.deepEqual(a.events, ['active 1', 'standby: stepped down']);
  assert.equal(await a.coordinator.stepDown(), false, 'a standby has nothing to hand over');
  await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
});

test('ha - stepping down keeps the lease renewed while the bridges drain, then hands over', async () => {
  const { row, a, b } = await activeAndStandby({ drainMs: TTL_MS * 2 });
  const steppingDown = a.coordinator.stepDown();
  await row.clock.advance(TTL_MS * 2 - 1);
  assert.equal(a.role(), 'stepping-down');
  assert.equal(b.role(), 'standby', 'the drain outlasts a grant, but the lease is renewed meanwhile');
  await row.clock.advance(1);
  assert.equal(await steppingDown, true);
  await row.clock.advance(1_000);
  assert.equal(b.role(), 'active');
  assert.deepEqual(a.events, ['active 1', 'standby: stepped down', 'drained']);
  await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
});

test('ha - an instance that cannot become active gives the lease back to the others', async () => {
  const row = new LeaseRow(new FakeClock());
  const a = instance(row, 'a', true);
  a.coordinator.start();
  await row.clock.advance(0);
  assert.equal(a.role(), 'standby');
  assert.equal(row.holder, undefined);
  assert.match(a.events.join('\n'), /standby: could not become active: the store would not open/);
  const b = instance(row, 'b');
  b.coordinator.start();
  await row.clock.advance(0);
  assert.equal(b.role(), 'active');
  await Promise.all([a.coordinator.stop(), b.coordinator.stop()]);
});

test('ha - stopping the active gives the lease back', async () => {
  const row = new LeaseRow(new FakeClock());
  const a = instance(row, 'a');
  a.coordinator.start();
  await row.clock.advance(0);
  await a.coordinator.stop();
  assert.equal(a.role(), 'stopped');
  assert.equal(row.holder, undefined);
  assert.deepEqual(a.events, ['active 1', 'standby: the gateway is stopping']);
});
