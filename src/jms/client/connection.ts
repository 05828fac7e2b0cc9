import { TemporaryQueue, TemporaryTopic } from '../destination/destination.js';
import type { JmsEngine } from '../engine.js';
import { type EngineInternals, internalsOf } from '../engine/internals.js';
import { AcknowledgeMode, type AcknowledgeModeValue } from './acknowledge-mode.js';
import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import type { ResolvedFactoryOptions } from './factory-options.js';
import { Session } from './session.js';

/** Receives errors that would otherwise be lost: a listener that threw, a destination deleted under a consumer. */
export type ExceptionListener = (error: Error) => void;

/**
 * A connection (SES-1): created stopped, `start()` begins delivery, `stop()` pauses it, `close()`
 * ends everything under it. Holds the client id and the temporary destinations it created.
 */
export class Connection {
  /** @internal */
  readonly id: string;
  #clientId: string | null = null;
  #clientIdFixed = false;
  #started = false;
  #closed = false;
  #closePromise: Promise<void> | undefined;
  #exceptionListener: ExceptionListener | null = null;
  readonly #sessions = new Set<Session>();
  readonly #temporaries = new Set<TemporaryQueue | TemporaryTopic>();
  #nextTemporary = 0;
  readonly #engine: EngineInternals;

  /** @internal The engine its sessions work on. */
  readonly engine: JmsEngine;
  /** @internal The settings of the factory that made it, checked there. */
  readonly factoryOptions: ResolvedFactoryOptions;
  /** @internal The user the connection authenticated as (JMSXUserID of its sends); undefined when anonymous. */
  readonly userName: string | undefined;

  /** @internal Made by `ConnectionFactory.createConnection()`, which authenticated the user. */
  static create(
    engine: JmsEngine,
    factoryOptions: ResolvedFactoryOptions,
    userName: string | undefined = undefined,
  ): Connection {
    return new Connection(engine, factoryOptions, userName);
  }

  /** Not for applications: a Connection comes from `ConnectionFactory.createConnection()`. */
  // Private, not marked internal: a stripped constructor would publish `new Connection()`.
  private constructor(
    engine: JmsEngine,
    factoryOptions: ResolvedFactoryOptions,
    userName: string | undefined,
  ) {
    this.engine = engine;
    this.factoryOptions = factoryOptions;
    this.userName = userName;
    this.#engine = internalsOf(engine);
    this.id = this.#engine.ids.newConnectionId();
    if (factoryOptions.clientId !== undefined) this.setClientID(factoryOptions.clientId);
  }

  /** The client id, or null when none was set. */
  getClientID(): string | null {
    return this.#clientId;
  }

  /** Sets the client id: once, before the connection is used, unique across connections (SES-1). */
  setClientID(clientId: string): void {
    this.#checkOpen();
    if (this.#clientIdFixed) {
      throw new IllegalStateError('client id can only be set once, before the connection is used');
    }
    this.#engine.clientIds.claim(clientId);
    this.#clientId = clientId;
    this.#clientIdFixed = true;
  }

  /** Sets the listener that receives errors no caller would see. */
  setExceptionListener(listener: ExceptionListener | null): void {
    this.#exceptionListener = listener;
  }

  getExceptionListener(): ExceptionListener | null {
    return this.#exceptionListener;
  }

  /** @internal Reports an error to the exception listener, or logs it; anything thrown is made an Error. */
  reportError(thrown: unknown): void {
    const error = thrown instanceof Error ? thrown : new Error(String(thrown));
    if (this.#exceptionListener) {
      try {
        this.#exceptionListener(error);
        return;
      } catch (listenerError) {
        this.engine.logger.warn({ err: listenerError }, 'exception listener threw');
      }
    }
    this.engine.logger.warn(
      { err: error, connection: this.id },
      'connection error with no exception listener',
    );
  }

