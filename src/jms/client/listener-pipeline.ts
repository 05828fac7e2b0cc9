/**
 * A session's listener pipeline (SES-5, SES-6): the entries prefetched for its consumers'
 * listeners, run one at a time in the order they came; each consumer's window (MessagesMaximum:
 * entries handed to its listener and not finished, queued or running); whether a listener runs
 * now and which; and the callers waiting for the running deliveries to end. Everything about a
 * listener delivery that outlives one call is kept here, and changed only here.
 */
import type { Backlog } from '../destination/backlog.js';
import type { Entry } from '../destination/entry.js';
import { ListenerCall } from './listener-call.js';

/** What the pipeline runs deliveries for: a consumer with a listener. */
export interface ListenerConsumer {
  readonly closed: boolean;
  /** Runs the listener on one entry as `call`, then acknowledges it or puts it back. */
  runListener(entry: Entry, backlog: Backlog, call: ListenerCall<ListenerConsumer>): Promise<void>;
  /** Asks its backlog to dispatch: its window has room again. */
  backlogDispatch(): void;
}

/** A listener delivery waiting its turn. */
export interface QueuedDelivery<C extends ListenerConsumer = ListenerConsumer> {
  readonly consumer: C;
  readonly entry: Entry;
  readonly backlog: Backlog;
}

/** What the pipeline needs of its session. */
export interface ListenerPipelineContext {
  /** Whether deliveries may start: the connection is started and the session is not closing. */
  mayRun(): boolean;
}

export class ListenerPipeline<C extends ListenerConsumer = ListenerConsumer> {
  readonly #context: ListenerPipelineContext;
  readonly #queue: QueuedDelivery<C>[] = [];
  /** Each consumer's entries in the window; a consumer with none has no entry. */
  readonly #windows = new Map<C, number>();
  /** True while deliveries run, one after another. */
  #running = false;
  /** The listener running now (with its consumer); undefined between deliveries. */
  #inProgress: ListenerCall<C> | undefined;
  /** Callers of {@link idle} waiting for the running deliveries to end. */
  #idleWaiters: (() => void)[] = [];

  constructor(context: ListenerPipelineContext) {
    this.#context = context;
  }

  /** Whether a consumer's window has room for one more entry. */
  hasRoom(consumer: C, maximum: number): boolean {
    return (this.#windows.get(consumer) ?? 0) < maximum;
  }

  /** Queues a prefetched entry for the consumer's listener, in its window; delivered in order. */
  enqueue(consumer: C, entry: Entry, backlog: Backlog): void {
    this.#windows.set(consumer, (this.#windows.get(consumer) ?? 0) + 1);
    this.#queue.push({ consumer, entry, backlog });
    this.start();
  }

  /** Starts running queued deliveries, unless they run already or may not. */
  start(): void {
    if (this.#running || !this.#context.mayRun()) return;
    this.#running = true;
    this.#runNext();
  }

  /**
   * Runs the next queued delivery; when its listener is done, the one after it. A plain callback
   * rather than an async loop: with failures the queue often runs dry and deliveries start again
   * from scratch, and a restart should cost a flag, not a new async function and its promises.
   */
  readonly #runNext = (): void => {
    const finished = this.#inProgress;
    if (finished) {
      this.#inProgress = undefined;
      this.#leaveWindow(finished.consumer);
      finished.consumer.backlogDispatch();
      // What a close from inside that listener deferred (SES-1): its message is settled now.
      finished.finish();
    }
    const queued = this.#context.mayRun() ? this.#takeNext() : undefined;
    if (queued) {
      const call = new ListenerCall(queued.consumer);
      this.#inProgress = call;
      call.done = queued.consumer.runListener(queued.entry, queued.backlog, call);
      call.done.then(this.#runNext, this.#runNext);
      return;
    }
    this.#running = false;
    if (this.#idleWaiters.length > 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
  };

  /**
   * The next queued delivery whose consumer is open. A closing consumer's deliveries stay queued
   * for its close to take back, while other consumers' deliveries go on.
   */
  #takeNext(): QueuedDelivery<C> | undefined {
    const queue = this.#queue;
    if (queue.length === 0) return undefined;
    if (!queue[0]!.consumer.closed) return queue.shift();
    const index = queue.findIndex((queued) => !queued.consumer.closed);
    return index < 0 ? undefined : queue.splice(index, 1)[0];
  }

  #leaveWindow(consumer: C): void {
    const inWindow = this.#windows.get(consumer);
    if (inWindow === undefined) return;
    if (inWindow <= 1) this.#windows.delete(consumer);
    else this.#windows.set(consumer, inWindow - 1);
  }

  /** True while a listener runs. */
  get listenerRunning(): boolean {
    return this.#inProgress !== undefined;
  }

  /** The listener run in progress, if one is. */
  get runningCall(): ListenerCall<C> | undefined {
    return this.#inProgress;
  }

  /** The listener run of `consumer` in progress, if one is. */
  callOf(consumer: C): ListenerCall<C> | undefined {
    return this.#inProgress?.consumer === consumer ? this.#inProgress : undefined;
  }

  /** Whether the caller is the listener in progress (or code it started). */
  calledFromListener(): boolean {
    return this.#inProgress?.isCurrent() ?? false;
  }

  /** Resolves when no delivery runs. */
  idle(): Promise<void> {
    if (!this.#running) return Promise.resolve();
    return new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Takes back every queued delivery (recover, rollback, close), oldest first; their windows empty. */
  takeAll(): readonly QueuedDelivery<C>[] {
    if (this.#queue.length === 0) return NOTHING_QUEUED;
    const taken = this.#queue.splice(0);
    for (const { consumer } of taken) this.#leaveWindow(consumer);
    return taken;
  }

  /** Takes back the queued deliveries of a consumer that closed, oldest first; it has no window any more. */
  takeFor(consumer: C): QueuedDelivery<C>[] {
    const taken: QueuedDelivery<C>[] = [];
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      if (this.#queue[i]!.consumer === consumer) taken.unshift(...this.#queue.splice(i, 1));
    }
    this.#windows.delete(consumer);
    return taken;
  }
}

const NOTHING_QUEUED: readonly never[] = [];
