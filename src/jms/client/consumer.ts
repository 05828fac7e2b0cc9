/**
 * A message consumer (SES-5): synchronous `receive` or an asynchronous listener, never both. It
 * is what a backlog dispatches to: it has capacity while a receive waits, or while its listener
 * window (MessagesMaximum, SES-6) has room.
 */
import type { ScheduledTimer } from '../clock.js';
import type { Backlog } from '../destination/backlog.js';
import type { Destination } from '../destination/destination.js';
import type { Subscription } from '../destination/destination-state.js';
import type { Entry } from '../destination/entry.js';
import { type EngineInternals, internalsOf } from '../engine/internals.js';
import { IllegalStateError, InvalidDestinationError } from '../errors.js';
import type { Message } from '../message/message.js';
import type { ListenerCall } from './listener-call.js';
import type { ListenerPipeline } from './listener-pipeline.js';
import type { MessageSelector } from '../selector/index.js';
import type { SessionLink } from './client-links.js';

/** How long a message the store could not read waits before it is tried again. */
const UNREADABLE_RETRY_MS = 1000;

/** Handles a delivered message; a returned promise is awaited before the next delivery. */
export type MessageListener = (message: Message) => void | Promise<void>;

/** @internal Where a consumer reads from (given by its session). */
export interface ConsumerTarget {
  backlog: Backlog;
  destination: Destination;
  /** The topic subscription it is attached to, if any. */
  subscription: Subscription | null;
}

interface Waiter {
  readonly resolve: (message: Message | null) => void;
  readonly reject: (error: unknown) => void;
  /** When a `receive(timeout)` gives up, on the engine's clock; Infinity for a receive without one. */
  deadline: number;
}

/**
 * A consumer of a queue or a topic subscription. Its backlog dispatches to it as a
 * `BacklogConsumer`: that side of it is internal, so it is checked where the session attaches it
 * rather than declared with `implements`, which would put it in the published type.
 */
export class MessageConsumer {
  readonly #session: SessionLink;
  /** The session's listener deliveries, which keep this consumer's window. */
  readonly #listeners: ListenerPipeline<MessageConsumer>;
  readonly #engine: EngineInternals;
  readonly #target: ConsumerTarget;
  readonly #selectorText: string | null;
  readonly #waiters: Waiter[] = [];
  /**
   * One timer for every timed receive waiting here, armed for the earliest deadline. A receive
   * answered before its deadline has nothing to cancel: a loop of `receive(timeout)` that each
   * find their message soon arms one timer per timeout period, not one per receive.
   */
  #timeoutTimer: ScheduledTimer | undefined;
  #timeoutDue = Infinity;
  readonly #onTimeout = (): void => this.#expireWaiters();
  #listener: MessageListener | null = null;
  #closed = false;
  #closePromise: Promise<void> | undefined;
  /** Set during receiveNoWait: the consumer can take exactly one entry, synchronously. */
  #immediate = false;
  #immediateResult: Promise<Message | null> | undefined;

  /** @internal The selector the backlog applies for this consumer (queues); topic selectors live on the subscription. */
  readonly selector: MessageSelector | null;

  /** @internal Made by the session's `createConsumer` and friends, which attach it to its backlog. */
  static create(
    session: SessionLink,
    listeners: ListenerPipeline<MessageConsumer>,
    target: ConsumerTarget,
    selector: MessageSelector | null,
    selectorText: string | null,
  ): MessageConsumer {
    return new MessageConsumer(session, listeners, target, selector, selectorText);
  }

  /** Not for applications: a MessageConsumer comes from the session's `createConsumer` and friends. */
  // Private, not marked internal: a stripped constructor would publish `new MessageConsumer()`.
  private constructor(
    session: SessionLink,
    listeners: ListenerPipeline<MessageConsumer>,
    target: ConsumerTarget,
    selector: MessageSelector | null,
    selectorText: string | null,
  ) {
    this.selector = selector;
    this.#session = session;
    this.#listeners = listeners;
    this.#engine = internalsOf(session.connection.engine);
    this.#target = target;
    this.#selectorText = selectorText;
  }

  /** The selector text given at creation, or null (SEL-5). */
  getMessageSelector(): string | null {
    return this.#selectorText;
  }

