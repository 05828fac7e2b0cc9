/**
 * Opening an AMQP connection and telling the runtime what a broker error means: a connection
 * that is down (reconnect with backoff) or an endpoint that is misconfigured (an operator must act).
 */
import { connect, type ChannelModel } from 'amqplib';
import {
  EndpointConfigurationError,
  NotConnectedError,
  type ConnectorContext,
  untilAborted,
} from '../../src/spi/index.js';
import type { AmqpConfig } from './spec.js';

/** AMQP reply codes that mean the endpoint's configuration is wrong, not that the broker is away. */
const CONFIGURATION_CODES = new Map([
  [403, 'access refused'],
  [404, 'not found'],
  [406, 'precondition failed'],
  [530, 'not allowed'],
]);

/** The AMQP reply code of an amqplib error, if it has one (in `code` or in its message). */
export function replyCode(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'number') return code;
  const match = /\b(\d{3}) \([A-Z_-]+\)/.exec(String((error as { message?: unknown }).message));
  return match ? Number(match[1]) : undefined;
}

/**
 * The runtime's view of an amqplib error: EndpointConfigurationError for access refused, not
 * found, precondition failed (a queue declared with other arguments) and not allowed (no such
 * vhost); NotConnectedError for everything else (refused, reset, timed out, closed). The message
 * never includes the URL, which holds credentials.
 */
export function classify(error: unknown, what: string): NotConnectedError | EndpointConfigurationError {
  if (error instanceof NotConnectedError || error instanceof EndpointConfigurationError) return error;
  const code = replyCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  if (code !== undefined && CONFIGURATION_CODES.has(code)) {
    return new EndpointConfigurationError(`${what}: ${CONFIGURATION_CODES.get(code)} (${detail})`, {
      cause: error,
    });
  }
  return new NotConnectedError(`${what}: ${detail}`, { cause: error });
}

/**
 * The user a connection to `url` authenticates as, as amqplib decides it: the URL's user name,
 * or `guest` when the URL names neither user nor password.
 */
export function connectionUser(url: string): string {
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return 'guest';
  try {
    return decodeURIComponent(parsed.username);
  } catch {
    return parsed.username;
  }
}

/** Opens a connection with the endpoint's heartbeat and timeout; closes it if `signal` aborts first. */
export async function openConnection(
  config: AmqpConfig,
  context: ConnectorContext,
  role: 'source' | 'sink',
  signal: AbortSignal,
): Promise<ChannelModel> {
  const url = new URL(config.url);
  if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(config.heartbeat));
  const opening = connect(url.toString(), {
    timeout: config.connectTimeout,
    clientProperties: { connection_name: `jms-gateway ${context.name} ${role}` },
  });
  try {
    return await untilAborted(opening, signal);
  } catch (error) {
    if (signal.aborted) {
      opening.then((connection) => connection.close()).catch(() => {});
      throw error;
    }
    throw classify(error, `cannot connect to the AMQP broker at ${url.host}`);
  }
}

/** The part of a net.Socket that {@link writeCoalescer} uses. */
interface Corkable {
  cork(): void;
  uncork(): void;
  prependListener(event: 'drain', listener: () => void): unknown;
}

/**
 * Makes the frames amqplib writes at one time go to the socket in one write. amqplib writes each
 * frame (method, header, body) with its own `socket.write`: from a setImmediate that its channel
 * stream's 'readable' event (emitted on the next tick) schedules, and, once the socket's buffer
 * was full, from its 'drain' handler. A socket that is not corked makes each of those writes a
 * system call, which took 9% of a bridge's CPU at 10,000 messages/s. So the socket is corked
 * while amqplib writes, and uncorked once it is done, the frames leaving in one writev in the
 * order amqplib wrote them:
 * - after a publish (the returned function, called after each): corked once per turn, uncorked
 *   in an immediate scheduled behind amqplib's (a tick queued after the 'readable' one schedules
 *   it; immediates run in the order scheduled);
 * - on 'drain': corked by a listener that runs before amqplib's, uncorked on the next tick,
 *   since amqplib's handler writes synchronously.
 * Without a socket to reach (an amqplib that no longer exposes `connection.stream`), it does nothing.
 */
export function writeCoalescer(connection: ChannelModel): () => void {
  const socket = (connection as unknown as { connection?: { stream?: Partial<Corkable> } }).connection
    ?.stream;
  if (
    typeof socket?.cork !== 'function' ||
    typeof socket.uncork !== 'function' ||
    typeof socket.prependListener !== 'function'
  )
    return () => {};
  const corkable = socket as Corkable;
  const uncork = (): void => corkable.uncork();
  corkable.prependListener('drain', () => {
    corkable.cork();
    process.nextTick(uncork);
  });
  let corkedThisTurn = false;
  const uncorkTurn = (): void => {
    corkedThisTurn = false;
    corkable.uncork();
  };
  const uncorkAfterMux = (): void => {
    setImmediate(uncorkTurn);
  };
  return () => {
    if (corkedThisTurn) return;
    corkedThisTurn = true;
    corkable.cork();
    process.nextTick(uncorkAfterMux);
  };
}
