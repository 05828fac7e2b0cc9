import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { TextMessage } from '../../../src/index.js';
import { type Clock, type ScheduledTimer, TimerQueue, systemTimerDelay } from '../../../src/jms/clock.js';
import { testEngine } from '../../helpers/engine.js';
import { FakeClock } from '../../helpers/fake-clock.js';

test('clock - a system timer is never armed past what setTimeout takes (DLV-1, DLV-6)', () => {
  // setTimeout fires a longer delay after 1 ms: a far schedule or a grown backoff would spin.
  assert.equal(systemTimerDelay(2 ** 47), 2 ** 31 - 1);
  assert.equal(systemTimerDelay(Infinity), 2 ** 31 - 1);
  assert.equal(systemTimerDelay(1500), 1500);
  assert.equal(systemTimerDelay(-5), 0);
  assert.equal(systemTimerDelay(Number.NaN), 0);
});

test('clock - a timer queue whose clock timer fires early arms again instead of firing (DLV-1)', () => {
  let now = 0;
  const armed: { callback: () => void; delayMs: number }[] = [];
  const clock: Clock = {
    now: () => now,
    setTimer: (callback, delayMs) => armed.push({ callback, delayMs }),
    clearTimer: () => undefined,
  };
  const timers = new TimerQueue(clock);
  let fired = 0;
  timers.at(2 ** 40, () => fired++);
  now = 2 ** 31 - 1;
  armed.at(-1)!.callback();
  assert.equal(fired, 0, 'not due yet');
  assert.equal(armed.at(-1)!.delayMs, 2 ** 40 - now, 'armed again for the rest');
  now = 2 ** 40;
  armed.at(-1)!.callback();
  assert.equal(fired, 1);
});

test('clock - cancelled timers leave the timer queue at once, however far they were due (SES-5)', async (t) => {
  const clock = new FakeClock();
  const timers = new TimerQueue(clock);
  t.after(() => timers.close());
  let fired = 0;
  const keep = timers.after(60_000, () => fired++);
  for (let i = 0; i < 10_000; i++) timers.after(30_000 + (i % 7), () => fired++).cancel();
  assert.equal(timers.size, 1, 'only the live timer is left');
  // Cancelled out of the middle of a larger heap too, in an order unlike the arming order.
  const many = Array.from({ length: 1_000 }, (_, i) => timers.after((i * 7919) % 1_000, () => fired++));
  for (let i = 0; i < many.length; i += 2) many[(i * 389) % many.length]!.cancel();
  assert.equal(timers.size, 1 + 500);
  keep.cancel();
  for (const timer of many) timer.cancel();
  assert.equal(timers.size, 0, 'no cancelled node is kept');
  await clock.advance(120_000);
  assert.equal(fired, 0);
});

test('clock - cancelling a timer that fired, or cancelling twice, changes nothing (SES-5)', async (t) => {
  const clock = new FakeClock();
  const timers = new TimerQueue(clock);
  t.after(() => timers.close());
  const fired: string[] = [];
  const first = timers.after(10, () => fired.push('first'));
  const second = timers.after(20, () => fired.push('second'));
  const third = timers.after(20, () => fired.push('third'));
  await clock.advance(10);
  assert.deepEqual(fired, ['first']);
  first.cancel();
  first.cancel();
  assert.equal(timers.size, 2, 'the fired timer took no other node with it');
  second.cancel();
  second.cancel();
  assert.equal(timers.size, 1);
  await clock.advance(10);
  assert.deepEqual(fired, ['first', 'third']);
  third.cancel();
  assert.equal(timers.size, 0);
});

test('clock - a firing callback that cancels a timer due at the same time stops it (SES-5)', async (t) => {
  const clock = new FakeClock();
  const timers = new TimerQueue(clock);
  t.after(() => timers.close());
  const fired: string[] = [];
  const later: ScheduledTimer[] = [];
  timers.after(5, () => {
    fired.push('a');
    for (const timer of later) timer.cancel();
  });
  later.push(timers.after(5, () => fired.push('b')));
  timers.after(5, () => fired.push('c'));
  await clock.advance(5);
  assert.deepEqual(fired, ['a', 'c']);
  assert.equal(timers.size, 0);
});

test('clock - a handle cancelled after the queue closed removes nothing armed since (SES-5)', () => {
  const clock = new FakeClock();
  const timers = new TimerQueue(clock);
  const old = Array.from({ length: 5 }, (_, i) => timers.after(i, () => undefined));
  timers.close();
  const fresh = timers.after(1, () => undefined);
  for (const timer of old) timer.cancel();
  assert.equal(timers.size, 1, 'a stale handle does not remove the node now in its slot');
  fresh.cancel();
  assert.equal(timers.size, 0);
});

type Step =
  { kind: 'arm'; delay: number } | { kind: 'cancel'; pick: number } | { kind: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('arm' as const), delay: fc.integer({ min: 0, max: 50 }) }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 30 }) }),
    weight: 1,
  },
);