  /** The destination consumed from. */
  getDestination(): Destination {
    return this.#target.destination;
  }

  /** Whether this subscriber skips its own connection's messages (DST-4). */
  getNoLocal(): boolean {
    return this.#target.subscription?.spec.noLocal ?? false;
  }

  // --- what its backlog calls (BacklogConsumer) ---

  /** @internal */
  get transacted(): boolean {
    return this.#session.transacted;
  }

  /** @internal */
  hasCapacity(): boolean {
    // A closing session puts its messages back before it closes its consumers: they must not
    // take them again (counted, handed to a closed session, and in a transaction never returned).
    if (this.#closed || this.#session.closing || !this.#session.connection.started) return false;
    if (this.#listener)
      return this.#listeners.hasRoom(this, this.#session.connection.factoryOptions.messagesMaximum);
    return this.#waiters.length > 0 || (this.#immediate && this.#immediateResult === undefined);
  }

  /** @internal */
  accept(entry: Entry): void {
    if (this.#listener) {
      this.#listeners.enqueue(this, entry, this.#target.backlog);
      return;
    }
    let delivered: Message | Promise<Message>;
    try {
      delivered = this.#session.deliverToReceive(this, entry, this.#target.backlog);
    } catch (error) {
      // Unreadable (see runListener): the receive fails with the store's error, the message stays.
      this.#target.backlog.release(entry, UNREADABLE_RETRY_MS);
      if (this.#waiters.length === 0) this.#immediateResult = Promise.reject(error);
      else {
        this.#waiters.shift()!.reject(error);
      }
      return;
    }
    // A promise when the acknowledgement writes the store: the receive returns once it is written.
    if (this.#waiters.length === 0) {
      this.#immediateResult = delivered instanceof Promise ? delivered : Promise.resolve(delivered);
      return;
    }
    const waiter = this.#waiters.shift()!;
    if (delivered instanceof Promise) delivered.then(waiter.resolve, waiter.reject);
    else waiter.resolve(delivered);
  }

  /** @internal The destination or subscription was deleted under this consumer (DST-6). */
  backlogClosed(): void {
    if (this.#closed) return;
    if (this.#listener) {
      this.#session.connection.reportError(
        new InvalidDestinationError(`destination '${this.#target.destination.toString()}' was deleted`),
      );
    }
    void this.close();
  }

  /** @internal Asks the backlog to dispatch (after start, or when the window frees up). */
  backlogDispatch(): void {
    if (!this.#closed) this.#target.backlog.dispatch();
  }

  // --- receiving ---

  /**
   * Waits for the next message. `timeoutMs` > 0 returns null after that long; 0 or none waits
   * until a message comes or the consumer closes (SES-5).
   */
  receive(timeoutMs = 0): Promise<Message | null> {
    this.#checkReceive();
    return new Promise<Message | null>((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, deadline: Infinity };
      this.#waiters.push(waiter);
      this.#target.backlog.dispatch();
      // The timeout counts only for a receive left waiting: one answered by the dispatch above
      // (a message was there) would read the clock for nothing. The waiter was pushed last and
      // dispatch only takes waiters from the front, so it is still waiting exactly when it is
      // still the last one. The length is tested first: reading index -1 of an empty list is a
      // slow named-property lookup (7% of a receive, measured).
      const waiters = this.#waiters;
      if (timeoutMs > 0 && waiters.length > 0 && waiters[waiters.length - 1] === waiter) {
        const deadline = this.#engine.clock.now() + timeoutMs;
        waiter.deadline = deadline;
        if (deadline < this.#timeoutDue) {
          this.#timeoutTimer?.cancel();
          this.#timeoutDue = deadline;
          this.#timeoutTimer = this.#engine.timers.after(timeoutMs, this.#onTimeout);
        }
      }
    });
  }

  /** Returns null to the receives whose deadline has come, and arms for the next deadline. */
  #expireWaiters(): void {
    this.#timeoutTimer = undefined;
    this.#timeoutDue = Infinity;
    const now = this.#engine.clock.now();
    const waiters = this.#waiters;
    let next = Infinity;
    const expired: Waiter[] = [];
    for (let i = 0; i < waiters.length;) {
      const waiter = waiters[i]!;
      if (waiter.deadline <= now) {
        waiters.splice(i, 1);
        expired.push(waiter);
      } else {
        if (waiter.deadline < next) next = waiter.deadline;
        i++;
      }
    }
    if (next !== Infinity) {
      this.#timeoutDue = next;
      this.#timeoutTimer = this.#engine.timers.at(next, this.#onTimeout);
    }
    for (const waiter of expired) waiter.resolve(null);
  }

  /** Returns a message available now, or null; never waits for one to arrive (SES-5). */
  receiveNoWait(): Promise<Message | null> {
    try {
      this.#checkReceive();
    } catch (error) {
      return Promise.reject(error);
    }
    // A synchronous take: the backlog dispatches to this consumer while #immediate is set.
    this.#immediate = true;
    this.#target.backlog.dispatch();
    this.#immediate = false;
    const result = this.#immediateResult ?? Promise.resolve(null);
    this.#immediateResult = undefined;
    return result;
  }

  #checkReceive(): void {
    if (this.#closed) throw new IllegalStateError('consumer is closed');
    this.#session.checkOpen();
    if (this.#listener)
      throw new IllegalStateError(
        'this consumer has a message listener: it cannot also receive synchronously',
      );
  }

  /** Sets (or, with null, removes) the asynchronous listener. */
  setMessageListener(listener: MessageListener | null): void {
    if (this.#closed) throw new IllegalStateError('consumer is closed');
    if (listener && this.#waiters.length > 0)
      throw new IllegalStateError('a receive is pending on this consumer: it cannot also have a listener');
    this.#listener = listener;
    if (listener) this.#target.backlog.dispatch();
  }

  getMessageListener(): MessageListener | null {
    return this.#listener;
  }

  /**
   * @internal Runs the listener on one entry as `call`, then acknowledges it (AUTO) or puts it
   * back (it threw, SES-4). The pipeline frees its place in the window when this settles.
   */
  async runListener(entry: Entry, backlog: Backlog, call: ListenerCall<MessageConsumer>): Promise<void> {
    // It may have waited in the session's pipeline long enough to expire (DLV-4).
    if (backlog.expireIfDue(entry)) return;
    let message: Message;
    try {
      message = this.#session.deliver(this, entry, backlog);
    } catch (error) {
      // The message could not be read (a paged-out body the store failed to return): report it
      // and try again later, rather than lose the message or spin on it.
      this.#session.connection.reportError(error);
      backlog.release(entry, UNREADABLE_RETRY_MS);
      return;
    }
    try {
      const listener = this.#listener;
      if (listener) await call.run(listener, message);
      const acknowledged = this.#session.autoAcknowledge(entry);
      if (acknowledged) await acknowledged;
    } catch (error) {
      if (!this.#session.listenerFailed(entry, error)) this.#session.connection.reportError(error);
    }
  }

  /**
   * Closes the consumer: a pending receive returns null; unacknowledged messages go back (SES-4).
   * It waits for its listener in progress to return (SES-1); that listener's message goes to no
   * other consumer meanwhile. Called from its own listener, it returns at once and the listener
   * completes normally (JMS): its message is acknowledged or put back when the listener returns,
   * as the session's mode says, and the consumer lets go of its destination then.
   */
  close(): Promise<void> {
    if (this.#closePromise)
      return this.#listeners.calledFromListener() ? Promise.resolve() : this.#closePromise;
    this.#closed = true;
    this.#timeoutTimer?.cancel();
    this.#timeoutTimer = undefined;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve(null);
    const running = this.#listeners.callOf(this);
    if (!running) {
      this.#detach();
      this.#closePromise = Promise.resolve();
    } else if (running.isCurrent()) {
      running.afterwards(() => this.#detach());
      this.#closePromise = Promise.resolve();
    } else {
      this.#closePromise = running.done.then(() => this.#detach());
    }
    return this.#closePromise;
  }

  /** Leaves the destination and gives back what the consumer holds; no listener of it runs now. */
  #detach(): void {
    this.#target.backlog.removeConsumer(this);
    this.#session.consumerClosed(this);
    if (this.#target.subscription) this.#engine.subscriptions.consumerLeft(this.#target.subscription);
  }

  get closed(): boolean {
    return this.#closed;
  }
}
