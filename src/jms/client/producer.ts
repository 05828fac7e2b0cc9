/**
 * A message producer: stamps the provider-owned headers at send (MSG-1), chooses persistence,
 * and hands the message to the send pipeline (engine/send-pipeline.ts). A persistent send
 * resolves once the store has it (PER-1).
 */
import type { Destination } from '../destination/destination.js';
import type { DestinationState } from '../destination/destination-state.js';
import { overrideOf } from '../destination/destination-options.js';
import { StoredMessage } from '../destination/entry.js';
import { type EngineInternals, internalsOf } from '../engine/internals.js';
import type { SendTransaction } from '../engine/send-pipeline.js';
import { IllegalStateError, InvalidArgumentError, InvalidDestinationError } from '../errors.js';
import {
  DEFAULT_PRIORITY,
  DeliveryMode,
  type DeliveryModeValue,
  type Message,
  checkDeliveryMode,
  checkPriority,
} from '../message/message.js';
import type { StoreOperation } from '../store-port.js';
import type { SessionLink } from './client-links.js';

/** Per-send overrides of the producer's settings. */
export interface SendOptions {
  deliveryMode?: DeliveryModeValue;
  priority?: number;
  /** Ms until the message expires; 0 = never (DLV-4). */
  timeToLive?: number;
  /** Ms until the message may be delivered (DLV-5). */
  deliveryDelay?: number;
  /**
   * Store operations written in the same atomic store commit as the message, so that after a
   * crash either both are stored or neither: the bridge runtime records a forwarded message's id
   * in its duplicate window this way (BRG-2). The send resolves once that commit is durable; a
   * message that is not stored (non-persistent, a destination with the store disabled, a topic
   * without durable subscriptions) commits them alone before it is delivered. Not for transacted
   * sessions, whose sends are stored at commit.
   */
  storeWith?: readonly StoreOperation[];
}

export class MessageProducer {
  readonly #session: SessionLink;
  readonly #engine: EngineInternals;
  /** Where a transacted session's sends wait for its commit; undefined outside a transaction. */
  readonly #transaction: SendTransaction | undefined;
  readonly #destination: Destination | null;
  #deliveryMode: DeliveryModeValue = DeliveryMode.PERSISTENT;
  #priority = DEFAULT_PRIORITY;
  #timeToLive = 0;
  #deliveryDelay = 0;
  #redeliveryLimit = -1;
  #sendTimeout: number;
  #disableMessageTimestamp = false;
  #closed = false;
  #state: DestinationState | undefined;
  /**
   * The other members a send resolved by {@link #resolve} also goes to (DST-8): a field rather
   * than a pair returned, so a send allocates no array for it.
   */
  #alsoTo: readonly DestinationState[] = NO_STATES;
  /** The producer's own settings as one send's, kept until a setter changes one of them. */
  #ownSettings: SendSettings | undefined;

  /** @internal Made by `session.createProducer()`, which checked the destination. */
  static create(session: SessionLink, destination: Destination | null): MessageProducer {
    return new MessageProducer(session, destination);
  }

  /** Not for applications: a MessageProducer comes from `session.createProducer()`. */
  // Private, not marked internal: a stripped constructor would publish `new MessageProducer()`.
  private constructor(session: SessionLink, destination: Destination | null) {
    this.#session = session;
    this.#engine = internalsOf(session.connection.engine);
    this.#transaction = session.transacted
      ? { hold: (stored, routed) => session.holdUncommitted(stored, routed) }
      : undefined;
    this.#destination = destination;
    this.#sendTimeout = session.connection.factoryOptions.sendTimeout;
  }

  getDestination(): Destination | null {
    return this.#destination;
  }

