/**
 * Progress of a long operation (move, replay, send --count) on standard error, as
 * `moved 1500/4000 (37%) 812/s`: on a terminal one line rewritten in place, otherwise (a log, a
 * pipe) a plain line now and then, so logs show that the operation is alive without a line per
 * message. The last state is always printed, so the output ends with the total reached.
 */
import type { CliIo } from './cli-io.js';

/** How often a terminal line is redrawn at most. */
const TTY_REDRAW_MS = 100;
/** How often a plain line is printed at most when standard error is not a terminal. */
const PLAIN_INTERVAL_MS = 5_000;

export class Progress {
  readonly #io: Pick<CliIo, 'stderr' | 'stderrIsTty' | 'now'>;
  readonly #started: number;
  #last: number;
  #drawn = false;

  /**
   * @param verb what was done to each item, as in `moved` or `sent`
   * @param total how many items the operation expects; a count past it raises it
   */
  constructor(
    io: Pick<CliIo, 'stderr' | 'stderrIsTty' | 'now'>,
    private readonly verb: string,
    private total: number,
  ) {
    this.#io = io;
    this.#started = io.now();
    this.#last = this.#started;
  }

  /** `done` items are done: prints when it is time to. */
  update(done: number): void {
    const now = this.#io.now();
    if (now - this.#last < (this.#io.stderrIsTty ? TTY_REDRAW_MS : PLAIN_INTERVAL_MS)) return;
    this.#last = now;
    this.#print(done, now);
  }

  /** The operation ended (done or failed) after `done` items: prints the final state. */
  finish(done: number): void {
    if (done === 0 && !this.#drawn) return;
    this.#print(done, this.#io.now());
    if (this.#io.stderrIsTty) this.#io.stderr('\n');
  }

  /** `moved 1500/4000 (37%) 812/s`. */
  format(done: number, now: number): string {
    this.total = Math.max(this.total, done);
    const percent = this.total === 0 ? 100 : Math.floor((done / this.total) * 100);
    const seconds = (now - this.#started) / 1000;
    const rate = seconds > 0 ? ` ${Math.round(done / seconds)}/s` : '';
    return `${this.verb} ${done}/${this.total} (${percent}%)${rate}`;
  }

  #print(done: number, now: number): void {
    const line = this.format(done, now);
    // On a terminal: back to the line's start, the new text, and clear what is left of the old one.
    this.#io.stderr(this.#io.stderrIsTty ? `\r${line}\x1b[K` : `${line}\n`);
    this.#drawn = true;
  }
}
