/**
 * A bridge's settings (BRG-1..5), with their defaults and checks. Field names are what the YAML
 * `bridges:` block uses; `docs/bridges.md` documents them.
 */
import { InvalidArgumentError } from '../jms/errors.js';
import type { Sink, Source } from '../spi/connector.js';
import { type ReconnectPolicy, type RetryDelay, checkReconnectPolicy, checkRetryDelay } from './backoff.js';

/**
 * `at-most-once`: the source is acknowledged before the target send (a failure can lose the
 * message, never duplicate it). `at-least-once`: acknowledged only after the target confirmed (a
 * failure can duplicate, never lose). `exactly-once`: at-least-once plus a duplicate window of
 * JMSMessageIDs (BRG-2; where it ends is in docs/bridges.md).
 */
export type QualityOfService = 'at-most-once' | 'at-least-once' | 'exactly-once';

/**
 * What keeps order (ORD-3, ORD-4): `none` = nothing, every message on its own; `bridge` = one
 * ordering unit for the whole bridge; `key` = one unit per `Delivery.orderingKey` or, when the
 * source gives none, per value of `orderingProperty` (messages with neither are unordered).
 */
export type OrderingMode = 'none' | 'bridge' | 'key';

/** Retrying a message the target did not take (BRG-4, DLV-1, DLV-2). */
export interface RetryPolicy {
  /** Delay before each retry. */
  readonly delay: RetryDelay;
  /** Retries after the first attempt before the message is undeliverable; -1 = no limit. */
  readonly limit: number;
  /**
   * What happens to an undeliverable (or poison) message when there is no error destination:
   * `stall` (default) keeps it unsettled and holds its ordering unit, status `failed`, until
   * `resume()`; `drop` settles it `reject` at the source and counts it in `discarded`.
   */
  readonly onLimit?: 'stall' | 'drop';
}

/**
 * How the runtime groups messages for a sink that takes many at once (`Sink.sendBatch`): a batch
 * holds at most `maxMessages` messages and `maxBytes` bytes (message size as the engine counts
 * it), and goes when `maxMessages` are ready or `lingerMs` after its first message was ready,
 * whichever comes first. `maxMessages: 1`
 * sends one message at a time through `Sink.send`, as a sink without `sendBatch` always is.
 */
export interface SendBatchPolicy {
  /** Default 500. */
  readonly maxMessages?: number;
  /** Default 1 MiB. A message larger than this goes in a batch of its own. */
  readonly maxBytes?: number;
  /** Default 0: a batch goes as soon as the sink can take it, with what is ready by then. */
  readonly lingerMs?: number;
}

/** A bridge's configuration. Only `name`, `source` and `sink` are required. */
export interface BridgeConfig {
  /** Unique name, in logs, status and error-destination properties. */
  readonly name: string;
  readonly source: Source;
  readonly sink: Sink;
  /** Default `at-least-once`. */
  readonly qos?: QualityOfService;
  /**
   * A JMS selector the runtime applies to messages from external sources: non-matching messages
   * are acknowledged and counted in `filtered`. Internal sources take their selector themselves
   * (BRG-3: non-matching queue messages stay), so a bridge selector is refused for them.
   */
  readonly selector?: string;
  /** Default `bridge` (strict source order). */
  readonly ordering?: OrderingMode;
  /** The property naming a message's ordering unit under `ordering: key`. Default `JMSXGroupID` (ORD-4). */
  readonly orderingProperty?: string;
  /** Default: exponential 1 s ×2 up to 60 s, no jitter, no limit. */
  readonly retry?: RetryPolicy;
  /** Where undeliverable and poison messages go (DLV-3, DLV-9): any sink, internal or external. Default none. */
  readonly errorDestination?: Sink;
  /** Source acknowledgements are sent in batches of up to this many (at-least/exactly-once). Default 1. */
  readonly batchSize?: number;
  /** A partial batch of acknowledgements is sent after at most this many ms. Default 0 (at once). */
  readonly batchIntervalMs?: number;
  /** Reconnect delays after a connection loss on either side (BRG-5). Default 15 s ×2 up to 60 s. */
  readonly reconnect?: ReconnectPolicy;
  /** Batches of messages to a sink with `sendBatch`. Default 500 messages, 1 MiB, linger 0. */
  readonly sendBatch?: SendBatchPolicy;
  /** Ordering units that may send at the same time. Default 1. */
  readonly concurrency?: number;
  /**
   * Deliveries read from the source and not yet settled, at most (backpressure). A batch holds
   * only what has been read, so this bounds batches too. Default 1,000: two batches of the
   * default 500, one being sent while the next fills.
   */
  readonly maxInFlight?: number;
  /** Of those, at most this many in one ordering unit. Default: `maxInFlight`. */
  readonly maxInFlightPerUnit?: number;
  /** How long `stop()` lets in-flight messages finish before it gives them back, ms. Default 30,000. */
  readonly stopTimeoutMs?: number;
}

