/**
 * Stops and starts the real brokers on this machine, for tests that survive a broker restart
 * (DESIGN.md, Tests: "survive a broker restart"). Only for brokers running locally as processes
 * (not env URLs or containers): RabbitMQ through `rabbitmqctl`, Mosquitto by its pid file,
 * Kafka through `test/helpers/kafka.sh`.
 *
 * {@link restartBroker} always tries to bring the broker back, even when stopping failed halfway,
 * and returns only once the broker answers clients again, or throws after its time bound.
 */
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BrokerKind } from './brokers.js';

const KAFKA_SCRIPT = fileURLToPath(new URL('./kafka.sh', import.meta.url));
const MOSQUITTO_CONFIG = '/etc/mosquitto/mosquitto.conf';
const MOSQUITTO_PID_FILE = '/run/mosquitto/mosquitto.pid';
const PORTS: Record<BrokerKind, number> = { amqp: 5672, mqtt: 1883, kafka: 9092 };
const LOOPBACK = '127.0.0.1';

/** How long a broker may take to answer again after its start command, ms. */
export const BROKER_START_TIMEOUT_MS = 90_000;

/** Runs a command; rejects with its stderr on failure or after `timeoutMs`. */
function run(command: string, args: readonly string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: timeoutMs }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: LOOPBACK, port });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** True when the broker answers a protocol-level request, not only a TCP connect. */
async function answers(kind: BrokerKind): Promise<boolean> {
  if (!(await portOpen(PORTS[kind]))) return false;
  try {
    if (kind === 'amqp') {
      const { connect: amqpConnect } = await import('amqplib');
      const connection = await amqpConnect(`amqp://guest:guest@${LOOPBACK}:${PORTS.amqp}`);
      await connection.close();
    } else if (kind === 'mqtt') {
      const { connectAsync } = await import('mqtt');
      const client = await connectAsync(`mqtt://${LOOPBACK}:${PORTS.mqtt}`, {
        reconnectPeriod: 0,
        connectTimeout: 2_000,
      });
      await client.endAsync();
    } else {
      await run('bash', [KAFKA_SCRIPT, 'status'], 20_000);
    }
    return true;
  } catch {
    return false;
  }
}

/** Waits until the broker answers clients; throws after `timeoutMs`. */
export async function waitUntilAnswers(kind: BrokerKind, timeoutMs = BROKER_START_TIMEOUT_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await answers(kind))) {
    if (Date.now() > deadline) throw new Error(`${kind} broker does not answer after ${timeoutMs} ms`);
    await sleep(250);
  }
}

/** Waits until nothing listens on the broker's port any more. */
async function waitUntilDown(kind: BrokerKind, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await portOpen(PORTS[kind])) {
    if (Date.now() > deadline) throw new Error(`${kind} broker still listens after ${timeoutMs} ms`);
    await sleep(100);
  }
}

async function mosquittoPid(): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(MOSQUITTO_PID_FILE, 'utf8')).trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Stops the broker (leaving its data in place). */
export async function stopBroker(kind: BrokerKind): Promise<void> {
  switch (kind) {
    case 'amqp':
      await run('rabbitmqctl', ['stop_app'], 60_000);
      break;
    case 'mqtt': {
      const pid = await mosquittoPid();
      if (pid === undefined) throw new Error(`no mosquitto pid in ${MOSQUITTO_PID_FILE}`);
      // SIGTERM, not SIGKILL: Mosquitto writes its persistence file (sessions, queued messages) on exit.
      process.kill(pid, 'SIGTERM');
      await waitUntilDown('mqtt', 15_000);
      break;
    }
    case 'kafka':
      await run('bash', [KAFKA_SCRIPT, 'stop'], 60_000);
      await waitUntilDown('kafka', 30_000);
      break;
  }
}

/** Starts the broker and waits until it answers clients. */
export async function startBroker(kind: BrokerKind): Promise<void> {
  switch (kind) {
    case 'amqp':
      await run('rabbitmqctl', ['start_app'], BROKER_START_TIMEOUT_MS);
      break;
    case 'mqtt':
      if (!(await portOpen(PORTS.mqtt))) await run('mosquitto', ['-d', '-c', MOSQUITTO_CONFIG], 15_000);
      break;
    case 'kafka':
      // `start` is a no-op when the port answers; it keeps the data of an earlier run only through
      // `restart`, so a stopped broker is brought back with `restart` (stop is then a no-op).
      await run('bash', [KAFKA_SCRIPT, 'restart'], BROKER_START_TIMEOUT_MS + 30_000);
      break;
  }
  await waitUntilAnswers(kind);
}

/** What {@link restartBroker} does between the stop and the start. */
export interface RestartOptions {
  /** How long the broker stays down once stopped, ms (without `whileDown`). */
  readonly downMs?: number;
  /** Runs once the broker is down; the broker stays down until it resolves, instead of `downMs`. */
  readonly whileDown?: () => Promise<unknown>;
}

/**
 * Stops the broker, keeps it down (for `downMs`, or while `whileDown` runs), and starts it again.
 * The start is in a `finally`: whatever failed while stopping, the broker is brought back before
 * this returns or throws.
 */
export async function restartBroker(
  kind: BrokerKind,
  { downMs = 1_000, whileDown }: RestartOptions = {},
): Promise<{ downMs: number }> {
  const stoppedAt = Date.now();
  try {
    await stopBroker(kind);
    if (whileDown) await whileDown();
    else await sleep(downMs);
  } finally {
    await startBroker(kind);
  }
  return { downMs: Date.now() - stoppedAt };
}

const LOCAL_BROKERS: Record<BrokerKind, { env: string; port: string }> = {
  amqp: { env: 'AMQP_URL', port: '5672' },
  mqtt: { env: 'MQTT_URL', port: '1883' },
  kafka: { env: 'KAFKA_BROKERS', port: '9092' },
};

/**
 * Undefined when this machine runs the broker as a local process on its default loopback port,
 * so {@link restartBroker} can restart it; otherwise the reason it cannot.
 */
export function canControl(kind: BrokerKind): string | undefined {
  const { env, port } = LOCAL_BROKERS[kind];
  if (kind === 'kafka' && !kafkaStartedHere()) {
    return 'Kafka on 127.0.0.1:9092 was not started by test/helpers/kafka.sh from this checkout (no live pid in .kafka/kafka.pid), so it cannot be restarted from here';
  }
  const address = process.env[env];
  if (!address) return undefined;
  const first = address.split(',')[0]!.trim();
  let host: string;
  let actualPort: string;
  try {
    const url = new URL(first.includes('://') ? first : `tcp://${first}`);
    host = url.hostname;
    actualPort = url.port;
  } catch {
    return `${env} '${first}' cannot be read as an address`;
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(host);
  if (!loopback || actualPort !== port) {
    return `${env} points at ${host}:${actualPort}, not this machine's broker on 127.0.0.1:${port}: it cannot be restarted from here`;
  }
  return undefined;
}

/** Whether test/helpers/kafka.sh of this checkout started the Kafka broker that runs now (its restart needs that). */
function kafkaStartedHere(): boolean {
  const stateDir = process.env.KAFKA_STATE_DIR ?? fileURLToPath(new URL('../../.kafka', import.meta.url));
  try {
    const pid = readFileSync(`${stateDir}/kafka.pid`, 'utf8').trim();
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('kafka.Kafka');
  } catch {
    return false;
  }
}
