/**
 * Batches for a sink that takes many messages at once (`Sink.sendBatch`): ordering units that are
 * sending join the open batch, and when it goes each gives what it has ready, in order, up to
 * the room left (`maxMessages`, `maxBytes`). A batch goes when what its units have ready fills
 * `maxMessages`, or `lingerMs` after its first unit joined (0: once the current turn's work is done, so the units started
 * together share it), and only while fewer than the sink's `maxBatchesInFlight` are being sent;
 * while none can go, the open batch keeps filling, as the Java producer's does.
 *
 * A unit joins once per batch. To a sink taking one batch at a time it waits for its results
 * before it gives more; to one taking several it may join the next batch while its last is in
 * flight, relying on the sink's ordering rule (a later message behind a failure on the same
 * target stream comes back failed, never overtaking the retry), and stops at its first failure
 * (ORD-3, see the bridge's `#attemptBatch`). Units sharing one batch are independent of
 * each other; the sink's ordering rule reports a unit's messages that come after another unit's
 * failure on the same target stream as `BehindFailureError`, which the bridge sends again
 * without counting.
 */
import type { Clock } from '../jms/clock.js';
import type { Message } from '../jms/message/message.js';
import type { SendResult } from '../spi/connector.js';

/** What a batch needs of its sink. */
export interface BatchTarget {
  sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]>;
  /** How many batches the sink takes at once; default 1. */
  readonly maxBatchesInFlight?: number;
}

/** One unit's part in a batch. */
export interface Contributor {
  /** Messages it could give now (for "the batch is full"). */
  ready(): number;
  /**
   * Whether it gives messages that went before (a retry, a re-send after a lost connection): they
   * waited already, so the batch goes without lingering, as the Java producer sends a retried
   * batch at once.
   */
  urgent(): boolean;
  /**
   * Its messages for the batch, in order: at most `maxCount`, and within `maxBytes` unless the
   * batch is still empty (a message larger than the batch limit goes alone). Empty when nothing
   * fits: the unit then waits for the next batch.
   */
  take(maxCount: number, maxBytes: number, batchEmpty: boolean): readonly Message[];
}

/** What the pipeline needs of its bridge. */
export interface BatchPipelineContext {
  readonly clock: Clock;
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly lingerMs: number;
  /** The sink, as it is now (its `maxBatchesInFlight` may change at a reconnect). */
  target(): BatchTarget;
  /** The bridge's life: a batch sent is aborted with it. */
  signal(): AbortSignal;
  /** The size a message counts for against `maxBytes`. */
  sizeOf(message: Message): number;
}

interface Joined {
  readonly contributor: Contributor;
  resolve(results: readonly SendResult[]): void;
}

/** The batches of one bridge. */
export class BatchPipeline {
  readonly #context: BatchPipelineContext;
  #joined: Joined[] = [];
  #inFlight = 0;
  /** The open batch has lingered long enough: it goes as soon as a batch may be in flight. */
  #due = false;
  #timer: unknown;
  #immediate: NodeJS.Immediate | undefined;
  /** Batches sent, for tests and status. */
  batchesSent = 0;

  constructor(context: BatchPipelineContext) {
    this.#context = context;
  }