  setDeliveryMode(mode: DeliveryModeValue): void {
    checkDeliveryMode(mode);
    this.#deliveryMode = mode;
    this.#ownSettings = undefined;
  }
  getDeliveryMode(): DeliveryModeValue {
    return this.#deliveryMode;
  }
  setPriority(priority: number): void {
    checkPriority(priority);
    this.#priority = priority;
    this.#ownSettings = undefined;
  }
  getPriority(): number {
    return this.#priority;
  }
  /** Ms a message lives; 0 = forever (DLV-4). */
  setTimeToLive(timeToLive: number): void {
    this.#timeToLive = checkMs(timeToLive, 'time to live');
    this.#ownSettings = undefined;
  }
  getTimeToLive(): number {
    return this.#timeToLive;
  }
  /** Ms before a sent message becomes visible (JMS 2.0 delivery delay, WebLogic time-to-deliver; DLV-5). */
  setDeliveryDelay(delay: number): void {
    this.#deliveryDelay = checkMs(delay, 'delivery delay');
    this.#ownSettings = undefined;
  }
  getDeliveryDelay(): number {
    return this.#deliveryDelay;
  }
  /** WebLogic name for {@link setDeliveryDelay}. */
  setTimeToDeliver(delay: number): void {
    this.setDeliveryDelay(delay);
  }
  /** Redeliveries before a message is undeliverable; -1 = no limit; a destination override wins (DLV-2). */
  setRedeliveryLimit(limit: number): void {
    if (!Number.isInteger(limit) || limit < -1)
      throw new InvalidArgumentError(
        `redelivery limit ${String(limit)} is not valid (expected -1 or an integer >= 0)`,
      );
    this.#redeliveryLimit = limit;
  }
  getRedeliveryLimit(): number {
    return this.#redeliveryLimit;
  }
  /** Ms a send blocked by a full destination, or paused by throttling, waits before failing (DLV-7, DLV-8). */
  setSendTimeout(timeout: number): void {
    this.#sendTimeout = checkMs(timeout, 'send timeout');
  }
  getSendTimeout(): number {
    return this.#sendTimeout;
  }
  setDisableMessageTimestamp(disable: boolean): void {
    this.#disableMessageTimestamp = disable;
  }

