/**
 * A session (SES-2..5): the unit of acknowledgement and transactions, and the one thread of
 * delivery for its listeners. It keeps, in delivery order, every message handed to the
 * application and not yet acknowledged, so recover and rollback can put them back in order.
 */
import type { Backlog } from '../destination/backlog.js';
import {
  type Destination,
  Queue,
  type TemporaryQueue,
  type TemporaryTopic,
  Topic,
} from '../destination/destination.js';
import type { TransactionAffinity } from '../destination/distributed.js';
import type { Entry, StoredMessage } from '../destination/entry.js';
import { type EngineInternals, internalsOf } from '../engine/internals.js';
import type { Routed } from '../engine/store-link.js';
import {
  IllegalStateError,
  InvalidDestinationError,
  TransactionRolledBackError,
  isPoison,
} from '../errors.js';
import { BytesMessage } from '../message/bytes-message.js';
import { MapMessage } from '../message/map-message.js';
import { Message } from '../message/message.js';
import { StreamMessage } from '../message/stream-message.js';
import { TextMessage } from '../message/text-message.js';
import { XMLMessage } from '../message/xml-message.js';
import { parseSelector } from '../selector/index.js';
import type { StoreOperation } from '../store-port.js';
import { AcknowledgeMode, type AcknowledgeModeValue } from './acknowledge-mode.js';
import type { ConnectionLink } from './client-links.js';
import { MessageConsumer, type ConsumerTarget } from './consumer.js';
import { ListenerPipeline, type QueuedDelivery } from './listener-pipeline.js';
import { MessageProducer } from './producer.js';
import { QueueBrowser } from './queue-browser.js';
import { nonNegativeMs } from './setting-checks.js';

/** A message handed to the application and not yet acknowledged or committed. */
interface Unacknowledged {
  entry: Entry;
  backlog: Backlog;
  consumer: MessageConsumer;
  /** The copy the application got (for `reject`); absent for receives acknowledged at once. */
  message?: Message;
}

type Queued = QueuedDelivery<MessageConsumer>;

/** What a commit with no sends, or no receives, works on: shared, never written to. */
const NO_SENDS: readonly { stored: StoredMessage; routed: Routed[] }[] = Object.freeze([]);
const NO_RECEIVES: readonly Unacknowledged[] = Object.freeze([]);
/** What a commit or rollback with nothing to wait for returns: settled, shared, no allocation. */
const SETTLED: Promise<void> = Promise.resolve();

export class Session {
  static readonly AUTO_ACKNOWLEDGE = AcknowledgeMode.AUTO_ACKNOWLEDGE;
  static readonly CLIENT_ACKNOWLEDGE = AcknowledgeMode.CLIENT_ACKNOWLEDGE;
  static readonly DUPS_OK_ACKNOWLEDGE = AcknowledgeMode.DUPS_OK_ACKNOWLEDGE;
  static readonly NO_ACKNOWLEDGE = AcknowledgeMode.NO_ACKNOWLEDGE;
  static readonly SESSION_TRANSACTED = AcknowledgeMode.SESSION_TRANSACTED;

