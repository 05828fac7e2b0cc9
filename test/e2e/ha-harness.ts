/**
 * What the high-availability tests share: a group of real `jms-gateway run` instances on one
 * PostgreSQL schema, the route RabbitMQ → internal persistent queue → Kafka at exactly-once that
 * they run, and the count at Kafka of what arrived.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { connect as amqpConnect } from 'amqplib';
import { Kafka, logLevel } from '../../connectors/kafka/kafkajs.js';
import { amqpBroker, connected, kafkaBroker } from '../helpers/brokers.js';
import { createKafkaTopics } from '../helpers/kafka-topics.js';
import { outOfOrder, readCommittedKeys } from '../helpers/keyed-flow.js';
import { uniqueName } from '../helpers/names.js';
import { PG_URL, dropSchema, postgresSkip, uniqueSchema } from '../helpers/postgres.js';
import { type Cleanup, teardown } from '../helpers/teardown.js';
import {
  type RunningGateway,
  type Workspace,
  adminJson,
  eventually,
  killGateway,
  startGateway,
  workspace,
} from './gateway-harness.js';

const amqp = await amqpBroker();
const kafka = await kafkaBroker();
export const skip = amqp.skip || kafka.skip || (await postgresSkip()) || false;

/** The lease of these tests: short, so that three takeovers fit in a test. */
export const LEASE_MS = 3_000;
const CLAIM_EVERY_MS = 250;
/** A takeover must begin within the lease and a claim round; recovery and the bridges' start add to it. */
export const TAKEOVER_BOUND_MS = 15_000;
/** Everything published reaches Kafka within this once the load stops. */
const DRAIN_TIMEOUT_MS = 120_000;

export interface Route {
  readonly schema: string;
  readonly amqpUrl: string;
  readonly queue: string;
  readonly brokers: readonly string[];
  readonly topic: string;
}

export function haConfig(route: Route): string {
  const brokers = route.brokers.map((b) => `'${b}'`).join(', ');
  return [
    'store:',
    '  type: postgres',
    '  url: ${PG_URL}',
    `  schema: ${route.schema}`,
    'ha:',
    '  enabled: true',
    '  group: orders',
    `  leaseMs: ${LEASE_MS}`,
    '  renewEveryMs: 1000',
    `  claimEveryMs: ${CLAIM_EVERY_MS}`,
    'shutdown: { deadlineMs: 2000 }',
    'destinations:',
    '  queues: [{ name: mid }]',
    'bridges:',
    '  - name: rabbit-in',
    `    source: { type: amqp, url: '${route.amqpUrl}', queue: '${route.queue}', prefetch: 64 }`,
    '    target: { type: jms, destination: queue://mid }',
    '    qos: exactly-once',
    '    ordering: key',
    '    batchSize: 32',
    '    batchIntervalMs: 200',
    '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
    '    duplicateWindow: { maxEntries: 20000 }',
    '  - name: kafka-out',
    '    source: { type: jms, destination: queue://mid }',
    // transactionTimeout 10 s: a transaction the killed active left open ends by its timeout.
    `    target: { type: kafka, brokers: [${brokers}], topic: '${route.topic}', key: { from: property, name: grp }, transactionTimeout: 10000 }`,
    '    qos: exactly-once',
    '    ordering: key',
    '    orderingProperty: grp',
    '    batchSize: 32',
    '    batchIntervalMs: 200',
    '    reconnect: { minMs: 200, increaseFactor: 2, maxMs: 1000 }',
    '    duplicateWindow: { maxEntries: 20000 }',
    '',
  ].join('\n');
}

export interface HaStatus {
  role: string;
  instanceId: string;
  epoch?: number;
  reason?: string;
}

/** The instances of one group, each a real process; the test ends them all. */
export class Group {
  readonly instances: RunningGateway[] = [];
  constructor(
    readonly dir: string,
    cleanup: Cleanup,
  ) {
    cleanup(() => Promise.all(this.instances.map((instance) => killGateway(instance))));
    if (process.env.HA_TEST_LOGS)
      cleanup(() =>
        this.instances.forEach((i, n) => console.log(`--- instance ${n}\n${i.stdout()}${i.stderr()}`)),
      );
  }

  async start(): Promise<RunningGateway> {
    const instance = await startGateway('gateway.yaml', this.dir, { PG_URL });
    this.instances.push(instance);
    return instance;
  }

  running(): RunningGateway[] {
    return this.instances.filter((i) => i.child.exitCode === null && i.child.signalCode === null);
  }

