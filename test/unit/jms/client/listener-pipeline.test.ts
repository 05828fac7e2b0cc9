/**
 * The listener pipeline on its own (SES-5, SES-6): deliveries run one at a time in the order they
 * were queued, each consumer's window counts what it was handed until its run settles, and what
 * is taken back (recover, rollback, close) leaves the window.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Backlog } from '../../../../src/jms/destination/backlog.js';
import type { Entry } from '../../../../src/jms/destination/entry.js';
import type { ListenerCall } from '../../../../src/jms/client/listener-call.js';
import { type ListenerConsumer, ListenerPipeline } from '../../../../src/jms/client/listener-pipeline.js';
import { settle } from '../../../helpers/fake-clock.js';

/** A consumer whose runs the test finishes itself, one by one. */
class FakeConsumer implements ListenerConsumer {
  closed = false;
  dispatches = 0;
  readonly runs: { entry: Entry; finish: () => void }[] = [];

  constructor(readonly name: string) {}

  runListener(entry: Entry, _backlog: Backlog, _call: ListenerCall): Promise<void> {
    return new Promise<void>((resolve) => this.runs.push({ entry, finish: resolve }));
  }

  backlogDispatch(): void {
    this.dispatches++;
  }
}

const entry = (name: string) => ({ name }) as unknown as Entry;
const backlog = {} as Backlog;
const names = (consumer: FakeConsumer) =>
  consumer.runs.map((run) => (run.entry as unknown as { name: string }).name);

test('listener pipeline - runs one delivery at a time, in the order queued', async () => {
  const pipeline = new ListenerPipeline<FakeConsumer>({ mayRun: () => true });
  const a = new FakeConsumer('a');
  const b = new FakeConsumer('b');
  pipeline.enqueue(a, entry('1'), backlog);
  pipeline.enqueue(b, entry('2'), backlog);
  pipeline.enqueue(a, entry('3'), backlog);
  assert.deepEqual([names(a), names(b)], [['1'], []]);
  assert.equal(pipeline.listenerRunning, true);
  a.runs[0]!.finish();
  await settle();
  assert.deepEqual([names(a), names(b)], [['1'], ['2']]);
  b.runs[0]!.finish();
  await settle();
  assert.deepEqual(names(a), ['1', '3']);
  a.runs[1]!.finish();
  await pipeline.idle();
  assert.equal(pipeline.listenerRunning, false);
});

test('listener pipeline - a window counts queued and running entries until the run settles', async () => {
  const pipeline = new ListenerPipeline<FakeConsumer>({ mayRun: () => true });
  const a = new FakeConsumer('a');
  pipeline.enqueue(a, entry('1'), backlog);
  pipeline.enqueue(a, entry('2'), backlog);
  assert.equal(pipeline.hasRoom(a, 2), false);
  assert.equal(pipeline.hasRoom(a, 3), true);
  a.runs[0]!.finish();
  await settle();
  assert.equal(pipeline.hasRoom(a, 2), true, 'the finished run left the window');
  assert.ok(a.dispatches >= 1, 'the consumer was asked to dispatch into the room');
});

test('listener pipeline - nothing starts while it may not run; start() resumes', async () => {
  let mayRun = false;
  const pipeline = new ListenerPipeline<FakeConsumer>({ mayRun: () => mayRun });
  const a = new FakeConsumer('a');
  pipeline.enqueue(a, entry('1'), backlog);
  assert.deepEqual(names(a), []);
  mayRun = true;
  pipeline.start();
  assert.deepEqual(names(a), ['1']);
  a.runs[0]!.finish();
  await pipeline.idle();
});

test('listener pipeline - what is taken back leaves the window, oldest first', () => {
  const pipeline = new ListenerPipeline<FakeConsumer>({ mayRun: () => false });
  const a = new FakeConsumer('a');
  const b = new FakeConsumer('b');
  pipeline.enqueue(a, entry('1'), backlog);
  pipeline.enqueue(b, entry('2'), backlog);
  pipeline.enqueue(a, entry('3'), backlog);
  const ofA = pipeline.takeFor(a).map((queued) => (queued.entry as unknown as { name: string }).name);
  assert.deepEqual(ofA, ['1', '3']);
  assert.equal(pipeline.hasRoom(a, 1), true);
  assert.equal(pipeline.hasRoom(b, 1), false);
  const rest = pipeline.takeAll().map((queued) => queued.consumer.name);
  assert.deepEqual(rest, ['b']);
  assert.equal(pipeline.hasRoom(b, 1), true);
});

test('listener pipeline - a closed consumer’s deliveries wait while the others run', async () => {
  let mayRun = false;
  const pipeline = new ListenerPipeline<FakeConsumer>({ mayRun: () => mayRun });
  const a = new FakeConsumer('a');
  const b = new FakeConsumer('b');
  pipeline.enqueue(a, entry('1'), backlog);
  pipeline.enqueue(b, entry('2'), backlog);
  a.closed = true;
  mayRun = true;
  pipeline.start();
  assert.deepEqual([names(a), names(b)], [[], ['2']]);
  b.runs[0]!.finish();
  await pipeline.idle();
  assert.deepEqual(pipeline.takeFor(a).length, 1, 'its delivery stayed queued for its close to take back');
});