  /** Whether delivery is on. */
  get started(): boolean {
    return this.#started;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Creates a session. `transacted` makes commit/rollback cover sends and receives and ignores the
   * mode; otherwise the mode is one of {@link AcknowledgeMode} (default AUTO_ACKNOWLEDGE).
   */
  createSession(
    transacted = false,
    acknowledgeMode: AcknowledgeModeValue = AcknowledgeMode.AUTO_ACKNOWLEDGE,
  ): Session {
    this.#use();
    const mode = transacted ? AcknowledgeMode.SESSION_TRANSACTED : acknowledgeMode;
    if (
      !Object.values(AcknowledgeMode).includes(mode) ||
      (!transacted && mode === AcknowledgeMode.SESSION_TRANSACTED)
    ) {
      throw new InvalidArgumentError(
        `acknowledge mode ${String(acknowledgeMode)} is not valid (expected AUTO_ACKNOWLEDGE, CLIENT_ACKNOWLEDGE, DUPS_OK_ACKNOWLEDGE or NO_ACKNOWLEDGE, or a transacted session)`,
      );
    }
    const session = Session.create(this, mode);
    this.#sessions.add(session);
    return session;
  }

  /** Starts (or restarts) delivery to consumers. */
  start(): void {
    this.#use();
    if (this.#started) return;
    this.#started = true;
    for (const session of this.#sessions) session.connectionStarted();
  }

  /**
   * Pauses delivery and waits for running listeners to return; sends are still allowed (SES-1).
   * Called from a listener of this connection, it waits for the others only: JMS lets a provider
   * refuse this or do it, and waiting for the caller itself would never end.
   */
  async stop(): Promise<void> {
    this.#use();
    this.#started = false;
    const others = [...this.#sessions].filter((session) => !session.calledFromOwnListener());
    await Promise.all(others.map((session) => session.idle()));
  }

  /**
   * Closes the connection: pending receives return null, listeners finish, open transactions roll
   * back, unacknowledged CLIENT-mode messages are not acknowledged, temporary destinations are
   * deleted (SES-1). It waits for every listener in progress; until it returns, those listeners
   * keep the full use of their sessions, and their messages go to no other consumer.
   *
   * Called from a listener of this connection, it closes the connection rather than refuse to
   * (JMS allows either): it waits for the listeners of the other sessions, not for the caller's,
   * whose session closes as `Session.close()` from its own listener does. Closing twice does
   * nothing; a second call waits as the first, unless it comes from one of the listeners the
   * first waits for.
   */
  close(): Promise<void> {
    if (this.#closePromise) return this.#calledFromOwnListener() ? Promise.resolve() : this.#closePromise;
    this.#started = false;
    this.#closePromise = this.#close();
    return this.#closePromise;
  }

  async #close(): Promise<void> {
    await Promise.all([...this.#sessions].map((session) => session.close()));
    this.#closed = true;
    for (const temporary of this.#temporaries) this.#deleteTemporary(temporary, true);
    if (this.#clientId !== null) this.#engine.clientIds.release(this.#clientId);
  }

  #calledFromOwnListener(): boolean {
    for (const session of this.#sessions) if (session.calledFromOwnListener()) return true;
    return false;
  }

  /** @internal A session closed itself. */
  sessionClosed(session: Session): void {
    this.#sessions.delete(session);
  }

  /** @internal Creates a temporary queue owned by this connection (DST-5). */
  createTemporaryQueue(): TemporaryQueue {
    this.#use();
    const queue: TemporaryQueue = new TemporaryQueue(this.#temporaryName(), this.id, () =>
      this.#deleteTemporary(queue, false),
    );
    this.#engine.registry.registerTemporary(queue);
    this.#temporaries.add(queue);
    return queue;
  }

  /** @internal Creates a temporary topic owned by this connection (DST-5). */
  createTemporaryTopic(): TemporaryTopic {
    this.#use();
    const topic: TemporaryTopic = new TemporaryTopic(this.#temporaryName(), this.id, () =>
      this.#deleteTemporary(topic, false),
    );
    this.#engine.registry.registerTemporary(topic);
    this.#temporaries.add(topic);
    return topic;
  }

  #temporaryName(): string {
    return `TMP.${this.id}.${++this.#nextTemporary}`;
  }

  #deleteTemporary(temporary: TemporaryQueue | TemporaryTopic, closing: boolean): void {
    if (!this.#temporaries.has(temporary)) return;
    const state = this.#engine.registry.find(temporary);
    if (state && !closing && this.#engine.registry.consumerCount(state) > 0) {
      throw new IllegalStateError(`temporary destination '${temporary.name}' still has consumers`);
    }
    this.#temporaries.delete(temporary);
    if (state) this.#engine.registry.delete(state);
  }

  /** Marks the connection used (the client id can no longer be set) and checks it is open. */
  #use(): void {
    this.#checkOpen();
    this.#clientIdFixed = true;
  }

  #checkOpen(): void {
    if (this.#closePromise) throw new IllegalStateError('connection is closed');
  }
}
