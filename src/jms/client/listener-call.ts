/**
 * One run of a message listener on one message, and which run the calling code belongs to.
 *
 * JMS lets a listener close its own consumer, session or connection, and makes every other
 * caller of those `close()` methods wait for the listener in progress (SES-1). With threads the
 * provider tells the two apart by the calling thread; here a listener is an async function, and
 * what it calls after an `await` runs in a later job of the event loop, like any other caller.
 * An AsyncLocalStorage follows the listener's own continuations, so `close()` knows whether it
 * was called from inside the listener it would otherwise wait for (and would wait forever).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a call's `done` is until its listener starts: settled, and shared so a call costs no promise of its own. */
const NOT_STARTED: Promise<void> = Promise.resolve();

/** A listener's run on one message: what a `close()` waits for, and what it leaves for afterwards. */
export class ListenerCall<C = unknown> {
  /**
   * Work a close made from inside the listener left for when the listener has returned; made
   * only when there is some, since a call is made for every message a listener gets.
   */
  #afterwards: (() => void)[] | undefined = undefined;
  /** Settles when the listener has returned and its message is acknowledged or put back. */
  done: Promise<void> = NOT_STARTED;

  constructor(
    /** The consumer whose listener runs. */
    readonly consumer: C,
  ) {}

  /**
   * Runs `body` on `argument` as this call: code it runs, now or after awaits, sees this call as
   * current. The argument is passed through rather than captured, so a run makes no closure.
   */
  run<A, T>(body: (argument: A) => T, argument: A): T {
    return current.run(this, body, argument);
  }

  /** Whether the code running now is this call's listener (or something it started). */
  isCurrent(): boolean {
    return current.getStore() === this;
  }

  /** Defers `work` until the listener has returned and its message was settled. */
  afterwards(work: () => void): void {
    (this.#afterwards ??= []).push(work);
  }

  /** @internal Runs the deferred work, in the order it was deferred. */
  finish(): void {
    const deferred = this.#afterwards;
    if (deferred === undefined) return;
    this.#afterwards = undefined;
    for (const work of deferred) work();
  }
}

const current = new AsyncLocalStorage<ListenerCall<unknown>>();
