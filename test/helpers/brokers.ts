/**
 * Finds the real brokers integration tests run against (DESIGN.md, Tests):
 *
 * 1. the environment: `AMQP_URL`, `MQTT_URL`, `KAFKA_BROKERS` (comma-separated host:port), trusted as is;
 * 2. else a broker answering on the loopback default port (5672, 1883, 9092);
 * 3. else, when a Docker engine is reachable, a container started with testcontainers (stopped
 *    after the test file, and by testcontainers' reaper if the process dies);
 * 4. else the broker is missing: the test is skipped with the reason and the fix, or, with
 *    `REQUIRE_BROKERS=1` (set by `.ci/run`), the test fails.
 *
 * Usage, the simple way:
 *
 * ```ts
 * brokerTest('amqp', 'amqp broker - ...', async ({ url }) => { ... });
 * ```
 *
 * or, to decide at load time (top-level await in the test file):
 *
 * ```ts
 * const amqp = await amqpBroker();
 * test('amqp broker - ...', { skip: amqp.skip }, async () => { const { url } = connected(amqp); ... });
 * ```
 *
 * Each kind is looked up once per process (a test file), so all its tests share one broker.
 */
import { after, test } from 'node:test';
import type { TestContext, TestOptions } from 'node:test';
import { connect, createServer } from 'node:net';
import type { StartedTestContainer } from 'testcontainers';

/** The broker kinds the connectors bridge to. */
export type BrokerKind = 'amqp' | 'mqtt' | 'kafka';

/** Where a broker came from, for diagnostics. */
export type BrokerOrigin = 'env' | 'loopback' | 'container';

/** A reachable RabbitMQ (AMQP 0-9-1) or Mosquitto (MQTT) broker. */
export interface UrlBroker {
  /** Connection URL, e.g. `amqp://guest:guest@127.0.0.1:5672` or `mqtt://127.0.0.1:1883`. */
  readonly url: string;
  readonly origin: BrokerOrigin;
  readonly skip: false;
}

/** A reachable Kafka cluster. */
export interface KafkaBroker {
  /** Bootstrap servers as `host:port`, ready for `new Kafka({ brokers })`. */
  readonly brokers: string[];
  readonly origin: BrokerOrigin;
  readonly skip: false;
}

/** No broker of this kind: `skip` says why and how to fix it (usable as node:test's `skip` option). */
export interface MissingBroker {
  readonly skip: string;
}

/** The connection info per broker kind. */
export interface BrokerOf {
  amqp: UrlBroker;
  mqtt: UrlBroker;
  kafka: KafkaBroker;
}

/** A broker lookup result: connection info, or the reason it is missing. */
export type BrokerResult<K extends BrokerKind> = BrokerOf[K] | MissingBroker;

type Address<K extends BrokerKind> = Omit<BrokerOf[K], 'origin' | 'skip'>;

interface BrokerSpec<K extends BrokerKind> {
  readonly name: string;
  readonly env: string;
  readonly port: number;
  readonly fix: string;
  fromEnv(value: string): Address<K>;
  atAddress(host: string, port: number): Address<K>;
  startContainer(host: string): Promise<{ container: StartedTestContainer; port: number }>;
}

const LOOPBACK = '127.0.0.1';
const PROBE_TIMEOUT_MS = 500;
const DOCKER_PROBE_TIMEOUT_MS = 5_000;
const CONTAINER_STARTUP_TIMEOUT_MS = 120_000;
const KAFKA_IMAGE = 'apache/kafka:4.1.1';

const specs: { [K in BrokerKind]: BrokerSpec<K> } = {
  amqp: {
    name: 'RabbitMQ',
    env: 'AMQP_URL',
    port: 5672,
    fix: 'start it with `rabbitmq-server -detached`, or set AMQP_URL=amqp://user:pass@host:5672',
    fromEnv: (url) => ({ url }),
    atAddress: (host, port) => ({ url: `amqp://guest:guest@${host}:${port}` }),
    startContainer: async () => {
      const { GenericContainer, Wait } = await import('testcontainers');
      const container = await new GenericContainer('rabbitmq:3-management')
        .withExposedPorts(5672)
        .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
        .withStartupTimeout(CONTAINER_STARTUP_TIMEOUT_MS)
        .start();
      return { container, port: container.getMappedPort(5672) };
    },
  },
  mqtt: {
    name: 'Mosquitto',
    env: 'MQTT_URL',
    port: 1883,
    fix: 'start it with `mosquitto -d -c /etc/mosquitto/mosquitto.conf`, or set MQTT_URL=mqtt://host:1883',
    fromEnv: (url) => ({ url }),
    atAddress: (host, port) => ({ url: `mqtt://${host}:${port}` }),
    startContainer: async () => {
      const { GenericContainer, Wait } = await import('testcontainers');
      // Mosquitto 2 listens on the container's loopback only unless configured otherwise.
      const container = await new GenericContainer('eclipse-mosquitto:2')
        .withExposedPorts(1883)
        .withCopyContentToContainer([
          { content: 'listener 1883\nallow_anonymous true\n', target: '/mosquitto/config/mosquitto.conf' },
        ])
        .withWaitStrategy(Wait.forLogMessage(/mosquitto version .* running/))
        .withStartupTimeout(CONTAINER_STARTUP_TIMEOUT_MS)
        .start();
      return { container, port: container.getMappedPort(1883) };
    },
  },
  kafka: {
    name: 'Kafka',
    env: 'KAFKA_BROKERS',
    port: 9092,
    fix: 'start it with `bash test/helpers/kafka.sh start`, or set KAFKA_BROKERS=host:9092',
    fromEnv: (value) => ({
      brokers: value
        .split(',')
        .map((broker) => broker.trim())
        .filter((broker) => broker !== ''),
    }),
    atAddress: (host, port) => ({ brokers: [`${host}:${port}`] }),
    startContainer: async (host) => {
      const { GenericContainer, Wait } = await import('testcontainers');
      // Kafka hands clients its advertised address, so the host port must be known before start.
      const port = await freePort();
      const container = await new GenericContainer(KAFKA_IMAGE)
        .withExposedPorts({ container: 9092, host: port })
        .withEnvironment({
          KAFKA_NODE_ID: '1',
          KAFKA_PROCESS_ROLES: 'broker,controller',
          KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
          KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://${host}:${port}`,
          KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
          KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
          KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
          KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
          KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
          KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
          KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
        })
        .withWaitStrategy(Wait.forLogMessage(/Kafka Server started/))
        .withStartupTimeout(CONTAINER_STARTUP_TIMEOUT_MS)
        .start();
      return { container, port };
    },
  },
};

