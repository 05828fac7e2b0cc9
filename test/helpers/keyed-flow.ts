/**
 * A keyed flow through RabbitMQ for the crash and failover tests: persistent messages published
 * at a steady rate in groups (each group a Kafka record key, so one partition, in order), and what
 * reached a Kafka topic, read to its end with read_committed.
 */
import { connect as amqpConnect } from 'amqplib';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import { uniqueName } from './names.js';

/** Message groups: each is a Kafka record key, so one partition, in order. */
const GROUPS = 8;
/** Messages published to RabbitMQ per second while gateways are killed and restarted. */
const PUBLISH_RATE = Number(process.env.CRASH_PUBLISH_RATE ?? 120);
/** How long reading a topic to its end may take. */
const READ_TIMEOUT_MS = 30_000;

/**
 * Publishes persistent messages to `queue` at {@link PUBLISH_RATE} until `stop()`, each with a
 * message-id, a `key` header (`g<group>-n<seq>`) and a `grp` header. `stop()` resolves the
 * `SENT <key>` lines of every publish the broker confirmed.
 */
export async function publishUntilStopped(
  url: string,
  queue: string,
): Promise<{ stop(): Promise<string[]> }> {
  const connection = await amqpConnect(url);
  const channel = await connection.createConfirmChannel();
  const sent: string[] = [];
  let stopped = false;
  const started = Date.now();
  const loop = (async () => {
    for (let n = 0; !stopped;) {
      // Catch up with the rate in small batches, each confirmed before its keys count as sent.
      const due = Math.floor(((Date.now() - started) / 1000) * PUBLISH_RATE);
      const batch: string[] = [];
      for (; n < due && batch.length < 50; n++) {
        const group = n % GROUPS;
        const key = `g${group}-n${Math.floor(n / GROUPS)}`;
        channel.sendToQueue(queue, Buffer.from(key), {
          persistent: true,
          messageId: `m-${key}`,
          contentType: 'text/plain',
          headers: { key, grp: `g${group}` },
        });
        batch.push(key);
      }
      if (batch.length > 0) {
        await channel.waitForConfirms();
        for (const key of batch) sent.push(`SENT ${key}`);
      } else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  let stopping: Promise<string[]> | undefined;
  return {
    stop() {
      stopped = true;
      stopping ??= loop.finally(() => connection.close()).then(() => sent);
      return stopping;
    },
  };
}

/** Keys (`g<group>-n<seq>`) that reached the target before one of their group with a lower seq. */
export function outOfOrder(atTarget: readonly string[]): string[] {
  const last = new Map<string, number>();
  const late: string[] = [];
  for (const key of atTarget) {
    const [group, seq] = key.split('-n') as [string, string];
    if ((last.get(group) ?? -1) >= Number(seq)) late.push(key);
    last.set(group, Number(seq));
  }
  return late;
}

/** The `key` header of every committed record of `topic`, read to its end (read_committed). */
export async function readCommittedKeys(brokers: readonly string[], topic: string): Promise<string[]> {
  const client = new Kafka({ brokers: [...brokers], logLevel: logLevel.NOTHING });
  const admin = client.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
  const groupId = uniqueName('g-crash-eo');
  const consumer = client.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 100 });
  const keys: string[] = [];
  const reached = new Map([...ends].map(([partition]) => [partition, 0n]));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`reading '${topic}' did not finish`)), READ_TIMEOUT_MS);
      const check = () => {
        if ([...ends].every(([partition, end]) => reached.get(partition)! >= end)) {
          clearTimeout(timer);
          resolve();
        }
      };
      check();
      void consumer.run({
        autoCommit: false,
        eachBatch: ({ batch }) => {
          for (const record of batch.messages) {
            if (BigInt(record.offset) >= ends.get(batch.partition)!) break;
            keys.push(String(record.headers?.key));
          }
          reached.set(batch.partition, BigInt(batch.lastOffset()) + 1n);
          check();
          return Promise.resolve();
        },
      });
    });
  } finally {
    await consumer.disconnect();
    await admin.deleteGroups([groupId]).catch(() => undefined);
    await admin.disconnect();
  }
  return keys;
}