  readonly #engine: EngineInternals;
  readonly #consumers = new Set<MessageConsumer>();
  readonly #producers = new Set<MessageProducer>();
  readonly #browsers = new Set<QueueBrowser>();
  #unacknowledged: Unacknowledged[] = [];
  #uncommittedSends: { stored: StoredMessage; routed: Routed[] }[] = [];
  /** Where this transaction's sends to distributed queues went (transaction affinity, `000`). */
  #affinity: TransactionAffinity | undefined;
  /** Listener deliveries, one at a time (SES-5), and each consumer's window (SES-6). */
  readonly #listeners = new ListenerPipeline<MessageConsumer>({
    mayRun: () => this.connection.started && !this.#closing,
  });
  /** Set when `close()` is called: no delivery starts any more, the one in progress finishes. */
  #closing = false;
  #closed = false;
  #closePromise: Promise<void> | undefined;
  /** Per-session override of the factory's redelivery delay (DLV-1); undefined = factory value. */
  #redeliveryDelay: number | undefined;

  /** @internal The connection this session belongs to; users keep their own reference to it. */
  readonly connection: ConnectionLink;
  readonly acknowledgeMode: AcknowledgeModeValue;

  /** @internal Made by `connection.createSession()`, which checked the mode. */
  static create(connection: ConnectionLink, acknowledgeMode: AcknowledgeModeValue): Session {
    return new Session(connection, acknowledgeMode);
  }

  /** Not for applications: a Session comes from `connection.createSession()`. */
  // Private, not marked internal: a stripped constructor would publish `new Session()`.
  private constructor(connection: ConnectionLink, acknowledgeMode: AcknowledgeModeValue) {
    this.connection = connection;
    this.acknowledgeMode = acknowledgeMode;
    this.#engine = internalsOf(connection.engine);
    if (this.transacted) this.#affinity = new Map();
  }

  /** @internal The open transaction's members of distributed queues; undefined outside a transaction. */
  get transactionAffinity(): TransactionAffinity | undefined {
    return this.#affinity;
  }

  get transacted(): boolean {
    return this.acknowledgeMode === AcknowledgeMode.SESSION_TRANSACTED;
  }

  /** JMS `getAcknowledgeMode`. */
  getAcknowledgeMode(): AcknowledgeModeValue {
    return this.acknowledgeMode;
  }

  getTransacted(): boolean {
    return this.transacted;
  }

  /**
   * Overrides the connection factory's redelivery delay for this session (DLV-1); undefined goes
   * back to the factory's. Checked as the factory checks it: a negative or NaN delay is refused.
   */
  setRedeliveryDelay(delayMs: number | undefined): void {
    this.#redeliveryDelay = delayMs === undefined ? undefined : nonNegativeMs(delayMs, 'redeliveryDelay');
  }

  /** The redelivery delay this session applies (DLV-1): its own, or the connection factory's. */
  getRedeliveryDelay(): number {
    return this.#redeliveryDelay ?? this.connection.factoryOptions.redeliveryDelay;
  }

  // --- factories for messages and destinations ---

  createMessage(): Message {
    return new Message();
  }
  createTextMessage(text: string | null = null): TextMessage {
    return new TextMessage(text);
  }
  createXMLMessage(xml: string | null = null): XMLMessage {
    return new XMLMessage(xml);
  }
  createBytesMessage(bytes?: Uint8Array): BytesMessage {
    return new BytesMessage(bytes);
  }
  createMapMessage(): MapMessage {
    return new MapMessage();
  }
  createStreamMessage(): StreamMessage {
    return new StreamMessage();
  }
  /** A handle to a queue; it must exist or be creatable when used. */
  createQueue(name: string): Queue {
    return new Queue(name);
  }
  createTopic(name: string): Topic {
    return new Topic(name);
  }
  createTemporaryQueue(): TemporaryQueue {
    this.#checkOpen();
    return this.connection.createTemporaryQueue();
  }
  createTemporaryTopic(): TemporaryTopic {
    this.#checkOpen();
    return this.connection.createTemporaryTopic();
  }

  // --- producers, consumers, browsers ---

  /** A producer; with no destination, each send names one. */
  createProducer(destination: Destination | null = null): MessageProducer {
    this.#checkOpen();
    if (destination) this.#engine.registry.checkProducerDestination(destination);
    const producer = MessageProducer.create(this, destination);
    this.#producers.add(producer);
    return producer;
  }

  /** A consumer of a queue, or a non-durable subscriber of a topic (SES-5, DST-4). */
  createConsumer(destination: Destination, selector: string | null = null, noLocal = false): MessageConsumer {
    this.#checkOpen();
    const state = this.#engine.registry.forConsumer(destination, 'create a consumer');
    this.#checkTemporaryOwner(destination);
    const compiled = parseSelector(selector);
    if (state.kind === 'queue') {
      return this.#attach(
        { backlog: state.backlog, destination: state.handle, subscription: null },
        compiled,
      );
    }
    const subscription = this.#engine.subscriptions.subscribe(state, {
      name: null,
      clientId: this.connection.getClientID(),
      selector: compiled.text === null ? null : compiled,
      noLocal,
      durable: false,
      shared: false,
      connectionId: this.connection.id,
    });
    return this.#attach(
      { backlog: subscription.backlog, destination: state.handle, subscription },
      null,
      compiled.text,
    );
  }

  /** A durable subscriber (DST-3): needs a client id; one active subscriber at a time. */
  createDurableSubscriber(
    topic: Topic,
    name: string,
    selector: string | null = null,
    noLocal = false,
  ): MessageConsumer {
    const clientId = this.connection.getClientID();
    if (clientId === null)
      throw new IllegalStateError(
        'a durable subscription needs a client id: set one on the connection first',
      );
    return this.#subscribeNamed(topic, name, selector, noLocal, { durable: true, shared: false, clientId });
  }

  /** JMS 2.0 name for {@link createDurableSubscriber}. */
  createDurableConsumer(
    topic: Topic,
    name: string,
    selector: string | null = null,
    noLocal = false,
  ): MessageConsumer {
    return this.createDurableSubscriber(topic, name, selector, noLocal);
  }

  /** A consumer of a shared non-durable subscription (JMS 2.0): consumers share its messages. */
  createSharedConsumer(topic: Topic, name: string, selector: string | null = null): MessageConsumer {
    return this.#subscribeNamed(topic, name, selector, false, {
      durable: false,
      shared: true,
      clientId: this.connection.getClientID(),
    });
  }

  /** A consumer of a shared durable subscription (JMS 2.0). */
  createSharedDurableConsumer(topic: Topic, name: string, selector: string | null = null): MessageConsumer {
    return this.#subscribeNamed(topic, name, selector, false, {
      durable: true,
      shared: true,
      clientId: this.connection.getClientID(),
    });
  }

  #subscribeNamed(
    topic: Topic,
    name: string,
    selector: string | null,
    noLocal: boolean,
    kind: { durable: boolean; shared: boolean; clientId: string | null },
  ): MessageConsumer {
    this.#checkOpen();
    if (typeof name !== 'string' || name.trim() === '')
      throw new InvalidDestinationError('a subscription needs a non-empty name');
    const state = this.#engine.registry.forNamedSubscription(topic);
    if (state.kind !== 'topic')
      throw new InvalidDestinationError(`'${state.handle.toString()}' is not a topic`);
    if (kind.durable && topic.temporary)
      throw new InvalidDestinationError('a durable subscription cannot be made on a temporary topic');
    this.#checkTemporaryOwner(topic);
    const compiled = parseSelector(selector);
    const subscription = this.#engine.subscriptions.subscribe(state, {
      name,
      clientId: kind.clientId,
      selector: compiled.text === null ? null : compiled,
      noLocal,
      durable: kind.durable,
      shared: kind.shared,
      connectionId: this.connection.id,
    });
    return this.#attach(
      { backlog: subscription.backlog, destination: state.handle, subscription },
      null,
      compiled.text,
    );
  }

  /** Deletes a durable subscription (DST-3): refused while it is active or holds unacknowledged messages. */
  unsubscribe(name: string): void {
    this.#checkOpen();
    this.#engine.subscriptions.unsubscribe(this.connection.getClientID(), name);
  }

  #attach(
    target: ConsumerTarget,
    selector: ReturnType<typeof parseSelector> | null,
    selectorText: string | null = selector?.text ?? null,
  ): MessageConsumer {
    const consumer = MessageConsumer.create(
      this,
      this.#listeners,
      target,
      selector?.text === null ? null : selector,
      selectorText,
    );
    this.#consumers.add(consumer);
    if (target.subscription) target.subscription.consumers++;
    target.backlog.addConsumer(consumer);
    return consumer;
  }

  /** A browser over a queue's available messages (DST-7). */
  createBrowser(queue: Queue, selector: string | null = null): QueueBrowser {
    this.#checkOpen();
    const state = this.#engine.registry.forConsumer(queue, 'create a browser');
    if (state.kind !== 'queue')
      throw new InvalidDestinationError(
        `'${state.handle.toString()}' is not a queue: only queues can be browsed`,
      );
    const browser = QueueBrowser.create(this, state, parseSelector(selector));
    this.#browsers.add(browser);
    return browser;
  }

  #checkTemporaryOwner(destination: Destination): void {
    if (
      destination.temporary &&
      (destination as TemporaryQueue | TemporaryTopic).ownerConnectionId !== this.connection.id
    ) {
      throw new InvalidDestinationError(
        `temporary destination '${destination.name}' belongs to another connection: only its own connection may consume from it`,
      );
    }
  }

  // --- delivery (internal) ---

  /** @internal The connection started: resume delivery. */
  connectionStarted(): void {
    for (const consumer of this.#consumers) consumer.backlogDispatch();
    this.#listeners.start();
  }

  /** @internal Whether the caller is this session's listener in progress (or code it started). */
  calledFromOwnListener(): boolean {
    return this.#listeners.calledFromListener();
  }

  /** @internal Resolves when no listener is running (for `connection.stop()`). */
  idle(): Promise<void> {
    return this.#listeners.idle();
  }

  /**
   * @internal Hands an entry to the application: counts the delivery (JMSXDeliveryCount,
   * JMSRedelivered) and returns the read-only copy the application sees.
   */
  deliver(consumer: MessageConsumer, entry: Entry, backlog: Backlog): Message {
    entry.deliveryCount++;
    const message = entry.stored.load().copy();
    message.deliveryCount = entry.deliveryCount;
    message.setJMSRedelivered(entry.deliveryCount > 1);
    message.markReadOnly();
    if (this.acknowledgeMode === AcknowledgeMode.NO_ACKNOWLEDGE) {
      backlog.acknowledge(entry);
      this.#engine.storeLink.writeLater(this.#engine.storeLink.ackRecords([{ entry, backlog }]));
      return message;
    }
    this.#recordDelivery(consumer, entry, backlog, message);
    // The count survives a crash, so the message comes back marked redelivered (PER-1, PER-2).
    this.#engine.storeLink.recordDeliveryState(backlog, entry, 0);
    return message;
  }

  /**
   * @internal Hands an entry to a synchronous receive. In AUTO and DUPS_OK mode it is
   * acknowledged as the receive returns (SES-2): when that writes the store, the message comes
   * as a promise settled by the write; otherwise as itself, with nothing allocated for the
   * acknowledgement (the hot path of a receive loop).
   */
  deliverToReceive(consumer: MessageConsumer, entry: Entry, backlog: Backlog): Message | Promise<Message> {
    const mode = this.acknowledgeMode;
    if (mode !== AcknowledgeMode.AUTO_ACKNOWLEDGE && mode !== AcknowledgeMode.DUPS_OK_ACKNOWLEDGE) {
      return this.deliver(consumer, entry, backlog);
    }
    entry.deliveryCount++;
    // Acknowledged as it is handed over: when no other backlog holds the message, the engine never
    // reads it again, so the receiver gets the stored message itself instead of a copy. A paged
    // message read back from the store is already a copy of its own (MessageStore.readMessage).
    const stored = entry.stored;
    const message = stored.paged
      ? stored.load()
      : stored.holders === 1
        ? stored.message
        : stored.message.copy();
    message.deliveryCount = entry.deliveryCount;
    message.setJMSRedelivered(entry.deliveryCount > 1);
    message.markReadOnly();
    const storeLink = this.#engine.storeLink;
    if (!storeLink.isStored(backlog, entry)) {
      backlog.acknowledge(entry);
      return message;
    }
    const written = this.#acknowledgeRecords([{ entry, backlog, consumer }]);
    return written ? written.then(() => message) : message;
  }

  #recordDelivery(consumer: MessageConsumer, entry: Entry, backlog: Backlog, message: Message): void {
    const record = { entry, backlog, consumer, message };
    this.#unacknowledged.push(record);
    if (this.acknowledgeMode === AcknowledgeMode.CLIENT_ACKNOWLEDGE) {
      message.acknowledger = () => this.#clientAcknowledge(record);
    }
  }

  /**
   * @internal Acknowledges one delivered entry now (AUTO / DUPS_OK after receive or listener).
   * Returns a promise only when the store must be written, so non-persistent traffic stays synchronous.
   */
  autoAcknowledge(entry: Entry): Promise<void> | undefined {
    const mode = this.acknowledgeMode;
    if (mode !== AcknowledgeMode.AUTO_ACKNOWLEDGE && mode !== AcknowledgeMode.DUPS_OK_ACKNOWLEDGE)
      return undefined;
    const index = this.#unacknowledgedIndex(entry);
    if (index < 0) return undefined;
    const record = this.#unacknowledged[index]!;
    if (index === this.#unacknowledged.length - 1) this.#unacknowledged.pop();
    else this.#unacknowledged.splice(index, 1);
    return this.#acknowledgeRecords([record]);
  }

  /**
   * @internal A listener threw. A poison error sends the message to the error destination at once
   * (DLV-9); otherwise, in AUTO/DUPS_OK mode, it is redelivered (SES-4). Returns true when the
   * message was parked as poison: that is the outcome the listener asked for, not a connection
   * error to report.
   */
  listenerFailed(entry: Entry, error: unknown): boolean {
    const index = this.#unacknowledgedIndex(entry);
    if (index < 0) return false;
    if (isPoison(error)) {
      const [record] = this.#unacknowledged.splice(index, 1);
      this.#poison(record!, (error as Error).message);
      return true;
    }
    if (this.transacted || this.acknowledgeMode === AcknowledgeMode.CLIENT_ACKNOWLEDGE) return false;
    const [record] = this.#unacknowledged.splice(index, 1);
    this.#release([record!], true);
    return false;
  }

  /** Where an entry is among the unacknowledged; searched from the newest, which it nearly always is. */
  #unacknowledgedIndex(entry: Entry): number {
    let index = this.#unacknowledged.length - 1;
    while (index >= 0 && this.#unacknowledged[index]!.entry !== entry) index--;
    return index;
  }

  /**
   * Rejects a received, unacknowledged message as permanently bad (DLV-9): it goes to its
   * destination's error destination at once, without using up redeliveries, whatever the mode.
   */
  reject(message: Message, reason: string | Error = 'rejected as poison by the consumer'): void {
    this.#checkOpen();
    const record = this.#unacknowledged.find((u) => u.message === message);
    if (!record)
      throw new IllegalStateError(
        'only a message received by this session and not yet acknowledged can be rejected',
      );
    this.#unacknowledged.splice(this.#unacknowledged.indexOf(record), 1);
    // Only the text is kept: building an Error (and its stack) per rejected message costs more
    // than the move to the error destination itself.
    this.#poison(record, typeof reason === 'string' ? reason : reason.message);
  }

  #poison(record: Unacknowledged, reason: string): void {
    this.#engine.errorDestinations.move(record.backlog, record.entry, `poison: ${reason}`);
  }

  async #clientAcknowledge(record: Unacknowledged): Promise<void> {
    if (this.#closed) throw new IllegalStateError('cannot acknowledge: the session is closed');
    const index = this.#unacknowledged.indexOf(record);
    if (index < 0) return; // already acknowledged, or recovered and not yet redelivered
    const upTo =
      this.connection.factoryOptions.acknowledgePolicy === 'previous'
        ? index + 1
        : this.#unacknowledged.length;
    const records = this.#unacknowledged.splice(0, upTo);
    await this.#acknowledgeRecords(records);
  }

  /** JMS 2.0 `Session.acknowledge()`: acknowledges everything this session has received (CLIENT mode). */
  async acknowledge(): Promise<void> {
    this.#checkOpen();
    if (this.acknowledgeMode !== AcknowledgeMode.CLIENT_ACKNOWLEDGE) return;
    await this.#acknowledgeRecords(this.#unacknowledged.splice(0));
  }

  #acknowledgeRecords(records: readonly Unacknowledged[]): Promise<void> | undefined {
    if (records.length === 0) return undefined;
    const storeLink = this.#engine.storeLink;
    const operations = storeLink.ackRecords(records);
    for (const { entry, backlog } of records) backlog.acknowledge(entry);
    return operations.length > 0 ? storeLink.write(operations) : undefined;
  }

  // --- recover, commit, rollback ---

  /**
   * Stops delivery, marks every unacknowledged message redelivered and restarts from the oldest
   * (SES-3). Messages prefetched for listeners and not yet seen go back too, so order holds.
   */
  async recover(): Promise<void> {
    this.#checkOpen();
    if (this.transacted)
      throw new IllegalStateError('recover() is for non-transacted sessions; use rollback()');
    // A session is used by one thread of control (JMS): called while a listener runs, this comes
    // from the listener itself, which must not wait for itself to finish.
    if (!this.#listeners.listenerRunning) await this.idle();
    this.#releaseAll(true);
  }

  /**
   * Commits sends and receives as one atomic unit (SES-2). On a store failure everything rolls back.
   * Not async itself: a transaction with nothing to store (non-persistent traffic, a listener's
   * commit per message) completes at once and returns a settled promise, with no async frame.
   */
  commit(): Promise<void> {
    try {
      this.#checkOpen();
      if (!this.transacted) throw new IllegalStateError('commit() is only for transacted sessions');
      const { storeLink } = this.#engine;
      // Fresh arrays for what is there: sends and receives made while this commit waits for the
      // store belong to the next transaction, not to this one. An empty list is kept as it is (a
      // transaction that only received, as a consumer's usually does, makes no array for sends).
      const sends = this.#uncommittedSends.length > 0 ? this.#uncommittedSends : NO_SENDS;
      const receives = this.#unacknowledged.length > 0 ? this.#unacknowledged : NO_RECEIVES;
      if (sends !== NO_SENDS) this.#uncommittedSends = [];
      if (receives !== NO_RECEIVES) this.#unacknowledged = [];
      if (this.#affinity?.size) this.#affinity = new Map();
      const acknowledgements = storeLink.ackRecords(receives);
      let operations = acknowledgements;
      if (sends.length > 0) {
        const all = sends.flatMap((send) => storeLink.sendRecords(send.stored, send.routed));
        for (const operation of acknowledgements) all.push(operation);
        operations = all;
      }
      if (operations.length > 0) return this.#commitStored(operations, sends, receives);
      this.#applyCommit(sends, receives);
      return SETTLED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The rest of a commit that writes the store: applied once written, rolled back if not. */
  async #commitStored(
    operations: readonly StoreOperation[],
    sends: readonly { stored: StoredMessage; routed: Routed[] }[],
    receives: readonly Unacknowledged[],
  ): Promise<void> {
    try {
      await this.#engine.storeLink.write(operations);
    } catch (error) {
      this.#discardSends(sends);
      this.#release(receives, true);
      throw new TransactionRolledBackError(
        'commit failed and the transaction was rolled back: the store did not accept it',
        { cause: error },
      );
    }
    this.#applyCommit(sends, receives);
  }

  #applyCommit(
    sends: readonly { stored: StoredMessage; routed: Routed[] }[],
    receives: readonly Unacknowledged[],
  ): void {
    const { sendPipeline } = this.#engine;
    for (const { entry, backlog } of receives) backlog.acknowledge(entry);
    for (const send of sends) sendPipeline.addToBacklogs(send.stored, send.routed);
  }

  /**
   * Discards uncommitted sends and makes received messages available again, redelivered (SES-2).
   * Not async itself: called from a listener (the usual case) it has nothing to wait for.
   */
  rollback(): Promise<void> {
    try {
      this.#checkOpen();
      if (!this.transacted) throw new IllegalStateError('rollback() is only for transacted sessions');
      if (!this.#listeners.listenerRunning) return this.idle().then(() => this.#rollbackNow());
      this.#rollbackNow();
      return SETTLED;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #rollbackNow(): void {
    if (this.#uncommittedSends.length > 0) {
      this.#discardSends(this.#uncommittedSends);
      this.#uncommittedSends = [];
    }
    this.#affinity?.clear();
    this.#releaseAll(true);
  }

  /** @internal Records a send made in this transaction; it is pending until commit. */
  holdUncommitted(stored: StoredMessage, routed: Routed[]): void {
    for (const { backlog, entry } of routed) backlog.holdUncommitted(entry);
    this.#uncommittedSends.push({ stored, routed });
  }

  #discardSends(sends: readonly { routed: Routed[] }[]): void {
    for (const send of sends) for (const { backlog, entry } of send.routed) backlog.discardUncommitted(entry);
  }

  /** Puts back every unacknowledged and every prefetched message, oldest first. */
  #releaseAll(withDelay: boolean): void {
    const records = this.#unacknowledged;
    if (records.length > 0) this.#unacknowledged = [];
    const prefetched = this.#listeners.takeAll();
    this.#release(records, withDelay, prefetched);
  }

  #release(records: readonly Unacknowledged[], withDelay: boolean, prefetched: readonly Queued[] = []): void {
    const { redelivery, storeLink, clock } = this.#engine;
    const sessionDelay = this.getRedeliveryDelay();
    if (records.length === 1 && prefetched.length === 0) {
      // One message back (a transaction per message): nothing to group.
      const { entry, backlog } = records[0]!;
      if (redelivery.moveToErrorDestinationIfLimitReached(backlog, entry)) return;
      const delay = withDelay ? redelivery.delayFor(backlog, entry, sessionDelay) : 0;
      // The clock is read only for a stored entry: for any other the release reads it itself.
      if (delay > 0 && storeLink.isStored(backlog, entry))
        storeLink.recordDeliveryState(backlog, entry, clock.now() + delay);
      backlog.release(entry, delay);
      return;
    }
    // Grouped by backlog and delay (a backoff makes delays differ per entry), each group released at once.
    const groups = new Map<Backlog, Map<number, Entry[]>>();
    const add = (backlog: Backlog, delay: number, entry: Entry) => {
      let byDelay = groups.get(backlog);
      if (!byDelay) groups.set(backlog, (byDelay = new Map<number, Entry[]>()));
      const entries = byDelay.get(delay);
      if (entries) entries.push(entry);
      else byDelay.set(delay, [entry]);
    };
    for (const { entry, backlog } of records) {
      if (redelivery.moveToErrorDestinationIfLimitReached(backlog, entry)) continue;
      add(backlog, withDelay ? redelivery.delayFor(backlog, entry, sessionDelay) : 0, entry);
    }
    for (const { entry, backlog } of prefetched) add(backlog, 0, entry);
    for (const [backlog, byDelay] of groups) {
      for (const [delay, entries] of byDelay) {
        if (delay > 0)
          for (const entry of entries) storeLink.recordDeliveryState(backlog, entry, clock.now() + delay);
        backlog.releaseMany(entries, delay);
      }
    }
  }

  // --- closing ---

  /** @internal A consumer closed: return what it held that the application never saw, and, outside a transaction, what it did not acknowledge (SES-4). */
  consumerClosed(consumer: MessageConsumer): void {
    this.#consumers.delete(consumer);
    const prefetched = this.#listeners.takeFor(consumer);
    let records: Unacknowledged[] = [];
    if (!this.transacted) {
      records = this.#unacknowledged.filter((u) => u.consumer === consumer);
      this.#unacknowledged = this.#unacknowledged.filter((u) => u.consumer !== consumer);
    }
    this.#release(records, false, prefetched);
  }

  /** @internal */
  producerClosed(producer: MessageProducer): void {
    this.#producers.delete(producer);
  }

  /** @internal */
  browserClosed(browser: QueueBrowser): void {
    this.#browsers.delete(browser);
  }

  /**
   * Closes the session: pending receives return null, an open transaction rolls back,
   * unacknowledged messages go back without delay, its consumers, producers and browsers close
   * (SES-1). It waits for the listener in progress to return, and until then that listener keeps
   * the full use of the session and its message goes to no other consumer.
   *
   * Called from one of this session's own listeners, it does not wait for that listener (which
   * would wait for ever): JMS lets a provider either refuse this or close the session, and this
   * one closes it. The session's methods fail from then on; the listener's message is settled
   * when the listener returns, as its mode says (AUTO and DUPS_OK acknowledge it, a transacted
   * session rolls it back, CLIENT mode puts it back unacknowledged), and then the rest of the
   * session is closed. Closing twice does nothing; a second call waits as the first.
   */
  close(): Promise<void> {
    if (this.#closePromise) return this.calledFromOwnListener() ? Promise.resolve() : this.#closePromise;
    this.#closing = true;
    const ownCall = this.#listeners.runningCall;
    if (ownCall?.isCurrent()) {
      this.#closed = true;
      this.#closePromise = Promise.resolve();
      ownCall.afterwards(() => {
        this.#closeEverything().catch((error: unknown) => this.connection.reportError(error));
      });
      return this.#closePromise;
    }
    this.#closePromise = this.#closeAfterListener();
    return this.#closePromise;
  }

  async #closeAfterListener(): Promise<void> {
    const running = this.#listeners.runningCall;
    if (running) await running.done;
    this.#closed = true;
    await this.#closeEverything();
  }

  /** What closing does once no listener runs: give everything back and close what the session made. */
  async #closeEverything(): Promise<void> {
    this.#discardSends(this.#uncommittedSends);
    this.#uncommittedSends = [];
    this.#releaseAll(false);
    for (const consumer of [...this.#consumers]) await consumer.close();
    for (const producer of [...this.#producers]) producer.close();
    for (const browser of [...this.#browsers]) browser.close();
    this.connection.sessionClosed(this);
  }

  /** @internal True from the moment `close()` is called: consumers take no more messages. */
  get closing(): boolean {
    return this.#closing;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** @internal */
  checkOpen(): void {
    this.#checkOpen();
  }

  #checkOpen(): void {
    if (this.#closed) throw new IllegalStateError('session is closed');
    if (this.connection.closed) throw new IllegalStateError('connection is closed');
  }
}