const lookups = new Map<BrokerKind, Promise<BrokerResult<BrokerKind>>>();
const containers: StartedTestContainer[] = [];

// Registered while the test file loads, so it belongs to the file's root and runs after all of
// its tests (a hook registered inside a test would stop a shared container after that one test).
after(async () => {
  await Promise.allSettled(containers.splice(0).map((container) => container.stop()));
});

/** RabbitMQ for AMQP 0-9-1 tests; see the module comment for where it comes from. */
export function amqpBroker(): Promise<BrokerResult<'amqp'>> {
  return findBroker('amqp');
}

/** Mosquitto for MQTT tests; see the module comment for where it comes from. */
export function mqttBroker(): Promise<BrokerResult<'mqtt'>> {
  return findBroker('mqtt');
}

/** Kafka for Kafka tests; see the module comment for where it comes from. */
export function kafkaBroker(): Promise<BrokerResult<'kafka'>> {
  return findBroker('kafka');
}

/**
 * The broker of `kind`, looked up once per process. Rejects when it is missing and
 * `REQUIRE_BROKERS=1`, so a CI run without its brokers fails instead of passing on skips.
 */
export async function findBroker<K extends BrokerKind>(kind: K): Promise<BrokerResult<K>> {
  let lookup = lookups.get(kind);
  if (lookup === undefined) {
    lookup = lookUp(kind);
    lookups.set(kind, lookup);
  }
  const result = (await lookup) as BrokerResult<K>;
  if (result.skip !== false && process.env['REQUIRE_BROKERS'] === '1') {
    throw new Error(`${result.skip} (REQUIRE_BROKERS=1: a missing broker fails the test)`);
  }
  return result;
}

/** Narrows a lookup result to the connection info; throws the skip reason if the broker is missing. */
export function connected<K extends BrokerKind>(result: BrokerResult<K>): BrokerOf[K] {
  if (result.skip !== false) throw new Error(result.skip);
  return result;
}

/**
 * node:test's `test(name, options, fn)` for a test that needs a broker of `kind`: `fn` gets the
 * connection info; a missing broker skips the test with the reason, or fails it with `REQUIRE_BROKERS=1`.
 */
export function brokerTest<K extends BrokerKind>(
  kind: K,
  name: string,
  fn: (broker: BrokerOf[K], t: TestContext) => Promise<void>,
  options: TestOptions = {},
): void {
  void test(name, options, async (t) => {
    const result = await findBroker(kind);
    if (result.skip !== false) {
      t.skip(result.skip);
      return;
    }
    await fn(result, t);
  });
}

async function lookUp<K extends BrokerKind>(kind: K): Promise<BrokerResult<K>> {
  const spec: BrokerSpec<K> = specs[kind];
  const fromEnv = process.env[spec.env];
  if (fromEnv !== undefined && fromEnv !== '') {
    return { ...spec.fromEnv(fromEnv), origin: 'env', skip: false } as BrokerOf[K];
  }
  if (await answers(LOOPBACK, spec.port)) {
    return { ...spec.atAddress(LOOPBACK, spec.port), origin: 'loopback', skip: false } as BrokerOf[K];
  }
  const unreachable = `${spec.name} not reachable at ${LOOPBACK}:${spec.port}`;
  const dockerHost = await dockerEngineHost();
  if (dockerHost === undefined) {
    return missing(`${unreachable} and no Docker engine for testcontainers: ${spec.fix}`);
  }
  try {
    const { container, port } = await spec.startContainer(dockerHost);
    containers.push(container);
    return { ...spec.atAddress(dockerHost, port), origin: 'container', skip: false } as BrokerOf[K];
  } catch (error) {
    return missing(`${unreachable} and its container did not start (${String(error)}): ${spec.fix}`);
  }
}

function missing(reason: string): MissingBroker {
  // Loud on stderr as well: a skipped integration test is easy to overlook in a green run.
  console.warn(`[brokers] ${reason}`);
  return { skip: reason };
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The host where containers' ports are published, or undefined without a usable Docker engine. */
async function dockerEngineHost(): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    const timeout = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), DOCKER_PROBE_TIMEOUT_MS);
    });
    const client = await Promise.race([getContainerRuntimeClient(), timeout]);
    return client?.info.containerRuntime.host;
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not pick a free port'));
      });
    });
  });
}
