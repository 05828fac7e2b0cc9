import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  BackOffError,
  BehindFailureError,
  MessageTooLargeError,
  NotConnectedError,
  OrderedBatches,
  TextMessage,
  WaitingQueue,
  writeBatchInTurn,
  type BatchLane,
  type SendResult,
} from '../../../src/spi/index.js';

const ok: SendResult = { ok: true };
const fail = (error: Error): SendResult => ({ ok: false, error });
const poison = (): SendResult => fail(new MessageTooLargeError('m', 10, 5, 'test'));
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `ok`, `poison`, `behind` or the error's class name, per message. */
function kinds(results: readonly SendResult[]): string[] {
  return results.map((result) =>
    result.ok
      ? 'ok'
      : result.error instanceof BehindFailureError
        ? 'behind'
        : result.error instanceof MessageTooLargeError
          ? 'poison'
          : result.error.constructor.name,
  );
}

test('ordered batches - a batch without failures comes back as it is', async () => {
  const batches = new OrderedBatches();
  assert.deepEqual(kinds(await batches.begin().finish([ok, ok, ok])), ['ok', 'ok', 'ok']);
});

test('ordered batches - a poison message fails alone', async () => {
  const batches = new OrderedBatches();
  assert.deepEqual(kinds(await batches.begin().finish([ok, poison(), ok])), ['ok', 'poison', 'ok']);
});

test('ordered batches - after a retryable failure every later message of the batch fails, keeping its own error', async () => {
  const batches = new OrderedBatches();
  const results = await batches
    .begin()
    .finish([ok, fail(new BackOffError('nack')), ok, poison(), fail(new NotConnectedError('x'))]);
  assert.deepEqual(kinds(results), ['ok', 'BackOffError', 'behind', 'poison', 'NotConnectedError']);
  const behind = results[2]!;
  assert.ok(!behind.ok && behind.error instanceof BackOffError, 'retried like a back-off, not counted');
  assert.match(behind.ok ? '' : behind.error.message, /before it on the same target failed \(nack\)/);
});

test('ordered batches - batches in flight behind a failed one fail too, and come back in the order they began', async () => {
  const batches = new OrderedBatches();
  const first = batches.begin();
  const second = batches.begin();
  const third = batches.begin();
  const order: string[] = [];
  const secondDone = second.finish([ok, ok]).then((results) => (order.push('second'), results));
  const thirdDone = third.finish([ok]).then((results) => (order.push('third'), results));
  await nextTurn();
  assert.equal(order.length, 0, 'waits for the first batch');
  const firstDone = first
    .finish([ok, fail(new NotConnectedError('lost'))])
    .then((results) => (order.push('first'), results));
  assert.deepEqual(kinds(await firstDone), ['ok', 'NotConnectedError']);
  assert.deepEqual(kinds(await secondDone), ['behind', 'behind']);
  assert.deepEqual(kinds(await thirdDone), ['behind']);
  assert.deepEqual(order, ['first', 'second', 'third']);
});

test('ordered batches - a batch begun in the turn the failure was delivered is tainted, one begun later is not', async () => {
  const batches = new OrderedBatches();
  const failed = await batches.begin().finish([fail(new BackOffError('nack'))]);
  assert.deepEqual(kinds(failed), ['BackOffError']);
  // Handed over before the runtime's other continuations could have read the result.
  assert.deepEqual(kinds(await batches.begin().finish([ok])), ['behind']);
  await nextTurn();
  assert.deepEqual(kinds(await batches.begin().finish([ok, ok])), ['ok', 'ok']);
});

test('ordered batches - streams are independent: a failure on one does not fail another', async () => {
  const batches = new OrderedBatches();
  const streams = ['a', 'b', 'a', 'b'];
  const results = await batches
    .begin()
    .finish([fail(new BackOffError('a down')), ok, ok, ok], (index) => streams[index]!);
  assert.deepEqual(kinds(results), ['BackOffError', 'ok', 'behind', 'ok']);
});

test('ordered batches - finishing a turn twice is refused', async () => {
  const batches = new OrderedBatches();
  const turn = batches.begin();
  await turn.finish([ok]);
  await assert.rejects(turn.finish([ok]), /finishes once/);
});

test('write batch in turn - writes batches one after the other without waiting for answers, then settles them in order', async () => {
  const lane: BatchLane = { ordered: new OrderedBatches(), writing: Promise.resolve() };
  const writes: string[] = [];
  let room = (): void => {};
  const roomMade = new Promise<void>((resolve) => (room = resolve));
  let answer = (_result: SendResult): void => {};
  const answered = new Promise<SendResult>((resolve) => (answer = resolve));
  const first = writeBatchInTurn(lane, [new TextMessage('a'), new TextMessage('b')], async (message) => {
    const text = (message as TextMessage).getText()!;
    if (text === 'b') await roomMade;
    writes.push(text);
    return { result: text === 'a' ? answered : ok };
  });
  const second = writeBatchInTurn(lane, [new TextMessage('c')], (message) => {
    writes.push((message as TextMessage).getText()!);
    return Promise.resolve({ result: ok });
  });
  await nextTurn();
  assert.deepEqual(writes, ['a'], 'the next message waits for its room, the next batch for this one');
  room();
  await nextTurn();
  assert.deepEqual(writes, ['a', 'b', 'c'], "written while the first message's answer is still to come");
  answer(fail(new BackOffError('nack')));
  assert.deepEqual(kinds(await first), ['BackOffError', 'behind']);
  assert.deepEqual(kinds(await second), ['behind']);
});

test('waiting queue - takeUpTo waits for the first item, then takes what is waiting without waiting for more', async () => {
  const queue = new WaitingQueue<number>();
  const signal = AbortSignal.timeout(5_000);
  const waiting = queue.takeUpTo(10, signal);
  queue.push(1);
  assert.deepEqual(await waiting, [1]);
  for (const item of [2, 3, 4, 5]) queue.push(item);
  assert.deepEqual(await queue.takeUpTo(3, signal), [2, 3, 4]);
  assert.deepEqual(await queue.takeUpTo(3, signal), [5]);
  queue.fail(new NotConnectedError('gone'));
  await assert.rejects(queue.takeUpTo(3, signal), NotConnectedError);
});
