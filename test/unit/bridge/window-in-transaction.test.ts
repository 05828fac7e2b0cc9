/**
 * Exactly-once into an engine destination (BRG-2): the forwarded message and its id in the
 * duplicate window are one store commit. The crash is simulated at the store boundary: a real
 * file store on disk behind a gate that, from a chosen commit on, stops passing writes through
 * (as a process killed right after that commit would), then the store is opened again from disk.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Bridge, InternalSink, StoreDuplicateWindow } from '../../../src/bridge/index.js';
import { renderMetrics } from '../../../src/admin/metrics.js';
import {
  ConnectionFactory,
  JmsEngine,
  type Message,
  MemoryStore,
  Session,
  TextMessage,
} from '../../../src/index.js';
import type {
  ForwardedId,
  ForwardedIdStore,
  MessageStore,
  RecoveredState,
  StoreOperation,
} from '../../../src/jms/store-port.js';
import { NotConnectedError } from '../../../src/spi/index.js';
import { FileStore } from '../../../src/store/file-store.js';
import { type TempDirBody, withTempDir } from '../../helpers/temp-dir.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';
import { FakeSink, FakeSource, RecordingLogger, message } from './fakes.js';
import { teardown } from '../../helpers/teardown.js';

/** A file store whose writes stop reaching the disk once `crashAfter` matched a commit that landed. */
class CrashingStore implements MessageStore, ForwardedIdStore {
  crashed = false;
  crashAfter: (operations: readonly StoreOperation[]) => boolean = () => false;

  constructor(readonly inner: FileStore) {}

  recover(): Promise<RecoveredState> {
    return this.inner.recover();
  }

  async commit(operations: readonly StoreOperation[]): Promise<void> {
    if (this.crashed) throw new Error('the process is gone');
    await this.inner.commit(operations);
    if (this.crashAfter(operations)) this.crashed = true;
  }

  readForwardedIds(window: string): ForwardedId[] {
    return this.inner.readForwardedIds(window);
  }

  recordForwardedIds(window: string, ids: readonly ForwardedId[], forgetThroughSeq?: number): Promise<void> {
    if (this.crashed) return Promise.reject(new Error('the process is gone'));
    return this.inner.recordForwardedIds(window, ids, forgetThroughSeq);
  }

  close(): Promise<void> {
    return Promise.resolve(); // the test closes the file store itself
  }
}

/** A run of the "process": engine and exactly-once bridge from a fake source into queue://out. */
async function startRun(dir: string, clock: FakeClock, logger?: RecordingLogger) {
  const file = await FileStore.open({ path: dir });
  const store = new CrashingStore(file);
  const engine = await JmsEngine.open({ store, clock });
  await engine.createQueue('out');
  const source = new FakeSource(clock);
  const bridge = new Bridge(
    {
      name: 'into-out',
      source,
      sink: new InternalSink({ engine, destination: 'queue://out' }),
      qos: 'exactly-once',
    },
    {
      clock,
      duplicateWindow: new StoreDuplicateWindow({ store, name: 'into-out' }),
      ...(logger ? { logger } : {}),
    },
  );
  await bridge.start();
  return {
    store,
    engine,
    source,
    bridge,
    async end() {
      await bridge.stop().catch(() => undefined);
      await engine.close().catch(() => undefined);
      await file.close();
    },
  };
}

