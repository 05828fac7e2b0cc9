/**
 * The connector conformance suite (DESIGN.md, Tests): the same behaviours, checked the same way,
 * for every connector on its real broker. A connector's entry file calls
 * {@link conformanceSuite} with a {@link ConformanceFactory} that knows how to make a fresh
 * endpoint (a queue, a topic, a Kafka topic) with sources and sinks on it and how to remove it.
 *
 * Flows go through two bridges and the broker, so both the connector's sink and its source are
 * driven by the bridge runtime, as in production:
 *
 * ```
 * engine queue `in` ─► Bridge A (InternalSource ─► connector sink) ─► broker ─►
 *     Bridge B (connector source ─► InternalSink) ─► engine queue `out` ─► collector
 * ```
 *
 * The messages are pre-filled in `in` (so producing never depends on the broker) and carry an
 * int property `seq`; the collector counts what reaches `out`: lost = seqs never seen,
 * duplicates = arrivals beyond the first of a seq.
 */
import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ConnectionFactory,
  JmsEngine,
  MemoryStore,
  Session,
  TextMessage,
  systemClock,
  type Connection,
  type Message,
} from '../../src/index.js';
import {
  Bridge,
  InternalSink,
  InternalSource,
  ERROR_DELIVERY_COUNT,
  ERROR_ORIGIN,
  ERROR_REASON,
  ERROR_TIME,
  type BridgeConfig,
  type BridgeCounters,
  type QualityOfService,
} from '../../src/bridge/index.js';
import {
  BehindFailureError,
  PoisonMessageError,
  isPoison,
  messageSnapshot,
  type SendResult,
  type ConnectorContext,
  type Delivery,
  type EngineLogger,
  type Sink,
  type Source,
} from '../../src/spi/index.js';
import { findBroker, type BrokerKind, type BrokerOf } from '../helpers/brokers.js';
import { canControl, restartBroker } from '../helpers/broker-control.js';
import { withTimeout } from '../helpers/timeout.js';
import { ALL_BODY_TYPES, sampleMessage } from '../unit/spi/sample-messages.js';

/** Messages in the ordered flow. */
export const ORDERED_FLOW = envInt('CONFORMANCE_ORDERED_FLOW', 1_000);
/** Messages in the parallel flow. */
export const PARALLEL_FLOW = envInt('CONFORMANCE_PARALLEL_FLOW', 1_000);
/** Messages in a flow with a broker restart in the middle. */
export const RESTART_FLOW = envInt('CONFORMANCE_RESTART_FLOW', 10_000);
/** Ordering units (message groups) in the parallel flow. */
const PARALLEL_GROUPS = 4;
/** Every restart test finishes (or fails) within this, broker restart included. */
const RESTART_TEST_TIMEOUT_MS = 120_000;
const FLOW_TEST_TIMEOUT_MS = 60_000;
const SHORT_TEST_TIMEOUT_MS = 45_000;
const WAIT_MS = 20_000;

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** A fresh endpoint (its own queue / topic / Kafka topic) with sources and sinks on it. */
export interface ConformanceEndpoint {
  /** A new sink writing to the endpoint (each with its own client id). */
  sink(context: ConnectorContext): Sink;
  /**
   * A new source reading the endpoint. `member` is the reader's index when several read in
   * parallel (an MQTT shared subscription); the same member is the same session or group, so a
   * reconnect resumes it.
   */
  source(context: ConnectorContext, member?: number): Source;
  /** Removes what the endpoint made on the broker. */
  cleanup(): Promise<void>;
}

/** How to run the suite against one connector. */
export interface ConformanceFactory<K extends BrokerKind> {
  /** Which real broker the connector talks to. */
  readonly broker: K;
  /**
   * Makes a fresh endpoint. `partitions` is the parallelism the broker should offer: Kafka
   * partitions; for MQTT, more than 1 makes the sources members of a shared subscription.
   */
  endpoint(broker: BrokerOf[K], options: { partitions: number }): Promise<ConformanceEndpoint>;
  /**
   * How the parallel test reads: `readers` sources side by side (a shared subscription), each in
   * its own bridge, or one source whose bridge runs `PARALLEL_GROUPS` ordering units at once.
   * `perUnitOrder`: whether order per group is kept (it is not across shared-subscription members).
   */
  readonly parallel: { readonly readers: number; readonly perUnitOrder: boolean };
  /** Bridge settings the connector's source needs (MQTT: `batchSize: 1`). */
  readonly bridge?: Partial<Omit<BridgeConfig, 'name' | 'source' | 'sink'>>;
  /**
   * The most messages the flow lets wait in the broker between the two bridges (bridge A is paused
   * above it). Mosquitto drops QoS 1 messages beyond `max_queued_messages` (default 1000) per
   * session, so the MQTT flow must not let the writer run far ahead of the one-at-a-time reader.
   */
  readonly maxBacklog?: number;
}

