import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Progress } from '../../../src/cli/progress.js';
import { FakeClock } from '../../helpers/fake-clock.js';

function terminal(tty: boolean) {
  const clock = new FakeClock();
  let written = '';
  const io = { stderr: (text: string) => (written += text), stderrIsTty: tty, now: () => clock.now() };
  return { clock, io, written: () => written };
}

test('cli progress - off a terminal, a plain line now and then and the final state, with the rate', async () => {
  const { clock, io, written } = terminal(false);
  const progress = new Progress(io, 'moved', 2000);
  await clock.advance(1_000);
  progress.update(500);
  assert.equal(written(), '', 'not yet: one line per interval');
  await clock.advance(4_000);
  progress.update(1000);
  assert.equal(written(), 'moved 1000/2000 (50%) 200/s\n');
  await clock.advance(1_000);
  progress.update(1500);
  assert.equal(written(), 'moved 1000/2000 (50%) 200/s\n');
  await clock.advance(4_000);
  progress.finish(2000);
  assert.equal(written(), 'moved 1000/2000 (50%) 200/s\nmoved 2000/2000 (100%) 200/s\n');
});

test('cli progress - on a terminal, one line redrawn in place at most every 100 ms, ended by a newline', async () => {
  const { clock, io, written } = terminal(true);
  const progress = new Progress(io, 'sent', 3);
  await clock.advance(100);
  progress.update(1);
  progress.update(2);
  await clock.advance(100);
  progress.update(2);
  progress.finish(3);
  assert.equal(
    written(),
    '\rsent 1/3 (33%) 10/s\u001b[K\rsent 2/3 (66%) 10/s\u001b[K\rsent 3/3 (100%) 15/s\u001b[K\n',
  );
});

test('cli progress - nothing done prints nothing; a count past the total raises the total', () => {
  const { io, written } = terminal(false);
  new Progress(io, 'moved', 5).finish(0);
  assert.equal(written(), '');
  new Progress(io, 'moved', 2).finish(3);
  assert.equal(written(), 'moved 3/3 (100%)\n');
});