  /** Batches being sent now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Joins the open batch; resolves with one result per message `contributor` gave, in order,
   * once the sink answered. Resolves with nothing when {@link cancel} ends the wait.
   */
  join(contributor: Contributor): Promise<{ messages: readonly Message[]; results: readonly SendResult[] }> {
    return new Promise((resolve) => {
      let taken: readonly Message[] = [];
      const joined: Joined = {
        contributor: {
          ready: () => contributor.ready(),
          urgent: () => contributor.urgent(),
          take: (maxCount, maxBytes, batchEmpty) =>
            (taken = contributor.take(maxCount, maxBytes, batchEmpty)),
        },
        resolve: (results) => resolve({ messages: taken, results }),
      };
      this.#joined.push(joined);
      if (contributor.urgent() && this.#immediate === undefined) {
        // At once, but not in this turn: a sink's ordering rule treats a batch begun in the turn
        // its failure was reported in as behind that failure.
        this.#clearLinger();
        this.#startLinger(0);
      }
      if (!this.#due && this.#timer === undefined && this.#immediate === undefined) this.#startLinger();
      this.poke();
    });
  }

  /** A unit has more ready: the open batch may be full now. */
  poke(): void {
    if (this.#joined.length === 0) return;
    if (this.#due || this.#readyCount() >= this.#context.maxMessages) this.#sendWhileRoom();
  }

  /** Stop: waiting units get no results (empty), timers end. Batches being sent end with the bridge's signal. */
  cancel(): void {
    this.#clearLinger();
    this.#due = false;
    for (const joined of this.#joined.splice(0)) joined.resolve([]);
  }

  /** What the units joined have ready, counted up to `maxMessages` (all "full" needs). */
  #readyCount(): number {
    let count = 0;
    for (const joined of this.#joined) {
      count += joined.contributor.ready();
      if (count >= this.#context.maxMessages) break;
    }
    return count;
  }

  #startLinger(lingerMs = this.#context.lingerMs): void {
    const lingered = () => {
      this.#timer = undefined;
      this.#immediate = undefined;
      this.#due = true;
      this.#sendWhileRoom();
    };
    if (lingerMs === 0) this.#immediate = setImmediate(lingered);
    else this.#timer = this.#context.clock.setTimer(lingered, lingerMs);
  }

  #clearLinger(): void {
    if (this.#timer !== undefined) this.#context.clock.clearTimer(this.#timer);
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
  }

  #sendWhileRoom(): void {
    const target = this.#context.target();
    const maxInFlight = Math.max(1, target.maxBatchesInFlight ?? 1);
    while (this.#joined.length > 0 && this.#inFlight < maxInFlight) {
      if (!this.#due && this.#readyCount() < this.#context.maxMessages) return;
      this.#clearLinger();
      this.#sendOne(target);
      // Units left out for want of room have waited their linger already.
      this.#due = this.#joined.length > 0;
    }
  }

  /** Forms one batch from the units in the order they joined and sends it. */
  #sendOne(target: BatchTarget): void {
    const batch: Message[] = [];
    const parts: { joined: Joined; start: number; count: number }[] = [];
    const left: Joined[] = [];
    let bytes = 0;
    for (const joined of this.#joined) {
      const room = this.#context.maxMessages - batch.length;
      const messages =
        room > 0 ? joined.contributor.take(room, this.#context.maxBytes - bytes, batch.length === 0) : [];
      if (messages.length === 0) {
        // Nothing at all to give (its messages went meanwhile): it goes on without a batch.
        if (batch.length === 0) joined.resolve([]);
        else left.push(joined);
        continue;
      }
      parts.push({ joined, start: batch.length, count: messages.length });
      for (const message of messages) {
        batch.push(message);
        bytes += this.#context.sizeOf(message);
      }
    }
    this.#joined = left;
    if (batch.length === 0) return;
    this.#inFlight++;
    this.batchesSent++;
    void this.#send(target, batch).then((results) => {
      this.#inFlight--;
      for (const part of parts) part.joined.resolve(results.slice(part.start, part.start + part.count));
      this.#sendWhileRoom();
    });
  }

  /** The sink's results, one per message; a batch the sink refused whole fails every message. */
  async #send(target: BatchTarget, batch: readonly Message[]): Promise<readonly SendResult[]> {
    try {
      const results = await target.sendBatch(batch, this.#context.signal());
      if (results.length !== batch.length)
        throw new Error(`the sink answered ${results.length} results for a batch of ${batch.length}`);
      return results;
    } catch (error) {
      const failure = error instanceof Error ? error : new Error(String(error));
      return batch.map(() => ({ ok: false, error: failure }));
    }
  }
}
