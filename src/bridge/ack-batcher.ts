/**
 * Acknowledgement batching (BRG-1): what the target confirmed is acknowledged at the source in
 * batches of `batchSize`, at the latest after `batchIntervalMs`, one flush at a time.
 */
import type { Clock } from '../jms/clock.js';

/** What the batcher needs of its bridge. */
export interface AckContext<T> {
  readonly clock: Clock;
  readonly batchSize: number;
  readonly batchIntervalMs: number;
  /** Whether an acknowledgement must go at once (paused, starting or stopping: no batch to wait for). */
  immediate(): boolean;
  /** Acknowledges one delivery at the source and frees its slot; never rejects. */
  acknowledge(item: T): Promise<void>;
}

/** Queues acknowledgements and settles them in batches. */
export class AckBatcher<T> {
  readonly #context: AckContext<T>;
  /** Acknowledgements waiting for the next flush. */
  #queued: T[] = [];
  #timer: unknown;
  /** The flush whose settles are under way, if any. */
  #flushing: Promise<void> | undefined;
  /** The flush that starts when the current one ends, taking every acknowledgement queued by then. */
  #nextFlush: Promise<void> | undefined;

  constructor(context: AckContext<T>) {
    this.#context = context;
  }

  /** Whether acknowledgements wait for a flush. */
  get pending(): boolean {
    return this.#queued.length > 0;
  }

  /** Acknowledges in batches of `batchSize`, at the latest after `batchIntervalMs`. */
  queue(item: T): void {
    const context = this.#context;
    this.#queued.push(item);
    const now =
      this.#queued.length >= context.batchSize || context.batchIntervalMs === 0 || context.immediate();
    if (now) void this.flush();
    else
      this.#timer ??= context.clock.setTimer(() => {
        this.#timer = undefined;
        void this.flush();
      }, context.batchIntervalMs);
  }

  /**
   * Settles the queued acknowledgements; resolves once they (and those of any flush under way)
   * are settled. One flush runs at a time: acknowledgements queued meanwhile wait for it to end
   * and then go together. A source that pays a broker round trip per flush (a Kafka offset commit)
   * then pays it once per round trip, not once per message, however often capacity asks for a
   * flush; one whose settles are cheap (an AMQP basic.ack) loses nothing by waiting.
   */
  flush(): Promise<void> {
    if (this.#timer !== undefined) this.#context.clock.clearTimer(this.#timer);
    this.#timer = undefined;
    const running = this.#flushing;
    if (running === undefined) return this.#startFlush();
    if (this.#queued.length === 0) return this.#nextFlush ?? running;
    return (this.#nextFlush ??= running.then(() => {
      this.#nextFlush = undefined;
      return this.#startFlush();
    }));
  }

  #startFlush(): Promise<void> {
    const batch = this.#queued;
    if (batch.length === 0) return Promise.resolve();
    this.#queued = [];
    // Started together, in order, then awaited: a source can share one broker round trip among a
    // batch (one Kafka offset commit).
    const flushing = Promise.all(batch.map((item) => this.#context.acknowledge(item))).then(() => {
      if (this.#flushing === flushing) this.#flushing = undefined;
    });
    this.#flushing = flushing;
    return flushing;
  }
}
