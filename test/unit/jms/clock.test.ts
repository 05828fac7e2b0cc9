import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type Clock, TimerQueue, systemTimerDelay } from '../../../src/jms/clock.js';

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