const silent: EngineLogger = { error() {}, warn() {}, info() {}, debug() {} };
const FAST_RECONNECT = { minMs: 200, increaseFactor: 2, maxMs: 2_000 };

function context(name: string): ConnectorContext {
  return { name, logger: silent };
}

/** An engine with a memory store on the system clock: the gateway side of every flow. */
function newEngine(): JmsEngine {
  return new JmsEngine({ store: new MemoryStore(), clock: systemClock, expirationScanIntervalMs: 0 });
}

/** Reads an engine queue as it fills, remembering every arrival. */
class Collector {
  readonly arrivals: Array<{ seq: number; group: string | null; message: Message }> = [];
  readonly distinct = new Set<number>();
  readonly #connection: Connection;
  readonly #waiters = new Set<() => void>();

  constructor(engine: JmsEngine, queue: string) {
    this.#connection = new ConnectionFactory(engine).createConnection();
    const session = this.#connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    const consumer = session.createConsumer(session.createQueue(queue));
    consumer.setMessageListener((message) => {
      const seq = message.getIntProperty('seq');
      this.arrivals.push({ seq, group: message.getStringProperty('JMSXGroupID'), message });
      this.distinct.add(seq);
      for (const wake of this.#waiters) wake();
    });
    this.#connection.start();
  }

  get duplicates(): number {
    return this.arrivals.length - this.distinct.size;
  }

  /** Resolves once `done()` holds, or false after `ms`. */
  async until(done: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 200));
        this.#waiters.add(wake);
      });
    }
    return true;
  }

  /**
   * Resolves once no message has arrived for `quietMs` and `idle()` holds (nothing left in flight
   * that could still bring a copy), true; false when that has not happened within `maxMs`. Each
   * arrival starts the quiet period again, so late copies after a reconnect are all counted
   * however long the redelivery takes, and a target that is already quiet costs only `quietMs`.
   */
  quiet(quietMs: number, maxMs: number, idle: () => boolean = () => true): Promise<boolean> {
    const giveUpAt = Date.now() + maxMs;
    return new Promise<boolean>((resolve) => {
      let timer: NodeJS.Timeout;
      const finish = (result: boolean): void => {
        clearTimeout(timer);
        this.#waiters.delete(restart);
        resolve(result);
      };
      const check = (): void => {
        if (idle()) finish(true);
        else if (Date.now() >= giveUpAt) finish(false);
        else restart();
      };
      const restart = (): void => {
        clearTimeout(timer);
        const left = giveUpAt - Date.now();
        if (left <= 0) finish(false);
        else timer = setTimeout(check, Math.min(quietMs, left));
      };
      this.#waiters.add(restart);
      restart();
    });
  }

  close(): Promise<void> {
    return this.#connection.close();
  }
}

/** How long the restart tests keep the broker down, ms. */
const BROKER_DOWN_MS = 1_000;
/** No arrival for this long, with nothing in flight, and the target is quiet: no more copies come. */
const QUIET_MS = 300;
/** The longest a flow waits for its target to become quiet after the last original arrived. */
const QUIET_MAX_MS = 5_000;

/**
 * Puts persistent text messages with `seq` from `from` (inclusive) to `count` (exclusive), and a
 * group when `groups` > 1, into an engine queue.
 */
async function prefill(
  engine: JmsEngine,
  queue: string,
  count: number,
  groups: number,
  from = 0,
): Promise<void> {
  const connection = new ConnectionFactory(engine).createConnection();
  try {
    const session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
    const producer = session.createProducer(session.createQueue(queue));
    for (let seq = from; seq < count; seq++) {
      const message = new TextMessage(`conformance message ${seq} `.padEnd(100, '.'));
      message.setIntProperty('seq', seq);
      if (groups > 1) message.setStringProperty('JMSXGroupID', `g${seq % groups}`);
      await producer.send(message);
    }
  } finally {
    await connection.close();
  }
}