  /** Sends to the producer's destination. */
  send(message: Message, options?: SendOptions): Promise<void>;
  /** Sends to the given destination (for a producer created without one). */
  send(destination: Destination, message: Message, options?: SendOptions): Promise<void>;
  send(first: Destination | Message, second?: Message | SendOptions, third?: SendOptions): Promise<void> {
    try {
      if (isMessage(first))
        return this.#send(this.#destination, first, (second as SendOptions | undefined) ?? NO_OPTIONS);
      if (this.#destination)
        throw new InvalidArgumentError(
          'this producer has a destination: send the message without naming another',
        );
      return this.#send(first, second as Message, third ?? NO_OPTIONS);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Not async itself: what it throws, `send` turns into a rejection, and the send path's one async step is where it waits. */
  #send(destination: Destination | null, message: Message, options: SendOptions): Promise<void> {
    if (this.#closed) throw new IllegalStateError('producer is closed');
    this.#session.checkOpen();
    if (!isMessage(message)) throw new InvalidArgumentError('send needs a message');
    if (!destination)
      throw new InvalidDestinationError('no destination: the producer has none and the send named none');
    if (options.storeWith !== undefined && this.#session.transacted)
      throw new IllegalStateError(
        'storeWith is not for transacted sessions: their sends are stored at commit',
      );
    const engine = this.#engine;
    const state = this.#resolve(destination, message);
    const alsoTo = this.#alsoTo;
    const settings = this.#settings(options);
    const now = engine.clock.now();
    const seq = engine.ids.nextSeq();
    const persistent = settings.deliveryMode === DeliveryMode.PERSISTENT && !destination.temporary;
    const timeToLive = overrideOf(state.options.timeToLiveOverride) ?? settings.timeToLive;
    const deliveryTime = engine.sendPipeline.deliveryTime(state, now, settings.deliveryDelay);

    message.setJMSDestination(state.handle);
    // Persistent messages to a temporary destination are silently made non-persistent (DST-5).
    message.setJMSDeliveryMode(persistent ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
    message.setJMSPriority(settings.priority);
    message.setJMSTimestamp(this.#disableMessageTimestamp ? 0 : now);
    message.setJMSExpiration(timeToLive > 0 ? now + timeToLive : 0);
    message.setJMSDeliveryTime(deliveryTime);
    // Built when first read: most sent messages never have their id read (MSG-1).
    message.setGeneratedMessageID(engine.ids.messageIdPrefix, seq);
    message.setJMSRedelivered(false);
    message.deliveryCount = 0;
    this.#stampSender(message);

    // Expiring at or before its delivery time, it can never be delivered: the send succeeds and the message silently expires (DLV-5).
    if (
      message.getJMSExpiration() !== 0 &&
      message.getJMSExpiration() <= deliveryTime &&
      deliveryTime > now
    ) {
      return engine.sendPipeline.expiredAtSend(state, options.storeWith ?? NO_OPERATIONS);
    }
    const copy = message.copy();
    const stored = new StoredMessage(
      copy,
      seq,
      copy.getSize(),
      persistent && state.options.storeEnabled !== false,
      this.#session.connection.id,
      this.#session.connection.getClientID(),
    );
    stored.redeliveryLimit = this.#redeliveryLimit;
    stored.scheduled = deliveryTime > now;
    const storeWith = options.storeWith ?? NO_OPERATIONS;
    return engine.sendPipeline.send(state, alsoTo, stored, storeWith, this.#sendTimeout, this.#transaction);
  }

  /**
   * JMSXUserID and JMSXAppID, "set by the provider on send" (MSG-2): the connection's user and
   * the factory's application id, where known, replacing what the message carried. Where not
   * known, a value the message carries is kept: a bridge forwarding a message from a broker
   * keeps the user the broker vouched for.
   */
  #stampSender(message: Message): void {
    const connection = this.#session.connection;
    const user = connection.userName;
    if (user !== undefined) message.setProviderProperty('JMSXUserID', { type: 'string', value: user });
    const application = connection.factoryOptions.applicationId;
    if (application !== undefined)
      message.setProviderProperty('JMSXAppID', { type: 'string', value: application });
  }

  /**
   * The producer's own destination is looked up once and kept until it is deleted; a
   * distributed one picks a member on every send, and a distributed topic, or a member of one,
   * names the other members that also get the message (DST-8).
   */
  #resolve(destination: Destination, message: Message): DestinationState {
    if (destination === this.#destination && this.#state && !this.#state.deleted) {
      this.#alsoTo = this.#state.forwardTo;
      return this.#state;
    }
    const { state, distributed, alsoTo } = this.#engine.registry.forSend(
      destination,
      message,
      this.#session.transactionAffinity,
    );
    if (destination === this.#destination && !distributed) this.#state = state;
    this.#alsoTo = alsoTo;
    return state;
  }

  /**
   * The settings of one send. A send that overrides none gets the producer's own, made once per
   * change of a setting rather than once per send (they were checked when set).
   */
  #settings(options: SendOptions): SendSettings {
    if (
      options.deliveryMode === undefined &&
      options.priority === undefined &&
      options.timeToLive === undefined &&
      options.deliveryDelay === undefined
    )
      return (this.#ownSettings ??= {
        deliveryMode: this.#deliveryMode,
        priority: this.#priority,
        timeToLive: this.#timeToLive,
        deliveryDelay: this.#deliveryDelay,
      });
    const deliveryMode = options.deliveryMode ?? this.#deliveryMode;
    checkDeliveryMode(deliveryMode);
    const priority = options.priority ?? this.#priority;
    checkPriority(priority);
    return {
      deliveryMode,
      priority,
      timeToLive: checkMs(options.timeToLive ?? this.#timeToLive, 'time to live'),
      deliveryDelay: checkMs(options.deliveryDelay ?? this.#deliveryDelay, 'delivery delay'),
    };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#session.producerClosed(this);
  }
}

const NO_OPERATIONS: readonly StoreOperation[] = [];
const NO_OPTIONS: SendOptions = Object.freeze({});
const NO_STATES: readonly DestinationState[] = Object.freeze([]);

/** What one send uses of the producer's settings and the send's options. */
type SendSettings = Readonly<Required<Omit<SendOptions, 'storeWith'>>>;

function isMessage(value: unknown): value is Message {
  return (
    typeof value === 'object' && value !== null && typeof (value as Message).getJMSMessageID === 'function'
  );
}

function checkMs(value: number, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${what} ${String(value)} is not valid (expected a number of ms >= 0)`);
  }
  return value;
}
