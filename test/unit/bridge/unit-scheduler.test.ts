import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Delivery } from '../../../src/spi/index.js';
import { type Item, itemOf } from '../../../src/bridge/delivery-item.js';
import { StatusTracker } from '../../../src/bridge/status-tracker.js';
import { type Unit, UnitScheduler } from '../../../src/bridge/unit-scheduler.js';
import { silentLogger } from '../../../src/jms/logger.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';
import { message, textOf } from './fakes.js';

function itemFor(text: string, group: string): Item {
  const delivery: Delivery = { message: message(text, { group }), settle: () => Promise.resolve() };
  return itemOf(delivery, 1);
}

/** A scheduler whose attempts record the head message and take it off, or do what `on` says. */
function scheduler(concurrency: number, on?: (unit: Unit, scheduler: UnitScheduler) => boolean) {
  const clock = new FakeClock();
  const status = new StatusTracker({ bridge: 'b', clock, logger: silentLogger });
  status.starting();
  status.running();
  const sent: string[] = [];
  let running = 0;
  let most = 0;
  const units: UnitScheduler = new UnitScheduler({
    clock,
    concurrency,
    maxInFlightPerUnit: 2,
    tracksIds: false,
    status,
    unitKeyOf: (item) => item.message.getStringProperty('JMSXGroupID'),
    mayStart: () => true,
    attempt: async (unit) => {
      running++;
      most = Math.max(most, running);
      await settle();
      running--;
      const head = unit.items[0]!;
      if (on?.(unit, units)) return;
      sent.push(textOf(head.message));
      units.removeHead(unit, head);
    },
    attemptThrew: () => {},
    stepEnded: () => {},
  });
  return { clock, status, units, sent, most: () => most };
}

test('unit scheduler - a unit sends its messages one at a time in order; units share `concurrency` slots (ORD-3)', async () => {
  const { units, sent, most } = scheduler(2);
  for (const [text, group] of [
    ['a1', 'A'],
    ['b1', 'B'],
    ['c1', 'C'],
    ['a2', 'A'],
  ] as const)
    units.enqueue(itemFor(text, group));
  for (let i = 0; i < 10; i++) await settle();
  assert.deepEqual(
    sent.filter((t) => t.startsWith('a')),
    ['a1', 'a2'],
  );
  assert.deepEqual([...sent].sort(), ['a1', 'a2', 'b1', 'c1']);
  assert.equal(most(), 2, 'never more than two units at once');
});

test('unit scheduler - a unit waiting for its retry delay holds the messages behind it and says so to the status', async () => {
  let failures = 1;
  const { units, sent, status, clock } = scheduler(2, (unit, s) => {
    if (textOf(unit.items[0]!.message) !== 'a1' || failures-- <= 0) return false;
    s.retryLater(unit, 1_000, 'retry-delay');
    return true;
  });
  units.enqueue(itemFor('a1', 'A'));
  units.enqueue(itemFor('a2', 'A'));
  units.enqueue(itemFor('b1', 'B'));
  for (let i = 0; i < 10; i++) await settle();
  assert.deepEqual(sent, ['b1']);
  assert.equal(status.status, 'retrying');
  assert.equal(units.full, true, 'unit A holds maxInFlightPerUnit messages');
  await clock.advance(1_000);
  for (let i = 0; i < 10; i++) await settle();
  assert.deepEqual(sent, ['b1', 'a1', 'a2']);
  assert.equal(status.status, 'connected');
  assert.equal(units.full, false);
});

test('unit scheduler - a stalled unit keeps its messages (counted for the drain) until resumeStalled', async () => {
  let stall = true;
  const { units, sent, status } = scheduler(1, (unit, s) => {
    if (!stall) return false;
    s.stall(unit, 'limit reached');
    return true;
  });
  units.enqueue(itemFor('a1', 'A'));
  units.enqueue(itemFor('a2', 'A'));
  for (let i = 0; i < 10; i++) await settle();
  assert.deepEqual(sent, []);
  assert.equal(units.stalledItems, 2);
  assert.equal('reason' in status.report ? status.report.reason : undefined, 'unit-stalled');
  stall = false;
  units.resumeStalled();
  for (let i = 0; i < 10; i++) await settle();
  assert.deepEqual(sent, ['a1', 'a2']);
  assert.equal(units.stalledItems, 0);
  assert.equal(status.status, 'connected');
});
