/**
 * The process the exactly-once crash test kills (test/e2e/crash-recovery.test.ts): a gateway built
 * from YAML like `jms-gateway run` builds it (file store, an exactly-once bridge from queue://in
 * to the target), plus a producer that sends keyed persistent messages to queue://in. It prints
 * READY on stdout once the gateway runs, then reports to its fact file, one line per fact, never
 * before the fact (written with writeSync, see crash-worker.ts for why):
 *
 *   SENT <key>          a persistent send to queue://in resolved
 *   OUT <key>           drain mode, internal target: a message found in queue://out
 *   DRAINED <in> <out>  drain mode: queue://in is empty and the bridge idle; what queue://in and
 *                       the bridge still hold
 *
 * Usage: node --import tsx test/helpers/crash-bridge-worker.ts <dir> <internal|kafka> <load|drain>
 *        <round> <fact file> [<kafka brokers> <kafka topic>]
 */
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtinRegistry } from '../../connectors/index.js';
import { parseConfig } from '../../src/config/load-config.js';
import { Gateway, silentGatewayLogger } from '../../src/gateway/index.js';
import { type Message, Session, TextMessage } from '../../src/index.js';

/**
 * How long a drain may take. A Kafka target can send nothing for about a minute after a kill: on
 * a newly formatted Kafka 4.1 the dead producer's transaction ends only when it times out
 * (docs/bridges.md, "Where exactly-once ends"). The test waits a little longer than this.
 */
const DRAIN_BOUND_MS = 120_000;

const [dir, target, mode, roundText, factFile, brokers, topic] = process.argv.slice(2);
if (
  !dir ||
  (target !== 'internal' && target !== 'kafka') ||
  (mode !== 'load' && mode !== 'drain') ||
  !roundText ||
  !factFile ||
  (target === 'kafka' && (!brokers || !topic))
) {
  process.stderr.write(
    'usage: crash-bridge-worker <dir> <internal|kafka> <load|drain> <round> <fact file> [<brokers> <topic>]\n',
  );
  process.exit(2);
}

const PRODUCERS = 4;
/** The backlog of queue://in at which producers wait for the bridge, so the drain stays short. */
const MAX_BACKLOG = 500;

const facts = openSync(factFile, 'a');
const say = (line: string): void => {
  writeSync(facts, `${line}\n`);
};

process.on('unhandledRejection', (error) => {
  process.stderr.write(`worker failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

// transactionTimeout 10 s (default 60 s): a newly formatted Kafka ends the transaction a killed
// producer left open only by its timeout, and the restarted sink's sends wait for that.
const targetYaml =
  target === 'internal'
    ? '{ type: jms, destination: queue://out }'
    : `{ type: kafka, brokers: [${brokers!
        .split(',')
        .map((b) => `'${b}'`)
        .join(', ')}], topic: '${topic}', retries: 2, transactionTimeout: 10000 }`;
const yaml = [
  'store:',
  `  path: '${join(dir, 'store')}'`,
  // A resolved commit survives kill -9 without an fsync (only power loss could take it).
  '  synchronous: normal',
  'admin: { enabled: false }',
  'destinations:',
  '  queues: [{ name: in }, { name: out }]',
  'bridges:',
  '  - name: exactly-once-crash',
  '    source: { type: jms, destination: queue://in }',
  `    target: ${targetYaml}`,
  '    qos: exactly-once',
  '    ordering: none',
  `    concurrency: ${target === 'internal' ? 16 : 1}`,
  '    maxInFlight: 64',
  '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
  '    duplicateWindow: { maxEntries: 20000 }',
].join('\n');
// Throws a ConfigError naming every problem, which ends the worker with its message.
const { config } = parseConfig(yaml, 'crash.yaml', { registry: builtinRegistry, env: {} });

// The engine's timers are unref'd; this keeps the process alive while the bridge waits on them.
const keepAlive = setInterval(() => undefined, 60_000);
const gateway = await Gateway.start(config, silentGatewayLogger);
const bridge = gateway.bridge('exactly-once-crash')!;
const connection = gateway.connectionFactory.createConnection();
connection.start();
const inQueue = connection.createSession().createQueue('in');
const held = (name: string) => {
  const stats = gateway.engine.destinationStatistics(connection.createSession().createQueue(name));
  return stats.messagesCurrent + stats.messagesPending;
};

async function until(done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await sleep(10);
}

await until(() => bridge.status === 'connected', 20_000);
process.stdout.write('READY\n');

if (mode === 'load') {
  const round = Number(roundText);
  await Promise.all(
    Array.from({ length: PRODUCERS }, async (_, p) => {
      const producer = connection.createSession().createProducer(inQueue);
      for (let n = 0; ; n++) {
        while (held('in') > MAX_BACKLOG) await sleep(5);
        const key = `r${round}p${p}n${n}`;
        const message = new TextMessage(key);
        message.setStringProperty('key', key);
        await producer.send(message);
        say(`SENT ${key}`);
      }
    }),
  );
} else {
  // The bridge drains queue://in; then what reached queue://out is listed.
  await until(() => held('in') === 0 && bridge.counters.inFlight === 0, DRAIN_BOUND_MS);
  const left = `${held('in')} ${bridge.counters.inFlight}`;
  if (target === 'internal') {
    const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    const consumer = session.createConsumer(session.createQueue('out'));
    for (let m: Message | null; (m = await consumer.receive(200)) !== null;)
      say(`OUT ${m.getStringProperty('key')}`);
  }
  say(`DRAINED ${left}`);
  await connection.close();
  await gateway.stop(10_000);
  clearInterval(keepAlive);
  process.exit(0);
}
