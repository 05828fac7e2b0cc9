/**
 * Synchronous queries to PostgreSQL, for the parts of the store port that are synchronous: reading
 * a paged-out body back at delivery (PER-4), reading recovered references one at a time, and
 * reading a bridge's duplicate window. The engine calls these from code that cannot wait for a
 * promise, so the query runs in a worker thread with its own connection while this thread blocks
 * on a shared flag (Atomics.wait) and then takes the answer off the port (receiveMessageOnPort).
 * Requests are numbered, so an answer to a request that timed out is never taken for a later one.
 */
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, Worker, receiveMessageOnPort } from 'node:worker_threads';

/** The worker: plain JavaScript, so it runs the same from sources and from the build. */
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const pg = require(workerData.pgPath);
const { port, flag, url } = workerData;
const signal = new Int32Array(flag);
let client;
let connecting;
function connect() {
  if (client) return Promise.resolve(client);
  if (!connecting) {
    const next = new pg.Client({ connectionString: url, application_name: workerData.name, connectionTimeoutMillis: 10000 });
    next.on('error', () => { if (client === next) client = undefined; });
    connecting = next.connect().then(
      () => { client = next; connecting = undefined; return next; },
      (error) => { connecting = undefined; throw error; },
    );
  }
  return connecting;
}
function answer(reply) {
  port.postMessage(reply);
  Atomics.store(signal, 0, reply.n);
  Atomics.notify(signal, 0);
}
port.on('message', async (request) => {
  if (request.end) {
    const ending = client;
    client = undefined;
    if (ending) await ending.end().catch(() => undefined);
    answer({ n: request.n, rows: [] });
    return;
  }
  try {
    const connected = await connect();
    const result = await connected.query({ text: request.sql, values: request.params, rowMode: 'array' });
    answer({ n: request.n, rows: result.rows });
  } catch (error) {
    answer({ n: request.n, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

/** An error PostgreSQL (or the connection) gave a synchronous query. */
export class SyncQueryError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export class PostgresSyncReader {
  readonly #worker: Worker;
  readonly #port: MessagePort;
  readonly #signal: Int32Array;
  readonly #timeoutMs: number;
  #next = 0;
  #closed = false;

  constructor(url: string, name = 'jms-gateway store reader', timeoutMs = 30_000) {
    const flag = new SharedArrayBuffer(4);
    this.#signal = new Int32Array(flag);
    this.#timeoutMs = timeoutMs;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const pgPath = createRequire(import.meta.url).resolve('pg');
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { port: port2, flag, url, pgPath, name },
      transferList: [port2],
      // The worker needs none of the loaders this process may run with.
      execArgv: [],
    });
    // The reader never keeps the process alive by itself: close() ends it, and so does exit.
    this.#worker.unref();
    this.#port.unref();
  }

  /** Runs `sql` and returns its rows as arrays of column values; blocks until the answer is in. */
  query(sql: string, params: readonly unknown[] = []): unknown[][] {
    if (this.#closed) throw new SyncQueryError('the store reader is closed', undefined);
    const reply = this.#request({ sql, params });
    if (reply.error) throw new SyncQueryError(reply.error.message, reply.error.code);
    return reply.rows ?? [];
  }

  /** Ends the worker's connection and the worker. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      this.#request({ end: true }, 5_000);
    } catch {
      // The worker is terminated below either way.
    }
    this.#closed = true;
    this.#port.close();
    await this.#worker.terminate();
  }

  #request(
    body: Record<string, unknown>,
    timeoutMs = this.#timeoutMs,
  ): { n: number; rows?: unknown[][]; error?: { message: string; code?: string } } {
    const n = (this.#next = (this.#next % 0x7ffffffe) + 1);
    this.#port.postMessage({ n, ...body });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      let reply = receiveMessageOnPort(this.#port);
      while (reply) {
        const message = reply.message as {
          n: number;
          rows?: unknown[][];
          error?: { message: string; code?: string };
        };
        if (message.n === n) return message;
        reply = receiveMessageOnPort(this.#port); // an answer to a request that timed out
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new SyncQueryError(`no answer from PostgreSQL within ${timeoutMs} ms`, undefined);
      const seen = Atomics.load(this.#signal, 0);
      if (seen !== n) Atomics.wait(this.#signal, 0, seen, Math.min(left, 1000));
    }
  }
}
