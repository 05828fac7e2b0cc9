/**
 * The measurement the sink benchmarks share: one sink's `send`, one message at a time, against its
 * `sendBatch`, handed batches of {@link BATCH} 1 KB messages as the bridge runtime hands them over.
 */
import { resolveConfig, TextMessage, type ConnectorDefinition, type Sink } from '../src/spi/index.js';
import { best, type BenchRow } from './lib.js';

/** Messages a batch holds. */
export const BATCH = 200;
/** The body of every message: 1 KB. */
export const BODY = 'x'.repeat(1024);

/** The connector's configuration resolved from `fields`, defaults applied; throws what is wrong. */
export function resolvedConfig<C>(definition: ConnectorDefinition<C>, fields: Record<string, unknown>): C {
  const { config, errors } = resolveConfig(definition.config, fields, 'endpoint');
  if (config === undefined) throw new Error(errors.map((error) => error.message).join('; '));
  return config;
}

function messages(count: number): TextMessage[] {
  return Array.from({ length: count }, () => new TextMessage(BODY));
}

async function oneAtATime(sink: Sink, count: number, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  for (const message of messages(count)) await sink.send(message, signal);
}

/** Hands batches over keeping up to `maxBatchesInFlight` in flight, as the bridge runtime does. */
async function batched(sink: Sink, count: number, timeoutMs: number): Promise<void> {
  const signal = AbortSignal.timeout(timeoutMs);
  const all = messages(count);
  const inFlight = new Set<Promise<void>>();
  for (let start = 0; start < count; start += BATCH) {
    while (inFlight.size >= (sink.maxBatchesInFlight ?? 1)) await Promise.race(inFlight);
    const sending: Promise<void> = sink.sendBatch!(all.slice(start, start + BATCH), signal).then(
      (results) => {
        inFlight.delete(sending);
        const failed = results.find((result) => !result.ok);
        if (failed !== undefined && !failed.ok) throw failed.error;
      },
    );
    inFlight.add(sending);
  }
  await Promise.all(inFlight);
}

/** How many messages {@link sendVsSendBatch} sends each way, and how long it waits. */
export interface SendsOptions {
  /** Messages sent one at a time, per run. */
  readonly single: number;
  /** Messages sent in batches, per run. */
  readonly batched: number;
  readonly connectTimeoutMs: number;
  /** How long one run may take before its sends are aborted. */
  readonly runTimeoutMs: number;
}

/**
 * Connects `sink`, measures `send` one at a time and then `sendBatch` (best of two runs each,
 * every result ok), and closes it: a row for each, the batch row with its speedup over `send`.
 */
export async function sendVsSendBatch(label: string, sink: Sink, options: SendsOptions): Promise<BenchRow[]> {
  const { single, connectTimeoutMs, runTimeoutMs } = options;
  await sink.connect(AbortSignal.timeout(connectTimeoutMs));
  try {
    const one = await best(`${label} send`, single, () => oneAtATime(sink, single, runTimeoutMs), 2);
    const batch = await best(
      `${label} sendBatch`,
      options.batched,
      () => batched(sink, options.batched, runTimeoutMs),
      2,
    );
    return [one, { ...batch, speedup: Math.round((batch.rate / one.rate) * 10) / 10 }];
  } finally {
    await sink.close();
  }
}