  /** The one instance whose /ready is 200 (the active), once there is exactly one. */
  active(except?: RunningGateway, timeoutMs = TAKEOVER_BOUND_MS): Promise<RunningGateway> {
    let seen: string[] = [];
    return eventually(
      async () => {
        const ready = [];
        seen = [];
        for (const instance of this.running()) {
          if (instance === except) continue;
          const answer = await fetch(`${instance.admin}/ready`).catch((error: Error) => error);
          seen.push(answer instanceof Error ? answer.message : `${answer.status} ${await answer.text()}`);
          if (!(answer instanceof Error) && answer.status === 200) ready.push(instance);
        }
        return ready.length === 1 ? ready[0] : undefined;
      },
      'one active instance',
      timeoutMs,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; /ready answered: ${seen.join(' | ')}`);
    });
  }
}

export async function status(instance: RunningGateway): Promise<HaStatus> {
  return adminJson<HaStatus>(instance.admin, '/ha');
}

/**
 * The route's queue, topic and schema, made for one test and removed after it, once what was
 * made later with the same `cleanup` (the gateways using them) has ended.
 */
export async function routeFor(cleanup: Cleanup): Promise<Route> {
  const { url } = connected(amqp);
  const { brokers } = connected(kafka);
  const route: Route = {
    schema: uniqueSchema('ha'),
    amqpUrl: url,
    queue: uniqueName('q-ha'),
    brokers,
    topic: uniqueName('t-ha'),
  };
  const rabbit = await amqpConnect(url);
  const channel = await rabbit.createChannel();
  // One consumer at a time, as docs/high-availability.md advises for an ordered RabbitMQ source: the
  // new active's consumer waits until the old one's unacknowledged messages are back in the queue,
  // so a paused former active cannot leave them behind newer ones.
  await channel.assertQueue(route.queue, { durable: true, arguments: { 'x-single-active-consumer': true } });
  const admin = new Kafka({ brokers: [...brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await createKafkaTopics(admin, [{ topic: route.topic, numPartitions: 2, replicationFactor: 1 }]);
  cleanup(async () => {
    await admin.deleteTopics({ topics: [route.topic] }).catch(() => undefined);
    await admin.disconnect();
    await channel.deleteQueue(route.queue).catch(() => undefined);
    await rabbit.close().catch(() => undefined);
    await dropSchema(route.schema);
  });
  return route;
}

/** Waits until every published key is at Kafka (or the drain times out), then reads what is there. */
export async function drained(route: Route, sent: readonly string[]): Promise<string[]> {
  let atTarget: string[] = [];
  await eventually(
    async () => {
      atTarget = await readCommittedKeys(route.brokers, route.topic);
      const there = new Set(atTarget);
      return sent.every((key) => there.has(key)) ? true : undefined;
    },
    `${sent.length} messages at kafka`,
    DRAIN_TIMEOUT_MS,
  ).catch(() => undefined);
  return atTarget;
}

/** Nothing lost, nothing twice, each group in order. */
export function assertDelivered(t: TestContext, sent: readonly string[], atTarget: readonly string[]): void {
  const counts = new Map<string, number>();
  for (const key of atTarget) counts.set(key, (counts.get(key) ?? 0) + 1);
  const lost = sent.filter((key) => !counts.has(key));
  const twice = [...counts].filter(([, n]) => n > 1).map(([key, n]) => `${key} x${n}`);
  const late = outOfOrder(atTarget);
  t.diagnostic(
    `sent ${sent.length}, at kafka ${atTarget.length}, lost ${lost.length}, twice ${twice.length}, out of order ${late.length}`,
  );
  assert.ok(sent.length > 0, 'the load ran');
  assert.deepEqual(lost.slice(0, 10), [], `${lost.length} confirmed messages never reached kafka`);
  assert.deepEqual(twice.slice(0, 10), [], `${twice.length} messages reached kafka twice`);
  assert.deepEqual(
    late.slice(0, 10),
    [],
    `${late.length} messages reached kafka behind a later one of their group`,
  );
}

/** A pause of the load between events: the flow runs meanwhile. */
export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A route, a workspace holding its configuration, and a group of two running instances of it;
 * `cleanup` ends what the test adds (a publisher) before all of them.
 */
export async function twoInstances(
  t: TestContext,
): Promise<{ route: Route; space: Workspace; group: Group; cleanup: Cleanup }> {
  // Ended last made first: the gateways before the workspace, and both before the route's schema
  // is dropped (a gateway still writing to it deadlocks DROP SCHEMA).
  const cleanup = teardown(t);
  const route = await routeFor(cleanup);
  const space = await workspace({ 'gateway.yaml': haConfig(route) });
  cleanup(() => space.cleanup());
  const group = new Group(space.dir, cleanup);
  await group.start();
  await group.start();
  return { route, space, group, cleanup };
}