/** Waits (on I/O, not on time) until `done()` holds. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await settle();
  assert.ok(done(), `timed out waiting until ${what}`);
}

async function texts(engine: JmsEngine, queue: string): Promise<string[]> {
  const connection = new ConnectionFactory(engine).createConnection();
  connection.start();
  const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
  const consumer = session.createConsumer(session.createQueue(queue));
  const found: string[] = [];
  for (let m: Message | null; (m = await consumer.receiveNoWait()) !== null;) found.push(textOf(m));
  await connection.close();
  return found;
}

const textOf = (m: Message): string => (m as TextMessage).getText() ?? '';

function withDir(fn: TempDirBody): Promise<void> {
  return withTempDir('window-in-transaction-', fn);
}

const targetWrite = (operations: readonly StoreOperation[]) =>
  operations.some((operation) => operation.op === 'addRef' && operation.backlog === 'queue://out');

test('bridge - exactly-once into an engine queue: a crash right after the target stored the message does not send it twice (BRG-2)', async () => {
  await withDir(async (dir, cleanup) => {
    const clock = new FakeClock();
    const first = await startRun(dir, clock);
    cleanup(() => first.end());
    // The process dies right after the commit that put the message into the target queue.
    first.store.crashAfter = targetWrite;
    first.source.push(message('m1'));
    await until(() => first.store.crashed, 'the target took m1');
    await first.end();

    // The next run: the source (a broker) delivers m1 again, since it was never acknowledged.
    const second = await startRun(dir, clock);
    cleanup(() => second.end());
    second.source.push(message('m1'));
    second.source.push(message('m2'));
    await until(() => second.source.acked.length === 2, 'both are acknowledged');
    assert.deepEqual(await texts(second.engine, 'out'), ['m1', 'm2'], 'm1 reached the target once');
    assert.equal(second.bridge.counters.duplicates, 1, 'the redelivered m1 was recognised');
    assert.equal(second.bridge.counters.possibleDuplicates, 0);
    await second.end();
  });
});

/** A message as a publisher that sets no message id sends it: nothing for the window to compare. */
const withoutId = (text: string): TextMessage => new TextMessage(text);

test('bridge - exactly-once: a message without a JMSMessageID delivered again after a crash is counted as a possible duplicate and warned about (BRG-2)', async () => {
  await withDir(async (dir, cleanup) => {
    const clock = new FakeClock();
    const first = await startRun(dir, clock);
    cleanup(() => first.end());
    first.store.crashAfter = targetWrite;
    first.source.push(withoutId('m1'));
    await until(() => first.store.crashed, 'the target took m1');
    await first.end();

    // The broker delivers m1 again, marked redelivered, still without an id.
    const logger = new RecordingLogger();
    const second = await startRun(dir, clock, logger);
    cleanup(() => second.end());
    second.source.push(withoutId('m1'), undefined, 1);
    second.source.push(withoutId('m2'));
    await until(() => second.source.acked.length === 2, 'both are acknowledged');
    assert.deepEqual(await texts(second.engine, 'out'), ['m1', 'm1', 'm2'], 'the window cannot tell');
    assert.equal(second.bridge.counters.duplicates, 0);
    assert.equal(second.bridge.counters.possibleDuplicates, 1, 'the resend of m1 is counted');
    const warnings = logger.entries.filter(
      (e) => e.level === 'warn' && e.message.includes('without a JMSMessageID'),
    );
    assert.equal(warnings.length, 1, 'said once, not per message');
    assert.deepEqual(warnings[0]!.fields, { bridge: 'into-out' });
    await second.end();
  });
});

test('bridge - exactly-once into an engine queue: a target write that fails leaves the id out of the window (BRG-2)', async () => {
  await withDir(async (dir, cleanup) => {
    const clock = new FakeClock();
    const run = await startRun(dir, clock);
    cleanup(() => run.end());
    // Fails the commit that would hold m1 and its id, once: the bridge retries the send.
    let failed = false;
    const inner = run.store.inner;
    const commit = inner.commit.bind(inner);
    inner.commit = (operations) => {
      if (!failed && targetWrite(operations)) {
        failed = true;
        return Promise.reject(new Error('disk full'));
      }
      return commit(operations);
    };
    run.source.push(message('m1'));
    await until(() => failed, 'the first write failed');
    // The retry delay runs on the fake clock.
    for (let i = 0; i < 20 && run.source.acked.length === 0; i++) await clock.advance(1_000);
    assert.deepEqual(run.source.acked, ['m1']);
    assert.equal(failed, true);
    assert.equal(run.bridge.counters.duplicates, 0, 'the failed attempt did not put m1 in the window');
    assert.deepEqual(await texts(run.engine, 'out'), ['m1']);
    assert.deepEqual(
      inner.readForwardedIds('into-out').map((stored) => stored.id),
      ['ID:m1'],
    );
    await run.end();
  });
});