interface FlowOptions {
  readonly count: number;
  readonly qos: QualityOfService;
  /** Message groups (ordering units); 1 = strict order through one unit. */
  readonly groups: number;
  /** Sources reading in parallel, each in its own bridge. */
  readonly readers: number;
  /** Give up waiting for the last message after this long. */
  readonly timeoutMs: number;
  /**
   * Runs once a third of the messages has arrived (the broker restart). With it, only the first
   * half is sent before the flow starts; `midway` sends the rest by calling `sendRest`, so the
   * flow cannot end before `midway` lets it (batched bridges move the first half in a second).
   */
  readonly midway?: (collector: Collector, sendRest: () => Promise<void>) => Promise<unknown>;
}

interface FlowResult {
  readonly collector: Collector;
  /** The target became quiet before the duplicates were counted: see {@link Collector.quiet}. */
  readonly quiet: boolean;
  readonly lost: number;
  readonly duplicates: number;
  readonly ms: number;
  readonly writer: BridgeCounters;
  readonly readers: BridgeCounters[];
  readonly midway: unknown;
}

/** Runs `count` messages from an engine queue through the broker back into an engine queue. */
async function runFlow<K extends BrokerKind>(
  factory: ConformanceFactory<K>,
  broker: BrokerOf[K],
  options: FlowOptions,
): Promise<FlowResult> {
  const id = randomUUID().slice(0, 8);
  const engine = newEngine();
  const endpoint = await factory.endpoint(broker, { partitions: options.groups });
  const collector = new Collector(engine, `out-${id}`);
  const bridges: Bridge[] = [];
  const ordering = options.groups > 1 ? 'key' : 'bridge';
  const common = {
    qos: options.qos,
    ordering,
    concurrency: options.groups,
    reconnect: FAST_RECONNECT,
    retry: { delay: { kind: 'fixed', ms: 100 }, limit: -1 },
    stopTimeoutMs: 5_000,
  } as const;
  let pacer: NodeJS.Timeout | undefined;
  try {
    const firstPart = options.midway ? Math.floor(options.count / 2) : options.count;
    await prefill(engine, `in-${id}`, firstPart, options.groups);
    let restSent = false;
    const sendRest = async (): Promise<void> => {
      if (restSent) return;
      restSent = true;
      await prefill(engine, `in-${id}`, options.count, options.groups, firstPart);
    };
    const readers = Array.from({ length: options.readers }, (_, member) => {
      const name = `conformance-${factory.broker}-${id}-read-${member}`;
      return new Bridge({
        ...common,
        ...factory.bridge,
        name,
        source: endpoint.source(context(name), member),
        sink: new InternalSink({ engine, destination: `queue://out-${id}` }),
      });
    });
    bridges.push(...readers);
    // Readers first: an MQTT subscription must exist before anything is published.
    await Promise.all(
      readers.map((bridge) => withTimeout(bridge.start(), WAIT_MS, `${bridge.name} to start`)),
    );
    const writerName = `conformance-${factory.broker}-${id}-write`;
    const writer = new Bridge({
      ...common,
      // A paced writer pauses once the broker holds `maxBacklog`; what it read before that still
      // goes, so it reads little ahead (a fifth of the bound) for the pause to hold the backlog.
      ...(factory.maxBacklog !== undefined && {
        maxInFlight: Math.max(1, Math.floor(factory.maxBacklog / 5)),
      }),
      name: writerName,
      source: new InternalSource({ engine, destination: `queue://in-${id}` }),
      sink: endpoint.sink(context(writerName)),
    });
    bridges.push(writer);
    const started = Date.now();
    await withTimeout(writer.start(), WAIT_MS, `${writerName} to start`);
    if (factory.maxBacklog !== undefined) pacer = pace(writer, collector, factory.maxBacklog);
    const midway = options.midway
      ? collector
          .until(() => collector.distinct.size >= options.count / 3, options.timeoutMs)
          .then(() => options.midway!(collector, sendRest))
          .finally(sendRest)
      : Promise.resolve(undefined);
    midway.catch(() => {}); // awaited below; not an unhandled rejection meanwhile
    await collector.until(() => collector.distinct.size >= options.count, options.timeoutMs);
    const ms = Date.now() - started;
    const midwayResult = await midway;
    // Late copies (at-least-once, or an exactly-once bug) may still arrive after the last
    // original: the duplicates are counted once the target has been quiet, bridges idle.
    const quiet = await collector.quiet(QUIET_MS, QUIET_MAX_MS, () =>
      bridges.every((bridge) => bridge.counters.inFlight === 0),
    );
    return {
      quiet,
      collector,
      lost: options.count - collector.distinct.size,
      duplicates: collector.duplicates,
      ms,
      writer: writer.counters,
      readers: readers.map((bridge) => bridge.counters),
      midway: midwayResult,
    };
  } finally {
    clearInterval(pacer);
    for (const bridge of bridges.reverse()) await bridge.stop().catch(() => {});
    await collector.close();
    await engine.close();
    await endpoint.cleanup().catch(() => {});
  }
}