/** A configuration with every default filled in. */
export type ResolvedBridgeConfig = Required<
  Omit<BridgeConfig, 'selector' | 'errorDestination' | 'retry' | 'sendBatch'>
> & {
  readonly sendBatch: Required<SendBatchPolicy>;
  readonly selector: string | undefined;
  readonly errorDestination: Sink | undefined;
  readonly retry: Required<RetryPolicy>;
};

/** The defaults, as documented on each field. */
export const BRIDGE_DEFAULTS = {
  qos: 'at-least-once',
  ordering: 'bridge',
  orderingProperty: 'JMSXGroupID',
  retry: {
    delay: { kind: 'exponential', initialMs: 1_000, multiplier: 2, maxMs: 60_000, jitter: 0 },
    limit: -1,
    onLimit: 'stall',
  },
  batchSize: 1,
  batchIntervalMs: 0,
  reconnect: { minMs: 15_000, increaseFactor: 2, maxMs: 60_000 },
  sendBatch: { maxMessages: 500, maxBytes: 1_048_576, lingerMs: 0 },
  concurrency: 1,
  maxInFlight: 1_000,
  stopTimeoutMs: 30_000,
} as const satisfies Partial<BridgeConfig>;

/** Fills in defaults and checks ranges; throws InvalidArgumentError naming the setting. */
export function resolveBridgeConfig(config: BridgeConfig): ResolvedBridgeConfig {
  if (typeof config.name !== 'string' || config.name.trim() === '')
    throw new InvalidArgumentError('a bridge needs a non-empty name');
  const path = (field: string) => `bridges.${config.name}.${field}`;
  const retry = { ...BRIDGE_DEFAULTS.retry, ...config.retry };
  const maxInFlight = config.maxInFlight ?? BRIDGE_DEFAULTS.maxInFlight;
  const resolved: ResolvedBridgeConfig = {
    name: config.name,
    source: config.source,
    sink: config.sink,
    qos: oneOf(
      config.qos ?? BRIDGE_DEFAULTS.qos,
      ['at-most-once', 'at-least-once', 'exactly-once'],
      path('qos'),
    ),
    selector: config.selector,
    ordering: oneOf(config.ordering ?? BRIDGE_DEFAULTS.ordering, ['none', 'bridge', 'key'], path('ordering')),
    orderingProperty: config.orderingProperty ?? BRIDGE_DEFAULTS.orderingProperty,
    retry: { ...retry, onLimit: oneOf(retry.onLimit, ['stall', 'drop'], path('retry.onLimit')) },
    errorDestination: config.errorDestination,
    batchSize: integer(config.batchSize ?? BRIDGE_DEFAULTS.batchSize, 1, path('batchSize')),
    batchIntervalMs: ms(config.batchIntervalMs ?? BRIDGE_DEFAULTS.batchIntervalMs, path('batchIntervalMs')),
    reconnect: config.reconnect ?? BRIDGE_DEFAULTS.reconnect,
    sendBatch: {
      maxMessages: integer(
        config.sendBatch?.maxMessages ?? BRIDGE_DEFAULTS.sendBatch.maxMessages,
        1,
        path('sendBatch.maxMessages'),
      ),
      maxBytes: integer(
        config.sendBatch?.maxBytes ?? BRIDGE_DEFAULTS.sendBatch.maxBytes,
        1,
        path('sendBatch.maxBytes'),
      ),
      lingerMs: ms(
        config.sendBatch?.lingerMs ?? BRIDGE_DEFAULTS.sendBatch.lingerMs,
        path('sendBatch.lingerMs'),
      ),
    },
    concurrency: integer(config.concurrency ?? BRIDGE_DEFAULTS.concurrency, 1, path('concurrency')),
    maxInFlight: integer(maxInFlight, 1, path('maxInFlight')),
    maxInFlightPerUnit: integer(config.maxInFlightPerUnit ?? maxInFlight, 1, path('maxInFlightPerUnit')),
    stopTimeoutMs: ms(config.stopTimeoutMs ?? BRIDGE_DEFAULTS.stopTimeoutMs, path('stopTimeoutMs')),
  };
  integer(resolved.retry.limit, -1, path('retry.limit'));
  checkRetryDelay(resolved.retry.delay, path('retry.delay'));
  checkReconnectPolicy(resolved.reconnect, path('reconnect'));
  return resolved;
}

function oneOf<T extends string>(value: string, allowed: readonly T[], path: string): T {
  if (!(allowed as readonly string[]).includes(value))
    throw new InvalidArgumentError(
      `bridge setting '${path}' is '${value}' (expected one of ${allowed.map((a) => `'${a}'`).join(', ')})`,
    );
  return value as T;
}

function integer(value: number, minimum: number, path: string): number {
  if (!Number.isInteger(value) || value < minimum)
    throw new InvalidArgumentError(
      `bridge setting '${path}' is ${String(value)} (expected an integer >= ${minimum})`,
    );
  return value;
}

function ms(value: number, path: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new InvalidArgumentError(
      `bridge setting '${path}' is ${String(value)} (expected a number of ms >= 0)`,
    );
  return value;
}
