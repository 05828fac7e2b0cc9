/**
 * The process the RabbitMQ → engine queue → Kafka crash test kills (test/e2e/crash-recovery.test.ts):
 * a gateway built from YAML like `jms-gateway run` builds it, with a file store and two
 * exactly-once bridges: `rabbit-in` from a RabbitMQ queue into the persistent queue://mid, and
 * `kafka-out` from queue://mid to a Kafka topic. The test publishes the messages to RabbitMQ; this
 * process only forwards them. It prints READY on stdout once both bridges are connected, and in
 * drain mode reports to its fact file (written with writeSync, see crash-worker.ts for why):
 *
 *   DROPPED <rabbit-in> <kafka-out>  every 100 ms: redelivered copies each bridge's duplicate
 *                                    window dropped in this run (so far)
 *   DRAINED <held> <in flight>  the RabbitMQ queue and queue://mid are empty and both bridges
 *                               idle; what the two queues and the two bridges still hold
 *
 * Usage: node --import tsx test/helpers/crash-rabbit-worker.ts <dir> <load|drain> <fact file>
 *        <amqp url> <amqp queue> <kafka brokers> <kafka topic>
 */
import { openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect as amqpConnect } from 'amqplib';
import { builtinRegistry } from '../../connectors/index.js';
import { parseConfig } from '../../src/config/load-config.js';
import { Gateway, silentGatewayLogger } from '../../src/gateway/index.js';

/**
 * How long a drain may take. A Kafka target can send nothing for about a minute after a kill: on
 * a newly formatted Kafka 4.1 the dead producer's transaction ends only when it times out
 * (docs/bridges.md, "Where exactly-once ends"). The test waits a little longer than this.
 */
const DRAIN_BOUND_MS = 120_000;

const [dir, mode, factFile, amqpUrl, queue, brokers, topic] = process.argv.slice(2);
if (!dir || (mode !== 'load' && mode !== 'drain') || !factFile || !amqpUrl || !queue || !brokers || !topic) {
  process.stderr.write(
    'usage: crash-rabbit-worker <dir> <load|drain> <fact file> <amqp url> <queue> <brokers> <topic>\n',
  );
  process.exit(2);
}

const facts = openSync(factFile, 'a');
const say = (line: string): void => {
  writeSync(facts, `${line}\n`);
};

process.on('unhandledRejection', (error) => {
  process.stderr.write(`worker failed: ${String((error as Error)?.stack ?? error)}\n`);
  process.exit(1);
});

const kafkaBrokers = brokers
  .split(',')
  .map((b) => `'${b}'`)
  .join(', ');
const yaml = [
  'store:',
  `  path: '${join(dir, 'store')}'`,
  // A resolved commit survives kill -9 without an fsync (only power loss could take it).
  '  synchronous: normal',
  'admin: { enabled: false }',
  'destinations:',
  '  queues: [{ name: mid }]',
  'bridges:',
  '  - name: rabbit-in',
  `    source: { type: amqp, url: '${amqpUrl}', queue: '${queue}', prefetch: 64 }`,
  '    target: { type: jms, destination: queue://mid }',
  '    qos: exactly-once',
  // The source's order (one unit for the queue), so each key stays in order into queue://mid.
  '    ordering: key',
  // Acknowledgements in batches, as a throughput setting would have them: a kill then leaves up
  // to a batch forwarded but unacknowledged, which RabbitMQ delivers again and the window drops.
  '    batchSize: 32',
  '    batchIntervalMs: 500',
  '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
  '    duplicateWindow: { maxEntries: 20000 }',
  '  - name: kafka-out',
  '    source: { type: jms, destination: queue://mid }',
  // transactionTimeout 10 s (default 60 s): a newly formatted Kafka ends the transaction a killed
  // producer left open only by its timeout, and the restarted sink's sends wait for that.
  `    target: { type: kafka, brokers: [${kafkaBrokers}], topic: '${topic}', key: { from: property, name: grp }, retries: 2, transactionTimeout: 10000 }`,
  '    qos: exactly-once',
  '    ordering: key',
  '    orderingProperty: grp',
  '    batchSize: 8',
  '    batchIntervalMs: 500',
  '    concurrency: 1',
  '    maxInFlight: 64',
  '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
  '    duplicateWindow: { maxEntries: 20000 }',
].join('\n');
// Throws a ConfigError naming every problem, which ends the worker with its message.
const { config } = parseConfig(yaml, 'crash-rabbit.yaml', { registry: builtinRegistry, env: {} });

// The engine's timers are unref'd; this keeps the process alive while the bridges wait on them.
const keepAlive = setInterval(() => undefined, 60_000);
const gateway = await Gateway.start(config, silentGatewayLogger);
const bridges = [gateway.bridge('rabbit-in')!, gateway.bridge('kafka-out')!];
const connection = gateway.connectionFactory.createConnection();
const midQueue = connection.createSession().createQueue('mid');
const heldInMid = () => {
  const stats = gateway.engine.destinationStatistics(midQueue);
  return stats.messagesCurrent + stats.messagesPending;
};

async function until(done: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done()) && Date.now() < deadline) await sleep(50);
}

await until(() => bridges.every((bridge) => bridge.status === 'connected'), 20_000);
process.stdout.write('READY\n');

// The kill comes at any moment: the last whole line says how often the windows were needed.
let dropped = '';
const reporter = setInterval(() => {
  const now = bridges.map((bridge) => bridge.counters.duplicates).join(' ');
  if (now !== dropped) say(`DROPPED ${(dropped = now)}`);
}, 100).unref();

if (mode === 'drain') {
  // Ready messages in RabbitMQ's queue; the unacknowledged ones are the bridge's in-flight.
  const rabbit = await amqpConnect(amqpUrl);
  const channel = await rabbit.createChannel();
  const readyInRabbit = async () => (await channel.checkQueue(queue)).messageCount;
  const inFlight = () => bridges.reduce((n, bridge) => n + bridge.counters.inFlight, 0);
  const idle = async () => (await readyInRabbit()) === 0 && heldInMid() === 0 && inFlight() === 0;
  // Idle three checks in a row: a message between RabbitMQ's count and the bridge's would slip through once.
  let idleChecks = 0;
  await until(async () => {
    idleChecks = (await idle()) ? idleChecks + 1 : 0;
    return idleChecks >= 3;
  }, DRAIN_BOUND_MS);
  clearInterval(reporter); // DRAINED is the last line
  say(`DRAINED ${(await readyInRabbit()) + heldInMid()} ${inFlight()}`);
  await rabbit.close();
  await connection.close();
  await gateway.stop(10_000);
  clearInterval(keepAlive);
  process.exit(0);
}