/** Pauses the writer while more than `maxBacklog` messages wait in the broker, resumes it below half. */
function pace(writer: Bridge, collector: Collector, maxBacklog: number): NodeJS.Timeout {
  let paused = false;
  let busy = false;
  return setInterval(() => {
    if (busy) return;
    const backlog = writer.counters.out - collector.distinct.size;
    const change =
      !paused && backlog > maxBacklog
        ? writer.pause()
        : paused && backlog < maxBacklog / 2
          ? writer.resume()
          : undefined;
    if (change === undefined) return;
    busy = true;
    paused = !paused;
    change.then(
      () => (busy = false),
      () => (busy = false),
    );
  }, 10);
}

/** The seqs of one group (or all) in arrival order are strictly increasing, first arrivals only. */
function assertOrdered(collector: Collector, group: string | null): void {
  const seen = new Set<number>();
  let last = -1;
  for (const arrival of collector.arrivals) {
    if (arrival.group !== group || seen.has(arrival.seq)) continue;
    seen.add(arrival.seq);
    assert.ok(arrival.seq > last, `group ${String(group)}: seq ${arrival.seq} arrived after ${last}`);
    last = arrival.seq;
  }
}

function describe(result: FlowResult): string {
  return JSON.stringify({
    lost: result.lost,
    duplicates: result.duplicates,
    quiet: result.quiet,
    ms: result.ms,
    writer: result.writer,
    readers: result.readers,
  });
}

/** A sink that records every attempt and fails some of them, in front of an engine queue. */
class ScriptedSink implements Sink {
  readonly attempts: Array<{ seq: number; deliveryCount: number; redelivered: boolean }> = [];
  /** The seqs of each batch handed over. */
  readonly batches: number[][] = [];
  constructor(
    private readonly target: Sink,
    private readonly fail: (seq: number, attempt: number) => Error | undefined,
  ) {}
  connect(signal: AbortSignal): Promise<void> {
    return this.target.connect(signal);
  }
  async send(message: Message, signal: AbortSignal): Promise<void> {
    const error = this.#attempt(message);
    if (error) throw error;
    await this.target.send(message, signal);
  }
  /**
   * Batched as a sink that writes in order does it: the scripted failures fail alone, and after a
   * failure that is not poison the rest of the batch is not written but reported behind it.
   */
  async sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]> {
    this.batches.push(batch.map((message) => message.getIntProperty('seq')));
    const results: SendResult[] = [];
    const written: { message: Message; index: number }[] = [];
    let failure: Error | undefined;
    batch.forEach((message, index) => {
      if (failure) {
        results[index] = { ok: false, error: new BehindFailureError(failure) };
        return;
      }
      const error = this.#attempt(message);
      if (error) {
        results[index] = { ok: false, error };
        if (!isPoison(error)) failure = error;
      } else written.push({ message, index });
    });
    const messages = written.map((w) => w.message);
    const answers = this.target.sendBatch
      ? await this.target.sendBatch(messages, signal)
      : await sendInOrder(this.target, messages, signal);
    written.forEach((w, i) => (results[w.index] = answers[i]!));
    return results;
  }
  /** Records an attempt at `message` and says whether the script fails it. */
  #attempt(message: Message): Error | undefined {
    const seq = message.getIntProperty('seq');
    const attempt = this.attempts.filter((a) => a.seq === seq).length + 1;
    this.attempts.push({
      seq,
      deliveryCount: message.getIntProperty('JMSXDeliveryCount'),
      redelivered: message.getJMSRedelivered(),
    });
    return this.fail(seq, attempt);
  }
  get maxBatchesInFlight(): number {
    return this.target.maxBatchesInFlight ?? 1;
  }
  close(): Promise<void> {
    return this.target.close();
  }
}

