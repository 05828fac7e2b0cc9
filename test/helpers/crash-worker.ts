/**
 * The process the crash test kills (test/e2e/crash-recovery.test.ts). It opens an engine on a
 * file store in the given directory and runs steady persistent load: producers to a queue and a
 * topic, two plain AUTO consumers and a transacted consumer on the queue, and a durable
 * subscriber on the topic. It prints READY on stdout once the engine is open and the durable
 * subscription is stored, then reports to its fact file, one line per fact, never before the fact:
 *
 *   SENT <q|t> <key>               a persistent send to the queue / topic resolved
 *   GOT <consumer> <key>           the application received a message (written before it is acknowledged)
 *   ACK <consumer> <key>           its acknowledgement / commit resolved
 *   DRAINED <queue> <topic>        drain mode: consumers found nothing more (the numbers are what is still held)
 *
 * Facts go to a file, not to stdout: a write to a pipe is asynchronous in Node on POSIX (it is
 * queued when the reader lags behind), so a GOT line could still sit in this process's memory when
 * the acknowledgement after it is stored and the kill comes. `writeSync` to a file hands the line
 * to the kernel before it returns, and the kernel keeps it through a SIGKILL.
 *
 * Usage: node --import tsx test/helpers/crash-worker.ts <store dir | postgres:schema> <load|drain> <round> <fact file>
 */
import { openSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConnectionFactory,
  JmsEngine,
  type Message,
  type MessageConsumer,
  Session,
  TextMessage,
} from '../../src/index.js';
import { FileStore } from '../../src/store/file-store.js';
import { PostgresStore } from '../../src/store/postgres-store.js';

const [dir, mode, roundText, factFile] = process.argv.slice(2);
if (!dir || (mode !== 'load' && mode !== 'drain') || !roundText || !factFile) {
  process.stderr.write('usage: crash-worker <store dir> <load|drain> <round> <fact file>\n');
  process.exit(2);
}
const round = Number(roundText);

const QUEUE_PRODUCERS = 3;
const AUTO_CONSUMERS = 2;
/** The queue backlog at which producers wait for consumers, so the drain stays short. */
const MAX_BACKLOG = 1_000;
const PADDING = 'p'.repeat(200);

const facts = openSync(factFile, 'a');

/**
 * Records a fact before going on: a GOT line is with the kernel before the acknowledgement starts,
 * and a line a kill cuts short was never claimed.
 */
function say(line: string): void {
  writeSync(facts, `${line}\n`);
}

