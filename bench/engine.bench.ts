/**
 * In-memory engine throughput: non-persistent queue send→receive and topic fan-out through the
 * JMS API, next to a bare array FIFO driven the same way (the same `await` per send and per
 * receive, so the ratio is the engine's own cost, not promise plumbing).
 * Targets (issue "Foundation"): ≥ 300,000 messages/s queue send+receive and ≥ 25% of the FIFO.
 */
import {
  ConnectionFactory,
  DeliveryMode,
  JmsEngine,
  MemoryStore,
  type Message,
  TextMessage,
} from '../src/index.js';
import { best, printJson, printTable, target } from './lib.js';

const MESSAGES = 200_000;
const BATCH = 1_000;

/** The limit: an array FIFO with async send and receive. */
class BareFifo<T> {
  #items: T[] = [];
  #head = 0;
  send(item: T): Promise<void> {
    this.#items.push(item);
    return Promise.resolve();
  }
  receive(): Promise<T | null> {
    if (this.#head === this.#items.length) return Promise.resolve(null);
    const item = this.#items[this.#head++]!;
    if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return Promise.resolve(item);
  }
}

async function fifoQueue(): Promise<void> {
  const fifo = new BareFifo<Message>();
  for (let sent = 0; sent < MESSAGES; sent += BATCH) {
    for (let i = 0; i < BATCH; i++) await fifo.send(new TextMessage('payload'));
    for (let i = 0; i < BATCH; i++) await fifo.receive();
  }
}

async function engineQueue(): Promise<void> {
  const engine = new JmsEngine({ store: new MemoryStore() });
  const connection = new ConnectionFactory(engine).createConnection();
  connection.start();
  const session = connection.createSession();
  const queue = session.createQueue('bench');
  const producer = session.createProducer(queue);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  const consumer = session.createConsumer(queue);
  for (let sent = 0; sent < MESSAGES; sent += BATCH) {
    for (let i = 0; i < BATCH; i++) await producer.send(new TextMessage('payload'));
    for (let i = 0; i < BATCH; i++) {
      if ((await consumer.receiveNoWait()) === null) throw new Error('message lost');
    }
  }
  await connection.close();
  await engine.close();
}

async function fifoTopic(subscribers: number, messages: number): Promise<void> {
  const fifos = Array.from({ length: subscribers }, () => new BareFifo<Message>());
  for (let sent = 0; sent < messages; sent += BATCH) {
    for (let i = 0; i < BATCH; i++) {
      const message = new TextMessage('payload');
      for (const fifo of fifos) await fifo.send(message);
    }
    for (const fifo of fifos) for (let i = 0; i < BATCH; i++) await fifo.receive();
  }
}

async function engineTopic(subscribers: number, messages: number): Promise<void> {
  const engine = new JmsEngine({ store: new MemoryStore() });
  const connection = new ConnectionFactory(engine).createConnection();
  connection.start();
  const session = connection.createSession();
  const topic = session.createTopic('bench');
  const producer = session.createProducer(topic);
  producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
  const consumers = Array.from({ length: subscribers }, () => session.createConsumer(topic));
  for (let sent = 0; sent < messages; sent += BATCH) {
    for (let i = 0; i < BATCH; i++) await producer.send(new TextMessage('payload'));
    for (const consumer of consumers) {
      for (let i = 0; i < BATCH; i++)
        if ((await consumer.receiveNoWait()) === null) throw new Error('message lost');
    }
  }
  await connection.close();
  await engine.close();
}

const queueEngine = await best('queue: JMS API send+receive', MESSAGES, engineQueue);
const queueFifo = await best('queue: bare async FIFO', MESSAGES, fifoQueue);
const rows: Record<string, unknown>[] = [
  { ...queueEngine, 'vs FIFO': `${((queueEngine.rate / queueFifo.rate) * 100).toFixed(1)}%` },
  queueFifo,
];
const fanOut: Record<string, number> = {};
for (const subscribers of [1, 10, 100]) {
  const messages = Math.max(BATCH, Math.floor(MESSAGES / subscribers / BATCH) * BATCH);
  const deliveries = messages * subscribers;
  const e = await best(`topic x${subscribers}: JMS API (deliveries)`, deliveries, () =>
    engineTopic(subscribers, messages),
  );
  const f = await best(`topic x${subscribers}: bare async FIFO`, deliveries, () =>
    fifoTopic(subscribers, messages),
  );
  rows.push({ ...e, 'vs FIFO': `${((e.rate / f.rate) * 100).toFixed(1)}%` }, f);
  fanOut[`topic${subscribers}`] = e.rate;
  fanOut[`topic${subscribers}Fifo`] = f.rate;
}
printTable('In-memory engine, non-persistent, messages/s', rows);
const ratio = queueEngine.rate / queueFifo.rate;
printJson('engine', {
  queueRate: queueEngine.rate,
  queueFifoRate: queueFifo.rate,
  queueRatio: ratio,
  ...fanOut,
});
target(
  `queue send+receive ≥ 300,000 msg/s (got ${queueEngine.rate.toLocaleString('en-US')})`,
  queueEngine.rate >= 300_000,
);
target(`queue send+receive ≥ 25% of the bare FIFO (got ${(ratio * 100).toFixed(1)}%)`, ratio >= 0.25);