/** A sink without batches, one message after the other; after a failure the rest is behind it, unsent. */
async function sendInOrder(
  sink: Sink,
  messages: readonly Message[],
  signal: AbortSignal,
): Promise<SendResult[]> {
  const results: SendResult[] = [];
  let failure: Error | undefined;
  for (const message of messages) {
    if (failure) {
      results.push({ ok: false, error: new BehindFailureError(failure) });
      continue;
    }
    try {
      await sink.send(message, signal);
      results.push({ ok: true });
    } catch (error) {
      const cause = error instanceof Error ? error : new Error(String(error));
      results.push({ ok: false, error: cause });
      if (!isPoison(cause)) failure = cause;
    }
  }
  return results;
}

/**
 * Runs three messages (seq 0, 1, 2) from the connector's sink through a bridge from its source into
 * a {@link ScriptedSink}, and hands the test the engine for its checks.
 */
async function scriptedBridge<K extends BrokerKind>(
  factory: ConformanceFactory<K>,
  broker: BrokerOf[K],
  fail: (seq: number, attempt: number) => Error | undefined,
  check: (run: { bridge: Bridge; sink: ScriptedSink; out: Collector; errors: Collector }) => Promise<void>,
): Promise<void> {
  const id = randomUUID().slice(0, 8);
  const engine = newEngine();
  const endpoint = await factory.endpoint(broker, { partitions: 1 });
  const out = new Collector(engine, `out-${id}`);
  const errors = new Collector(engine, `errors-${id}`);
  const name = `conformance-${factory.broker}-${id}-scripted`;
  const sink = new ScriptedSink(new InternalSink({ engine, destination: `queue://out-${id}` }), fail);
  const bridge = new Bridge({
    ...factory.bridge,
    name,
    source: endpoint.source(context(name)),
    sink,
    ordering: 'bridge',
    retry: { delay: { kind: 'fixed', ms: 50 }, limit: 5 },
    errorDestination: new InternalSink({ engine, destination: `queue://errors-${id}` }),
    reconnect: FAST_RECONNECT,
    stopTimeoutMs: 5_000,
  });
  const producer = endpoint.sink(context(`${name}-producer`));
  try {
    await withTimeout(bridge.start(), WAIT_MS, 'the bridge to start');
    await producer.connect(AbortSignal.timeout(WAIT_MS));
    for (let seq = 0; seq < 3; seq++) {
      const message = new TextMessage(`scripted ${seq}`);
      message.setJMSMessageID(`ID:conformance-${id}-${seq}`);
      message.setIntProperty('seq', seq);
      await producer.send(message, AbortSignal.timeout(WAIT_MS));
    }
    await check({ bridge, sink, out, errors });
  } finally {
    await producer.close().catch(() => {});
    await bridge.stop().catch(() => {});
    await out.close();
    await errors.close();
    await engine.close();
    await endpoint.cleanup().catch(() => {});
  }
}

async function receive(source: Source): Promise<Delivery> {
  return withTimeout(source.receive(AbortSignal.timeout(WAIT_MS)), WAIT_MS, 'a delivery from the source');
}

/**
 * Registers the conformance tests of one connector. `name` is the connector's type, as in test
 * names: `conformance <name> - <behaviour> (<requirement>)`.
 */