test('clock - timers fire by due time, then arming order, whatever is cancelled between (SES-5, DLV-1)', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 60 }), async (steps) => {
      const clock = new FakeClock();
      const timers = new TimerQueue(clock);
      try {
        // The reference: a plain list of live timers, fired by sorting on (due, arming order).
        const model: { id: number; due: number }[] = [];
        const handles: ScheduledTimer[] = [];
        const fired: number[] = [];
        const expected: number[] = [];
        let now = 0;
        for (const s of steps) {
          if (s.kind === 'arm') {
            const id = handles.length;
            handles.push(timers.after(s.delay, () => fired.push(id)));
            model.push({ id, due: now + s.delay });
          } else if (s.kind === 'cancel') {
            if (handles.length === 0) continue;
            const id = s.pick % handles.length;
            handles[id]!.cancel();
            const at = model.findIndex((timer) => timer.id === id);
            if (at >= 0) model.splice(at, 1);
          } else {
            now += s.ms;
            const due = model
              .filter((timer) => timer.due <= now)
              .sort((a, b) => a.due - b.due || a.id - b.id);
            for (const timer of due) {
              expected.push(timer.id);
              model.splice(model.indexOf(timer), 1);
            }
            await clock.advance(s.ms);
          }
          assert.equal(timers.size, model.length, 'the heap holds exactly the live timers');
        }
        assert.deepEqual(fired, expected);
      } finally {
        timers.close();
      }
    }),
    { numRuns: 150 },
  );
});

test('clock - a waiting receive(timeout) answered by a send leaves no timer behind (SES-5)', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const connection = engine.connect();
  const session = connection.createSession();
  const queue = session.createQueue('receive-timeout');
  const producer = session.createProducer(queue);
  const consumer = session.createConsumer(queue);
  const before = engine.engine.timers.size;
  for (let i = 0; i < 2_000; i++) {
    const waiting = consumer.receive(30_000);
    assert.equal(engine.engine.timers.size, before + 1, 'a waiting receive keeps its timer');
    await producer.send(new TextMessage(`m${i}`));
    assert.equal(((await waiting) as TextMessage | null)?.getText(), `m${i}`);
  }
  assert.equal(
    engine.engine.timers.size,
    before + 1,
    "the answered receives left nothing behind but the consumer's one timeout timer",
  );
  const waiting = consumer.receive(30_000);
  await engine.clock.advance(30_000);
  assert.equal(await waiting, null);
  assert.equal(engine.engine.timers.size, before, 'nothing waits: no timer is left');
});

test('clock - receives with different timeouts on one consumer each end at their own deadline (SES-5)', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const connection = engine.connect();
  const session = connection.createSession();
  const queue = session.createQueue('receive-deadlines');
  const producer = session.createProducer(queue);
  const consumer = session.createConsumer(queue);
  const before = engine.engine.timers.size;
  const ended: string[] = [];
  const receive = (name: string, timeoutMs: number) =>
    consumer.receive(timeoutMs).then((message) => {
      ended.push(`${name}:${message === null ? 'null' : (message as TextMessage).getText()}`);
    });
  const long = receive('long', 5_000);
  const short = receive('short', 1_000);
  const untimed = receive('untimed', 0);
  await engine.clock.advance(999);
  assert.deepEqual(ended, [], 'nothing ends before its deadline');
  await engine.clock.advance(1);
  await short;
  assert.deepEqual(ended, ['short:null'], 'the later-armed, shorter one ends first');
  await producer.send(new TextMessage('first'));
  await long;
  assert.deepEqual(ended, ['short:null', 'long:first'], 'a message goes to the longest-waiting receive');
  await engine.clock.advance(10_000);
  assert.deepEqual(ended, ['short:null', 'long:first'], 'a receive without a timeout keeps waiting');
  assert.equal(engine.engine.timers.size, before, 'only an untimed receive waits: no timeout timer is armed');
  await producer.send(new TextMessage('second'));
  await untimed;
  assert.deepEqual(ended, ['short:null', 'long:first', 'untimed:second']);
});

test('clock - receive(timeout) answered by a message already there arms no timer (SES-5)', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const timers = engine.engine.timers;
  let armed = 0;
  const after = timers.after.bind(timers);
  timers.after = (delayMs, callback) => {
    armed++;
    return after(delayMs, callback);
  };
  const connection = engine.connect();
  const session = connection.createSession();
  const queue = session.createQueue('receive-ready');
  const producer = session.createProducer(queue);
  const consumer = session.createConsumer(queue);
  for (let i = 0; i < 100; i++) await producer.send(new TextMessage(`m${i}`));
  for (let i = 0; i < 100; i++) {
    const message = (await consumer.receive(30_000)) as TextMessage | null;
    assert.equal(message?.getText(), `m${i}`);
  }
  assert.equal(armed, 0, 'a receive that need not wait reads no clock and arms no timer');
  const waiting = consumer.receive(30_000);
  assert.equal(armed, 1, 'a receive that waits arms its timeout');
  await producer.send(new TextMessage('late'));
  assert.equal(((await waiting) as TextMessage | null)?.getText(), 'late');
  const timedOut = consumer.receive(1_000);
  await engine.clock.advance(1_000);
  assert.equal(await timedOut, null, 'the timeout still ends a receive that waited');
});