test('bridge - exactly-once rebuilds its window from a target that lists what it committed (BRG-2)', async (context) => {
  const cleanup = teardown(context);
  const clock = new FakeClock();
  const source = new FakeSource(clock);
  const queried: { maxEntries: number; notBefore?: number }[] = [];
  const sink = Object.assign(new FakeSink(clock), {
    forwardedIds(query: { maxEntries: number; notBefore?: number }) {
      queried.push(query);
      return Promise.resolve([{ id: 'ID:m1', at: clock.now() }]);
    },
  });
  const bridge = new Bridge({ name: 'rebuilt', source, sink, qos: 'exactly-once' }, { clock });
  cleanup(() => bridge.stop());
  await bridge.start();
  source.push(message('m1', { id: 'ID:m1' }));
  source.push(message('m2'));
  await until(() => source.acked.length === 2, 'both are acknowledged');
  assert.deepEqual(sink.texts, ['m2'], 'm1 is at the target already: not sent again');
  assert.equal(bridge.counters.duplicates, 1);
  assert.deepEqual(queried, [{ maxEntries: 100_000 }], 'read as far back as the window keeps');
});

test('bridge - a message sent again after a lost connection or a restart counts as a possible duplicate where the target cannot tell', async (context) => {
  const cleanup = teardown(context);
  const clock = new FakeClock();
  const source = new FakeSource(clock);
  const sink = new FakeSink(clock);
  const bridge = new Bridge(
    {
      name: 'plain',
      source,
      sink,
      stopTimeoutMs: 100,
      reconnect: { minMs: 10, increaseFactor: 1, maxMs: 10 },
    },
    { clock },
  );
  cleanup(() => bridge.stop());
  await bridge.start();
  // m1: its send ends with the connection lost, so it may have arrived; it is sent again.
  sink.failNext('m1', 1, new NotConnectedError('connection lost'));
  source.push(message('m1'));
  for (let i = 0; i < 10 && source.acked.length < 1; i++) await clock.advance(10);
  assert.deepEqual(source.acked, ['m1']);
  assert.equal(bridge.counters.possibleDuplicates, 1, 'm1 was sent again after a lost connection');

  // m2: the bridge stops while its send hangs; the source delivers it again after the restart.
  const normal = sink.behaviour;
  sink.hangAll();
  source.push(message('m2'));
  await settle();
  assert.equal(sink.hanging, 1);
  const stopped = bridge.stop();
  await clock.advance(100);
  await stopped;
  sink.behaviour = normal;
  await bridge.start();
  for (let i = 0; i < 10 && source.acked.length < 2; i++) await clock.advance(10);
  assert.deepEqual(source.acked, ['m1', 'm2']);
  assert.equal(bridge.counters.possibleDuplicates, 2, 'm2 was delivered again by the source');

  source.push(message('m3'));
  for (let i = 0; i < 10 && source.acked.length < 3; i++) await clock.advance(10);
  assert.equal(bridge.counters.possibleDuplicates, 2, 'a first delivery is no possible duplicate');

  const { lastError: _lastError, ...counters } = bridge.counters;
  const engine = new JmsEngine({ store: new MemoryStore(), clock });
  cleanup(() => engine.close());
  const metrics = await renderMetrics(engine, [{ name: bridge.name, status: bridge.status, counters }]);
  assert.match(metrics, /# TYPE jms_gateway_bridge_possible_duplicates_total counter/);
  assert.match(metrics, /^jms_gateway_bridge_possible_duplicates_total\{bridge="plain"\} 2$/m);
});
