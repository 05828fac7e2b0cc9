/**
 * The ordering rule of {@link Sink.sendBatch}, in one place so every sink applies it alike: once
 * a message fails with anything but a poison error, every later message to the same target stream
 * (of its batch, and of the batches handed over before the runtime could know of the failure) is
 * reported failed too, so the runtime's retry of the failed message never lands behind a later one
 * (ORD-3). A sink writes its batches as it likes (pipelined, in a window), then hands each batch's
 * raw per-message results to {@link OrderedBatches}; results come back in the order the batches
 * began, with the rule applied.
 *
 * A later message that was itself refused keeps its own error (poison stays poison: it never
 * lands, so it cannot overtake); one that went through is reported as a {@link BehindFailureError},
 * which the runtime retries like a back-off: the message is not at fault, so the attempt does not
 * count toward its limit. Its copy at the target is a duplicate once it is sent again, as
 * at-least-once allows.
 *
 * "Before the runtime could know": a failure taints every batch begun before the failing batch's
 * results are delivered, and every batch begun in the same turn of the event loop after that
 * (the runtime's own continuations run in it and may hand over a batch formed before it read the
 * results). A batch begun later is written after the runtime saw the failure, so it is its own.
 */
import type { Message } from '../jms/message/message.js';
import type { SendResult } from './connector.js';
import { BackOffError, isPoison } from './errors.js';

/** A later message reported failed because one before it on the same target stream failed. */
export class BehindFailureError extends BackOffError {
  constructor(
    /** The failure that came first. */
    readonly failure: Error,
  ) {
    super(
      `not confirmed in order: a message before it on the same target failed (${failure.message})`,
      undefined,
      {
        cause: failure,
      },
    );
  }
}

/** One batch's place in line, from {@link OrderedBatches.begin}. */
export interface BatchTurn {
  /**
   * Applies the rule to the batch's raw results (one per message, in batch order) and resolves
   * them once every batch begun before this one has finished. `streamOf(i)` names the target
   * stream of message `i` (a Kafka partition); absent, the whole sink is one stream.
   */
  finish(results: readonly SendResult[], streamOf?: (index: number) => string): Promise<SendResult[]>;
}

interface Turn {
  readonly seq: number;
  results?: readonly SendResult[];
  streamOf?: ((index: number) => string) | undefined;
  resolve?: (results: Promise<SendResult[]>) => void;
}

/** A failure that taints the batches up to `through` on one stream. */
interface Taint {
  readonly failure: Error;
  /** The last batch (by sequence) it taints; grows while `open`. */
  through: number;
  /** Until the turn of the event loop after the failure was delivered, new batches are tainted too. */
  open: boolean;
}

/** Ordering state of one sink connection: make a new one when the sink reconnects. */
export class OrderedBatches {
  #nextSeq = 0;
  #nextToRelease = 0;
  readonly #turns = new Map<number, Turn>();
  readonly #taints = new Map<string, Taint>();
  #delivered: Promise<SendResult[]> = Promise.resolve([]);

  /** Takes the next place in line: call it when a batch is handed over, before writing any of it. */
  begin(): BatchTurn {
    const seq = this.#nextSeq++;
    for (const taint of this.#taints.values()) if (taint.open) taint.through = seq;
    const turn: Turn = { seq };
    this.#turns.set(seq, turn);
    return {
      finish: (results, streamOf) =>
        new Promise<SendResult[]>((resolve) => {
          if (turn.results !== undefined) throw new Error('a batch turn finishes once');
          turn.results = results;
          turn.streamOf = streamOf;
          turn.resolve = resolve;
          this.#release();
        }),
    };
  }

  /** Releases finished batches in order while the oldest one is finished. */
  #release(): void {
    let released = false;
    for (;;) {
      const turn = this.#turns.get(this.#nextToRelease);
      if (turn?.results === undefined) break;
      this.#turns.delete(turn.seq);
      this.#nextToRelease++;
      // Each batch's results settle after the one before's, so their readers run in that order too.
      const results = this.#apply(turn);
      this.#delivered = this.#delivered.then(() => results);
      turn.resolve!(this.#delivered);
      released = true;
    }
    if (released) this.#closeTaintsLater();
  }

  #apply(turn: Turn): SendResult[] {
    const results = turn.results!;
    const out: SendResult[] = [];
    for (let i = 0; i < results.length; i++) {
      const stream = turn.streamOf?.(i) ?? '';
      const result = results[i]!;
      let taint = this.#taints.get(stream);
      if (taint !== undefined && taint.through < turn.seq) {
        this.#taints.delete(stream);
        taint = undefined;
      }
      if (taint !== undefined) {
        out.push(result.ok ? { ok: false, error: new BehindFailureError(taint.failure) } : result);
        continue;
      }
      out.push(result);
      if (!result.ok && !isPoison(result.error))
        this.#taints.set(stream, { failure: result.error, through: this.#nextSeq - 1, open: true });
    }
    return out;
  }

  #closeTaintsLater(): void {
    const open = [...this.#taints.values()].filter((taint) => taint.open);
    if (open.length === 0) return;
    setImmediate(() => {
      for (const taint of open) taint.open = false;
    });
  }
}

/** What a sink connection keeps to write its batches with {@link writeBatchInTurn}. */
export interface BatchLane {
  /** Applies the ordering rule to the connection's batches. */
  readonly ordered: OrderedBatches;
  /** Resolves when the batch before has been written: batches are written one after the other. */
  writing: Promise<void>;
}

/**
 * One message's part in {@link writeBatchInTurn}: its result, or a promise of it while the target
 * has yet to answer. It comes in an object so that waiting for the message to be written is not
 * waiting for that answer.
 */
export interface Written {
  readonly result: SendResult | Promise<SendResult>;
}

/**
 * Writes a batch on a sink connection and settles it by the ordering rule: takes the batch's
 * place in line at once (call it when the batch is handed over), waits until the batch before it
 * on `lane` has been written, then writes each message in batch order with `write`, which resolves
 * once the message is written (or refused) and may wait for room first; the next message is
 * written after it. Once every message has its result, they are released in the order the batches
 * began, with the rule applied.
 */
export async function writeBatchInTurn(
  lane: BatchLane,
  batch: readonly Message[],
  write: (message: Message) => Promise<Written>,
): Promise<SendResult[]> {
  const turn = lane.ordered.begin();
  const outcomes: Array<Promise<SendResult>> = [];
  const previous = lane.writing;
  let written = (): void => {};
  lane.writing = new Promise<void>((resolve) => (written = resolve));
  try {
    await previous;
    for (const message of batch) outcomes.push(Promise.resolve((await write(message)).result));
  } finally {
    written();
  }
  return turn.finish(await Promise.all(outcomes));
}
