/**
 * One consumer of engine.bench.ts's receive passes, alone in its process so its heap and garbage
 * collections are its own: a timer queue that keeps cancelled timers slows the collections of
 * everything in its process, so two kinds of receive compared in one process degrade together.
 *
 * argv[2] is the receive timeout (0: none), argv[3] `ready` (a batch is sent, then received, each
 * receive finding its message there) or `waiting` (each receive is called first and answered by
 * the send after it, so a timeout is armed and cancelled per message). Each IPC message `n` asks
 * for n sends and receives and is answered with the milliseconds they took; `close` ends it.
 * Started by engine.bench.ts; not a benchmark of its own.
 */
import { performance } from 'node:perf_hooks';
import {
  ConnectionFactory,
  DeliveryMode,
  JmsEngine,
  MemoryStore,
  type Message,
  TextMessage,
} from '../src/index.js';

const BATCH = 1_000;
const timeoutMs = Number(process.argv[2]);
const waiting = process.argv[3] === 'waiting';

const engine = new JmsEngine({ store: new MemoryStore() });
const connection = new ConnectionFactory(engine).createConnection();
connection.start();
const session = connection.createSession();
const queue = session.createQueue('bench-receive');
const producer = session.createProducer(queue);
producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
const consumer = session.createConsumer(queue);

function lost(message: Message | null): void {
  if (message === null) throw new Error('message lost');
}

async function ready(count: number): Promise<void> {
  for (let sent = 0; sent < count; sent += BATCH) {
    for (let i = 0; i < BATCH; i++) await producer.send(new TextMessage('payload'));
    for (let i = 0; i < BATCH; i++) lost(await consumer.receive(timeoutMs));
  }
}

async function waited(count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const next = consumer.receive(timeoutMs);
    await producer.send(new TextMessage('payload'));
    lost(await next);
  }
}

process.on('message', (request: number | 'close') => {
  void (async () => {
    if (request === 'close') {
      await connection.close();
      await engine.close();
      process.disconnect();
      return;
    }
    const started = performance.now();
    await (waiting ? waited(request) : ready(request));
    process.send!(performance.now() - started);
  })();
});
process.send!('ready');