process.on('unhandledRejection', (error) => {
  process.stderr.write(`worker failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

// The engine's timers are unref'd; this keeps the process alive while consumers wait on them.
const keepAlive = setInterval(() => undefined, 60_000);

// `postgres:<schema>`: the PostgreSQL store at PG_URL, in that schema; anything else is the file store's directory.
const store = dir.startsWith('postgres:')
  ? await PostgresStore.open({
      url: process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
      schema: dir.slice('postgres:'.length),
    })
  : await FileStore.open({ path: dir, ...largeBodies() });
const engine = await JmsEngine.open({ store });
const queue = await engine.createQueue('work');
const topic = await engine.createTopic('events');
const factory = new ConnectionFactory(engine);
const connection = factory.createConnection();
connection.setClientID('crash-test');
let running = true;

const durableSession = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
const durable = durableSession.createDurableSubscriber(topic, 'durable-1');
// The subscription must be stored before anything is published to the topic.
await engine.flush();
connection.start();

/** `CRASH_LARGE_BODY_BYTES`: the file store's largeBodyBytes (1 puts every body in a file of its own). */
function largeBodies(): { largeBodyBytes?: number } {
  const bytes = process.env.CRASH_LARGE_BODY_BYTES;
  return bytes === undefined ? {} : { largeBodyBytes: Number(bytes) };
}

/** The message's key; a body that is not the one sent with it is recorded as BAD. */
function keyOf(message: Message): string {
  const key = message.getStringProperty('key')!;
  if ((message as TextMessage).getText() !== `${key} ${PADDING}`) say(`BAD ${key}`);
  return key;
}

/** Messages a destination still holds: available, or delivered and not yet acknowledged. */
function heldBy(destination: typeof queue | typeof topic): number {
  const stats = engine.destinationStatistics(destination);
  return stats.messagesCurrent + stats.messagesPending;
}
const available = () => engine.destinationStatistics(queue).messagesCurrent;

async function produce(kind: 'q' | 't', producerIndex: number): Promise<void> {
  const session = connection.createSession();
  const producer = session.createProducer(kind === 'q' ? queue : topic);
  for (let n = 0; running; n++) {
    while (running && kind === 'q' && available() > MAX_BACKLOG) await sleep(5);
    if (!running) break;
    const key = `r${round}${kind}${producerIndex}n${n}`;
    const message = new TextMessage(`${key} ${PADDING}`);
    message.setStringProperty('key', key);
    await producer.send(message);
    say(`SENT ${kind} ${key}`);
    if (kind === 't' && n % 4 === 3) await sleep(1);
  }
}

/**
 * A plain AUTO consumer with a listener. The message is acknowledged when the listener returns,
 * and its session calls the listener again only once that acknowledgement is stored (SES-2,
 * SES-5), so the previous message's ACK line is written when the next one arrives. Returns what
 * reports the last one after the connection closed.
 */
function consumeAuto(name: string): () => void {
  let previous: string | undefined;
  connection
    .createSession()
    .createConsumer(queue)
    .setMessageListener((message) => {
      if (previous !== undefined) say(`ACK ${name} ${previous}`);
      previous = keyOf(message);
      say(`GOT ${name} ${previous}`);
    });
  return () => {
    if (previous !== undefined) say(`ACK ${name} ${previous}`);
    previous = undefined;
  };
}

async function consumeTransacted(
  session: Session,
  consumer: MessageConsumer,
  idle: () => boolean,
): Promise<void> {
  for (;;) {
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const message = await consumer.receive(100);
      if (message === null) break;
      const key = keyOf(message);
      keys.push(key);
      say(`GOT tx ${key}`);
    }
    if (keys.length > 0) {
      await session.commit();
      for (const key of keys) say(`ACK tx ${key}`);
    } else if (idle()) {
      return;
    }
  }
}

async function consumeDurable(idle: () => boolean): Promise<void> {
  for (;;) {
    const message = await durable.receive(100);
    if (message === null) {
      if (idle()) return;
      continue;
    }
    const key = keyOf(message);
    say(`GOT dur ${key}`);
    await message.acknowledge();
    say(`ACK dur ${key}`);
  }
}

// In load mode consumers never stop by themselves; in drain mode they stop once nothing has been
// held for a while (a message redelivered by a rollback would show up in between).
let quietSince = 0;
const drainIdle = (): boolean => {
  if (mode === 'load') return false;
  if (heldBy(queue) > 0 || heldBy(topic) > 0) {
    quietSince = 0;
    return false;
  }
  quietSince ||= Date.now();
  return Date.now() - quietSince > 500;
};
const autoFinishers = Array.from({ length: AUTO_CONSUMERS }, (_, i) => consumeAuto(`auto${i}`));
const transacted = connection.createSession(true, Session.SESSION_TRANSACTED);
const consumers = [
  consumeTransacted(transacted, transacted.createConsumer(queue), drainIdle),
  consumeDurable(drainIdle),
];

process.stdout.write('READY\n');

if (mode === 'load') {
  // Runs until killed.
  await Promise.all([
    ...Array.from({ length: QUEUE_PRODUCERS }, (_, i) => produce('q', i)),
    produce('t', 0),
    ...consumers,
  ]);
} else {
  running = false;
  await Promise.all(consumers);
  // Listeners return their last message's acknowledgement before close resolves (SES-1).
  await connection.close();
  for (const finish of autoFinishers) finish();
  await engine.close();
  say(`DRAINED ${heldBy(queue)} ${heldBy(topic)}`);
  clearInterval(keepAlive);
  process.exit(0);
}