export function conformanceSuite<K extends BrokerKind>(name: string, factory: ConformanceFactory<K>): void {
  const brokerTest = (
    title: string,
    timeout: number,
    fn: (broker: BrokerOf[K], t: TestContext) => Promise<void>,
  ): void => {
    void test(`conformance ${name} - ${title}`, { timeout }, async (t) => {
      const broker = await findBroker(factory.broker);
      if (broker.skip !== false) {
        t.skip(broker.skip); // skip reason: no broker here; with REQUIRE_BROKERS=1 (CI) findBroker fails instead
        return;
      }
      await fn(broker, t);
    });
  };

  brokerTest(
    'a source and a sink open, close, and open again on the same endpoint (BRG-1, BRG-7)',
    SHORT_TEST_TIMEOUT_MS,
    async (broker) => {
      const endpoint = await factory.endpoint(broker, { partitions: 1 });
      try {
        for (let round = 0; round < 2; round++) {
          const source = endpoint.source(context(`conformance-${name}-open`));
          const sink = endpoint.sink(context(`conformance-${name}-open`));
          await source.connect(AbortSignal.timeout(WAIT_MS));
          await sink.connect(AbortSignal.timeout(WAIT_MS));
          await sink.close();
          await source.close();
        }
      } finally {
        await endpoint.cleanup();
      }
    },
  );

  brokerTest(
    'every body type, header and typed property comes back identical through sink and source (BRG-6)',
    SHORT_TEST_TIMEOUT_MS,
    async (broker) => {
      const endpoint = await factory.endpoint(broker, { partitions: 1 });
      const source = endpoint.source(context(`conformance-${name}-roundtrip`));
      const sink = endpoint.sink(context(`conformance-${name}-roundtrip`));
      try {
        await source.connect(AbortSignal.timeout(WAIT_MS));
        await sink.connect(AbortSignal.timeout(WAIT_MS));
        for (const bodyType of ALL_BODY_TYPES) {
          const sent = sampleMessage(bodyType, Date.now());
          await sink.send(sent, AbortSignal.timeout(WAIT_MS));
          const delivery = await receive(source);
          assert.equal(delivery.message.constructor, sent.constructor, bodyType);
          assert.deepEqual(messageSnapshot(delivery.message), messageSnapshot(sent), bodyType);
          await delivery.settle({ kind: 'ack' });
        }
      } finally {
        await sink.close();
        await source.close();
        await endpoint.cleanup();
      }
    },
  );

  brokerTest(
    `${ORDERED_FLOW.toLocaleString('en-US')} messages keep their order through a bridge into the broker and a bridge out of it (BRG-1, ORD-3)`,
    FLOW_TEST_TIMEOUT_MS,
    async (broker, t) => {
      const result = await runFlow(factory, broker, {
        count: ORDERED_FLOW,
        qos: 'at-least-once',
        groups: 1,
        readers: 1,
        timeoutMs: FLOW_TEST_TIMEOUT_MS - 15_000,
      });
      t.diagnostic(`ordered flow: ${describe(result)}`);
      assert.equal(result.lost, 0, `lost: ${describe(result)}`);
      assert.ok(result.quiet, `still busy when the duplicates were counted: ${describe(result)}`);
      assert.equal(result.duplicates, 0, 'no failure, so no duplicate');
      assertOrdered(result.collector, null);
    },
  );

  brokerTest(
    `${PARALLEL_FLOW.toLocaleString('en-US')} messages in ${PARALLEL_GROUPS} ordering units in parallel: nothing lost (BRG-1, ORD-4)`,
    FLOW_TEST_TIMEOUT_MS,
    async (broker, t) => {
      const result = await runFlow(factory, broker, {
        count: PARALLEL_FLOW,
        qos: 'at-least-once',
        groups: PARALLEL_GROUPS,
        readers: factory.parallel.readers,
        timeoutMs: FLOW_TEST_TIMEOUT_MS - 15_000,
      });
      t.diagnostic(`parallel flow: ${describe(result)}`);
      assert.equal(result.lost, 0, `lost: ${describe(result)}`);
      assert.ok(result.quiet, `still busy when the duplicates were counted: ${describe(result)}`);
      assert.equal(result.duplicates, 0, 'no failure, so no duplicate');
      if (factory.parallel.perUnitOrder)
        for (let group = 0; group < PARALLEL_GROUPS; group++) assertOrdered(result.collector, `g${group}`);
      if (factory.parallel.readers > 1)
        for (const [member, counters] of result.readers.entries())
          assert.ok(counters.out > 0, `reader ${member} of the shared subscription took none`);
    },
  );

  brokerTest(
    'a failed send is retried with JMSXDeliveryCount 2 and JMSRedelivered, before later messages (BRG-4, ORD-3)',
    SHORT_TEST_TIMEOUT_MS,
    async (broker) => {
      await scriptedBridge(
        factory,
        broker,
        (seq, attempt) => (seq === 1 && attempt === 1 ? new Error('target briefly unavailable') : undefined),
        async ({ bridge, sink, out }) => {
          assert.ok(
            await out.until(() => out.distinct.size === 3, WAIT_MS),
            'three messages reach the target',
          );
          assert.deepEqual(
            sink.attempts.map((a) => [a.seq, a.deliveryCount, a.redelivered]),
            [
              [0, 1, false],
              [1, 1, false],
              [1, 2, true],
              [2, 1, false],
            ],
          );
          assert.deepEqual(
            out.arrivals.map((a) => a.seq),
            [0, 1, 2],
          );
          assert.equal(bridge.counters.retried, 1);
        },
      );
    },
  );

  brokerTest(
    'a poison message reaches the error destination with the error properties, the others go on (BRG-4, DLV-9)',
    SHORT_TEST_TIMEOUT_MS,
    async (broker) => {
      const before = Date.now();
      await scriptedBridge(
        factory,
        broker,
        (seq) => (seq === 1 ? new PoisonMessageError('the target will never take this message') : undefined),
        async ({ bridge, sink, out, errors }) => {
          assert.ok(await out.until(() => out.distinct.size === 2, WAIT_MS), 'the others reach the target');
          assert.ok(await errors.until(() => errors.distinct.size === 1, WAIT_MS), 'the poison is parked');
          assert.deepEqual(
            out.arrivals.map((a) => a.seq),
            [0, 2],
          );
          assert.equal(sink.attempts.filter((a) => a.seq === 1).length, 1, 'poison is not retried');
          const parked = errors.arrivals[0]!.message;
          assert.equal(parked.getIntProperty('seq'), 1);
          assert.equal(parked.getStringProperty(ERROR_ORIGIN), `bridge://${bridge.name}`);
          assert.match(parked.getStringProperty(ERROR_REASON) ?? '', /poison.*never take/);
          assert.equal(parked.getIntProperty(ERROR_DELIVERY_COUNT), 1);
          const at = Number(parked.getLongProperty(ERROR_TIME));
          assert.ok(at >= before && at <= Date.now(), `JMS_ErrorTime ${at}`);
          // The broker may hand the parked copy to the reader before its confirm reaches the bridge.
          await errors.until(() => bridge.counters.deadLettered === 1, WAIT_MS);
          assert.equal(bridge.counters.deadLettered, 1);
        },
      );
    },
  );

  brokerTest(
    'one batch holds a poison message and one that needs a retry: the poison is parked, the retried one arrives after its retry, the others reach the target in order (BRG-4, DLV-9, ORD-3)',
    SHORT_TEST_TIMEOUT_MS,
    async (broker) => {
      const id = randomUUID().slice(0, 8);
      const engine = newEngine();
      const endpoint = await factory.endpoint(broker, { partitions: 1 });
      const out = new Collector(engine, `out-${id}`);
      const errors = new Collector(engine, `errors-${id}`);
      const count = 6;
      const name = `conformance-${factory.broker}-${id}-batch`;
      // Into the broker through its sink, batched: seq 1 is poison, seq 2 fails its first send.
      const sink = new ScriptedSink(endpoint.sink(context(`${name}-write`)), (seq, attempt) => {
        if (seq === 1) return new PoisonMessageError('the target will never take this message');
        if (seq === 2 && attempt === 1) return new Error('target briefly unavailable');
        return undefined;
      });
      const reader = new Bridge({
        ...factory.bridge,
        name: `${name}-read`,
        source: endpoint.source(context(`${name}-read`)),
        sink: new InternalSink({ engine, destination: `queue://out-${id}` }),
        reconnect: FAST_RECONNECT,
        stopTimeoutMs: 5_000,
      });
      const writer = new Bridge({
        name: `${name}-write`,
        source: new InternalSource({ engine, destination: `queue://in-${id}` }),
        sink,
        ordering: 'bridge',
        // The first batch waits until it holds every message.
        sendBatch: { maxMessages: count, lingerMs: WAIT_MS },
        retry: { delay: { kind: 'fixed', ms: 50 }, limit: 5 },
        errorDestination: new InternalSink({ engine, destination: `queue://errors-${id}` }),
        reconnect: FAST_RECONNECT,
        stopTimeoutMs: 5_000,
      });
      try {
        await prefill(engine, `in-${id}`, count, 1);
        await withTimeout(reader.start(), WAIT_MS, 'the reading bridge to start');
        await withTimeout(writer.start(), WAIT_MS, 'the writing bridge to start');
        assert.ok(
          await out.until(() => out.distinct.size === count - 1, WAIT_MS),
          `the others reach the target (arrived: ${[...out.distinct].join(', ')}; batches: ${JSON.stringify(sink.batches)})`,
        );
        assert.ok(await errors.until(() => errors.distinct.size === 1, WAIT_MS), 'the poison is parked');
        assert.deepEqual(sink.batches[0], [0, 1, 2, 3, 4, 5], 'one batch held them all');
        assert.deepEqual(
          out.arrivals.map((a) => a.seq),
          [0, 2, 3, 4, 5],
          'in order: nothing behind the retried message overtook it',
        );
        assert.deepEqual(
          sink.attempts.filter((a) => a.seq === 2).map((a) => [a.deliveryCount, a.redelivered]),
          [
            [1, false],
            [2, true],
          ],
          'the retried one went again after its retry delay',
        );
        assert.equal(sink.attempts.filter((a) => a.seq === 1).length, 1, 'poison is not retried');
        assert.equal(errors.arrivals[0]!.message.getIntProperty('seq'), 1);
        assert.equal(
          sink.attempts.filter((a) => a.seq === 3).length,
          1,
          'those behind the retried one were not written before it',
        );
        // The broker may hand a message to the reader before its confirm reaches the writer.
        assert.ok(
          await out.until(() => writer.counters.out === count - 1, WAIT_MS),
          `the writer counts what the target confirmed: ${JSON.stringify(writer.counters)}`,
        );
        assert.equal(writer.counters.deadLettered, 1);
        assert.equal(writer.counters.retried, 1, 'only the failed one counts a retry');
      } finally {
        await writer.stop().catch(() => {});
        await reader.stop().catch(() => {});
        await out.close();
        await errors.close();
        await engine.close();
        await endpoint.cleanup().catch(() => {});
      }
    },
  );

  for (const qos of ['at-least-once', 'exactly-once'] as const) {
    brokerTest(
      `a broker restart in the middle of ${RESTART_FLOW.toLocaleString('en-US')} messages at ${qos}: nothing lost${qos === 'exactly-once' ? ', no duplicate' : ', duplicates counted'} (BRG-2, BRG-5)`,
      RESTART_TEST_TIMEOUT_MS,
      async (broker, t) => {
        const uncontrolled = canControl(factory.broker);
        if (uncontrolled !== undefined) {
          t.skip(uncontrolled); // skip reason: this test may not stop and start that broker (not started by this checkout)
          return;
        }
        const result = await runFlow(factory, broker, {
          count: RESTART_FLOW,
          qos,
          groups: 1,
          readers: 1,
          // The broker's own restart is bounded by broker-control (90 s to answer again).
          timeoutMs: RESTART_TEST_TIMEOUT_MS - 20_000,
          // The second half goes in once the broker is down: it can only cross the restart.
          midway: async (collector, sendRest) => {
            const arrivedBefore = collector.distinct.size;
            const secondHalf = (): number =>
              [...collector.distinct].filter((seq) => seq >= Math.floor(RESTART_FLOW / 2)).length;
            let secondHalfWhileDown = 0;
            const restart = await restartBroker(factory.broker, {
              whileDown: async () => {
                await sendRest();
                await sleep(BROKER_DOWN_MS);
                secondHalfWhileDown = secondHalf();
              },
            });
            return { ...restart, arrivedBefore, secondHalfWhileDown, arrivedAfter: collector.distinct.size };
          },
        });
        t.diagnostic(`restart at ${qos}: ${describe(result)} restart: ${JSON.stringify(result.midway)}`);
        t.diagnostic(`duplicates at ${qos}: ${result.duplicates}`);
        assert.equal(result.lost, 0, `lost: ${describe(result)}`);
        if (qos === 'exactly-once') {
          assert.ok(result.quiet, `still busy when the duplicates were counted: ${describe(result)}`);
          assert.equal(result.duplicates, 0, `duplicates: ${describe(result)}`);
        }
        // The broker was really down: nothing of the second half, sent once it was stopped,
        // arrived before it started again (a client may hide the restart otherwise: kafkajs
        // reconnects by itself, so the bridges' `reconnects` may stay 0).
        const restart = result.midway as { secondHalfWhileDown: number };
        assert.equal(
          restart.secondHalfWhileDown,
          0,
          `messages crossed while the broker was down: ${JSON.stringify(restart)}`,
        );
      },
    );
  }
}
