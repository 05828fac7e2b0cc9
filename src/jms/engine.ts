/**
 * The JMS engine: the registry of destinations and subscriptions, the send path, and the link to
 * the store. Client objects (connections, sessions, producers, consumers) live in `client/` and
 * call the methods marked internal here. State changes are synchronous; only store writes wait.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, TimerQueue, systemClock } from './clock.js';
import type { Backlog} from './destination/backlog.js';
import { type BacklogHooks } from './destination/backlog.js';
import { type Destination, Queue, Topic, parseDestination } from './destination/destination.js';
import type { DestinationOptions } from './destination/destination-options.js';
import {
  type DestinationState,
  QueueState,
  Subscription,
  type SubscriptionSpec,
  TopicState,
} from './destination/destination-state.js';
import { Entry, StoredMessage } from './destination/entry.js';
import { parseSchedule } from './schedule.js';
import { parseSelector } from './selector/index.js';
import { IllegalStateError, InvalidClientIDError, InvalidDestinationError } from './errors.js';
import { type EngineLogger, silentLogger } from './logger.js';
import {
  type EngineStatistics,
  type DestinationStatistics,
  destinationStatistics,
  totalStatistics,
} from './statistics.js';
import type { MessageStore, StoreOperation } from './store-port.js';

/** How an engine is built. */
export interface EngineOptions {
  /** Where durable state goes (PER-4). */
  store: MessageStore;
  /** Time and timers; tests pass a fake clock. Default: the system clock. */
  clock?: Clock;
  /**
   * Whether a producer or consumer on an unknown destination creates it with default settings.
   * A destination deleted at run time is never re-created this way. Default true.
   */
  autoCreateDestinations?: boolean;
  logger?: EngineLogger;
}

/** One message on its way into one backlog. */
export interface Routed {
  backlog: Backlog;
  entry: Entry;
}

const DURABLE_KEY_PREFIX = 'sub://';
const NO_OPERATIONS: readonly StoreOperation[] = Object.freeze([]);

export class JmsEngine {
  readonly clock: Clock;
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  readonly #store: MessageStore;
  readonly #autoCreate: boolean;
  readonly #destinations = new Map<string, DestinationState>();
  /** Destinations deleted at run time: auto-create leaves them deleted (DST-6). */
  readonly #deleted = new Set<string>();
  /** Durable and shared subscriptions by key. */
  readonly #namedSubscriptions = new Map<string, Subscription>();
  readonly #clientIds = new Set<string>();
  /** Backlogs whose persistent messages are stored: store-enabled queues and durable subscriptions. */
  readonly #durableBacklogs = new WeakSet<Backlog>();
  /** The destination each backlog belongs to, for its settings. */
  readonly #owners = new WeakMap<Backlog, DestinationState>();
  readonly #idPrefix = `ID:${randomBytes(6).toString('hex')}-`;
  #seq = 0;
  #nextConnection = 0;
  #pendingOperations: StoreOperation[] = [];
  #flush: Promise<void> | undefined;
  #closed = false;
  readonly #hooks: BacklogHooks;

  constructor(options: EngineOptions) {
    this.clock = options.clock ?? systemClock;
    this.timers = new TimerQueue(this.clock);
    this.#hooks = this.#createHooks();
    this.logger = options.logger ?? silentLogger;
    this.#store = options.store;
    this.#autoCreate = options.autoCreateDestinations ?? true;
  }

  /**
   * Opens an engine on a store, recovering what a previous run left: destinations made at run
   * time, durable subscriptions, and their messages with delivery counts and delivery times (PER-1, PER-2).
   */
  static async open(options: EngineOptions): Promise<JmsEngine> {
    const engine = new JmsEngine(options);
    await engine.#recover();
    return engine;
  }

  async #recover(): Promise<void> {
    const recovered = await this.#store.recover();
    this.#seq = Math.max(this.#seq, recovered.maxSeq);
    for (const record of recovered.destinations) {
      const handle = record.kind === 'queue' ? new Queue(record.name) : new Topic(record.name);
      if (!this.#destinations.has(handle.toString()))
        this.#register(handle, record.options);
    }
    for (const record of recovered.subscriptions) {
      const topic =
        this.#destinations.get(new Topic(record.topic).toString()) ??
        this.#register(new Topic(record.topic), {});
      if (topic.kind !== 'topic') continue;
      const selector = parseSelector(record.selector);
      this.subscribe(topic, {
        name: record.name,
        clientId: record.clientId,
        selector: selector.text === null ? null : selector,
        noLocal: record.noLocal,
        durable: true,
        shared: record.shared,
        connectionId: null,
      });
    }
    const backlogs = new Map<string, Backlog>();
    for (const state of this.#destinations.values()) {
      if (state.kind === 'queue') backlogs.set(state.backlog.key, state.backlog);
    }
    for (const subscription of this.#namedSubscriptions.values())
      backlogs.set(subscription.backlog.key, subscription.backlog);
    const storedById = new Map<string, StoredMessage>();
    let restored = 0;
    for (const ref of recovered.refs) {
      const backlog = backlogs.get(ref.backlog);
      if (!backlog) continue;
      let stored = storedById.get(ref.id);
      if (!stored) {
        stored = new StoredMessage(ref.message, ref.seq, ref.message.getSize(), true, 'recovered', null);
        storedById.set(ref.id, stored);
      }
      stored.references++;
      stored.scheduled = ref.message.getJMSDeliveryTime() > this.clock.now();
      const entry = new Entry(stored);
      entry.deliveryCount = ref.deliveryCount;
      backlog.add(entry);
      restored++;
    }
    // Recovery rewrote nothing: what was stored is as it was.
    this.#pendingOperations = [];
    this.logger.info({ destinations: this.#destinations.size, messages: restored }, 'store recovered');
  }

  // --- administration ---

  /** Creates a queue, or returns the existing one (its settings unchanged). The definition is stored (PER-2). */
  async createQueue(name: string, options: DestinationOptions = {}): Promise<Queue> {
    return (await this.#create(new Queue(checkName(name)), options)) as Queue;
  }

  /** Creates a topic, or returns the existing one. */
  async createTopic(name: string, options: DestinationOptions = {}): Promise<Topic> {
    return (await this.#create(new Topic(checkName(name)), options)) as Topic;
  }

  async #create(handle: Queue | Topic, options: DestinationOptions): Promise<Destination> {
    const existing = this.#destinations.get(handle.toString());
    if (existing) return existing.handle;
    this.#deleted.delete(handle.toString());
    this.#register(handle, options);
    await this.commit([
      {
        op: 'putDestination',
        destination: { kind: handle.kind, name: handle.name, options: { ...options } },
      },
    ]);
    return handle;
  }

  #register(handle: Destination, options: DestinationOptions): DestinationState {
    const state =
      handle.kind === 'queue' ? this.#newQueueState(handle, options) : new TopicState(handle, options);
    this.#destinations.set(handle.toString(), state);
    this.logger.info({ destination: handle.toString() }, 'destination created');
    return state;
  }

  #newQueueState(handle: Destination, options: DestinationOptions): QueueState {
    const state = new QueueState(handle, options, this.#hooks);
    this.#owners.set(state.backlog, state);
    if (!handle.temporary && options.storeEnabled !== false) this.#durableBacklogs.add(state.backlog);
    return state;
  }

  /** The destinations that exist now. */
  destinations(): Destination[] {
    return [...this.#destinations.values()].map((state) => state.handle);
  }

  /** Statistics of one destination (DST-9). */
  destinationStatistics(destination: Destination | string): DestinationStatistics {
    return destinationStatistics(this.#state(toHandle(destination)));
  }

  /** Statistics of every destination and their totals (DST-9). */
  statistics(): EngineStatistics {
    const destinations = [...this.#destinations.values()].map(destinationStatistics);
    return { destinations, totals: totalStatistics(destinations) };
  }

  // --- internal: used by client objects ---

  /** @internal A new connection id. */
  newConnectionId(): string {
    return `connection-${++this.#nextConnection}`;
  }

  /** @internal The JMSMessageID of the message sent with sequence `seq`: unique per gateway and restart (MSG-1). */
  messageIdFor(seq: number): string {
    return this.#idPrefix + seq.toString(36);
  }

  /** @internal The absolute delivery time of a send (DLV-5): a destination's TimeToDeliverOverride wins. */
  deliveryTime(state: DestinationState, now: number, deliveryDelay: number): number {
    const override = state.options.timeToDeliverOverride;
    if (typeof override === 'string') return parseSchedule(override).nextScheduledTime(now);
    return now + (override ?? deliveryDelay);
  }

  /** @internal Waits until the destination has room for the message (DLV-7); resolves at once when no quota applies. */
  admit(_state: DestinationState, _stored: StoredMessage, _timeoutMs: number): Promise<void> | void {
    return undefined;
  }

  /** @internal The destination's RedeliveryDelayOverride for a backlog, if any (DLV-1). */
  redeliveryDelayOverride(backlog: Backlog): number | undefined {
    return this.#ownerOptions(backlog)?.redeliveryDelayOverride;
  }

  /** @internal A unit-of-order member finished (acknowledged, committed, moved): the group may go on (ORD-4). */
  unitOfWorkDone(_entry: Entry): void {}

  /**
   * @internal Called before a delivered entry goes back: when it has used up its redeliveries
   * (DLV-2) it is moved to the error destination, or deleted when there is none (DLV-3), and
   * true is returned.
   */
  undeliverable(backlog: Backlog, entry: Entry): boolean {
    const limit = this.#ownerOptions(backlog)?.redeliveryLimit ?? entry.stored.redeliveryLimit;
    if (limit < 0 || entry.deliveryCount - 1 < limit) return false;
    this.moveToErrorDestination(
      backlog,
      entry,
      `redelivery limit ${limit} reached after ${entry.deliveryCount} deliveries`,
    );
    return true;
  }

  /**
   * @internal Moves an entry to its destination's error destination, keeping headers and
   * properties and recording origin, reason and delivery count (DLV-3); deletes it (counted and
   * logged) when there is none.
   */
  moveToErrorDestination(backlog: Backlog, entry: Entry, reason: string): void {
    const owner = this.#owners.get(backlog);
    const target = owner?.options.errorDestination
      ? this.#destinations.get(owner.options.errorDestination)
      : undefined;
    const messageId = entry.message.getJMSMessageID();
    if (!target) {
      this.messagesDiscarded++;
      this.logger.warn(
        { messageId, destination: owner?.handle.toString(), reason },
        'undeliverable message deleted: no error destination',
      );
      backlog.remove(entry, 'deleted');
      return;
    }
    const moved = entry.message.copy();
    moved.setProviderProperty('JMS_ErrorOrigin', { type: 'string', value: owner!.handle.toString() });
    moved.setProviderProperty('JMS_ErrorReason', { type: 'string', value: reason });
    moved.setProviderProperty('JMS_ErrorDeliveryCount', { type: 'int', value: entry.deliveryCount });
    moved.setJMSDestination(target.handle);
    const stored = new StoredMessage(
      moved,
      this.nextSeq(),
      moved.getSize(),
      entry.stored.persistent && target.options.storeEnabled !== false,
      entry.stored.connectionId,
      entry.stored.clientId,
    );
    const routed = this.route(target, stored);
    this.enqueue(this.sendOperations(stored, routed));
    backlog.remove(entry, 'deleted');
    for (const r of routed) r.backlog.add(r.entry);
    this.logger.debug(
      { messageId, from: owner!.handle.toString(), to: target.handle.toString(), reason },
      'message moved to error destination',
    );
  }

  /** Undeliverable messages deleted because their destination has no error destination (DLV-3). */
  messagesDiscarded = 0;

  /** @internal The state of a destination that exists, or undefined. */
  resolveExisting(handle: Destination): DestinationState | undefined {
    return this.#destinations.get(handle.toString());
  }

  /** @internal Consumers attached to a destination now. */
  consumerCount(state: DestinationState): number {
    return state.kind === 'queue'
      ? state.backlog.consumerCount
      : [...state.subscriptions()].reduce((n, s) => n + s.backlog.consumerCount, 0);
  }

  #ownerOptions(backlog: Backlog): DestinationOptions | undefined {
    return this.#owners.get(backlog)?.options;
  }

  /** @internal The next send sequence number. */
  nextSeq(): number {
    return ++this.#seq;
  }

  /** @internal Claims a client id for a connection (SES-1). */
  claimClientId(clientId: string): void {
    if (typeof clientId !== 'string' || clientId.trim() === '')
      throw new InvalidClientIDError(`client id '${String(clientId)}' is empty`);
    if (this.#clientIds.has(clientId))
      throw new InvalidClientIDError(`client id '${clientId}' is already in use by another connection`);
    this.#clientIds.add(clientId);
  }

  /** @internal Releases a client id when its connection closes. */
  releaseClientId(clientId: string): void {
    this.#clientIds.delete(clientId);
  }

  /** @internal The state behind a handle, created on first use if allowed. */
  resolve(destination: Destination | null | undefined, purpose: string): DestinationState {
    if (!destination) throw new InvalidDestinationError(`no destination given to ${purpose}`);
    if (!(destination instanceof Queue) && !(destination instanceof Topic)) {
      throw new InvalidDestinationError(`${purpose}: ${String(destination)} is not a queue or topic`);
    }
    const key = destination.toString();
    const state = this.#destinations.get(key);
    if (state) return state;
    if (destination.temporary || this.#deleted.has(key) || !this.#autoCreate) {
      throw new InvalidDestinationError(
        `${purpose}: destination '${key}' does not exist${this.#deleted.has(key) ? ' (it was deleted)' : ''}`,
      );
    }
    const created = this.#register(toHandle(key), {});
    this.enqueue([
      { op: 'putDestination', destination: { kind: destination.kind, name: destination.name, options: {} } },
    ]);
    return created;
  }

  /** @internal Registers a temporary destination; it is never stored (DST-5). */
  registerTemporary(handle: Destination): void {
    this.#register(handle, { storeEnabled: false });
  }

  #state(handle: Destination): DestinationState {
    const state = this.#destinations.get(handle.toString());
    if (!state) throw new InvalidDestinationError(`destination '${handle.toString()}' does not exist`);
    return state;
  }

  /**
   * @internal Works out where a sent message goes: the queue's backlog, or each matching
   * subscription of the topic, each with its own entry.
   */
  route(state: DestinationState, stored: StoredMessage): Routed[] {
    if (state.kind === 'queue') return [{ backlog: state.backlog, entry: new Entry(stored) }];
    state.messagesPublished++;
    const routed = state
      .route(stored)
      .map((subscription) => ({ backlog: subscription.backlog, entry: new Entry(stored) }));
    if (routed.length === 0) state.messagesUnrouted++;
    return routed;
  }

  /** @internal Store operations that record a sent message in the durable backlogs it went to. */
  sendOperations(stored: StoredMessage, routed: readonly Routed[]): StoreOperation[] {
    if (!stored.persistent) return [];
    const durable = routed.filter((r) => this.#isDurable(r.backlog));
    if (durable.length === 0) return [];
    const id = stored.message.getJMSMessageID()!;
    stored.references += durable.length;
    return [
      { op: 'addMessage', id, seq: stored.seq, message: stored.message },
      ...durable.map((r): StoreOperation => ({
        op: 'addRef',
        backlog: r.backlog.key,
        id,
        seq: stored.seq,
        deliveryCount: 0,
        notBefore: 0,
      })),
    ];
  }

  /** @internal Store operations that forget acknowledged entries. */
  ackOperations(entries: Iterable<{ entry: Entry; backlog: Backlog }>): readonly StoreOperation[] {
    let operations: StoreOperation[] | undefined;
    for (const { entry, backlog } of entries) {
      if (entry.stored.persistent && this.#isDurable(backlog)) {
        (operations ??= []).push({
          op: 'removeRef',
          backlog: backlog.key,
          id: entry.message.getJMSMessageID()!,
        });
      }
    }
    return operations ?? NO_OPERATIONS;
  }

  #isDurable(backlog: Backlog): boolean {
    return this.#durableBacklogs.has(backlog);
  }

  /** @internal Queues store operations for the next group commit without waiting. */
  enqueue(operations: readonly StoreOperation[]): void {
    if (operations.length === 0) return;
    for (const operation of operations) this.#pendingOperations.push(operation);
    this.#scheduleFlush().catch((error: unknown) => this.logger.error({ err: error }, 'store write failed'));
  }

  /**
   * @internal Writes operations durably, together with everything else queued in this tick
   * (group commit). Resolves once they are stored; rejects if the store failed.
   */
  commit(operations: readonly StoreOperation[]): Promise<void> {
    for (const operation of operations) this.#pendingOperations.push(operation);
    return this.#scheduleFlush();
  }

  #scheduleFlush(): Promise<void> {
    this.#flush ??= Promise.resolve().then(() => {
      const batch = this.#pendingOperations;
      this.#pendingOperations = [];
      this.#flush = undefined;
      return batch.length === 0 ? undefined : this.#store.commit(batch);
    });
    return this.#flush;
  }

  /** Waits until everything queued so far is stored. */
  async flush(): Promise<void> {
    await this.commit([]);
  }

  // --- subscriptions ---

  /** @internal Finds or creates the subscription a topic consumer attaches to (DST-2, DST-3). */
  subscribe(topic: TopicState, spec: Omit<SubscriptionSpec, 'key'>): Subscription {
    if (!spec.durable && !spec.shared)
      return this.#addSubscription(topic, { ...spec, key: `${topic.handle.toString()}#${++this.#seq}` });
    const key = subscriptionKey(spec);
    const existing = this.#namedSubscriptions.get(key);
    if (existing && !existing.backlog.closed) {
      if (sameSubscription(existing, topic, spec)) {
        if (!spec.shared && existing.consumers > 0) {
          throw new IllegalStateError(
            `durable subscription '${spec.name}' of client '${spec.clientId}' already has an active subscriber`,
          );
        }
        return existing;
      }
      if (existing.consumers > 0) {
        throw new IllegalStateError(
          `subscription '${spec.name}' is active on '${existing.topic.name}' and cannot be changed while it has consumers`,
        );
      }
      // Changing topic, selector or noLocal replaces the subscription and its messages (DST-3).
      this.removeSubscription(existing);
    }
    const subscription = this.#addSubscription(topic, { ...spec, key });
    this.#namedSubscriptions.set(key, subscription);
    if (spec.durable) {
      this.#durableBacklogs.add(subscription.backlog);
      this.enqueue([
        {
          op: 'putSubscription',
          subscription: {
            key,
            topic: topic.name,
            clientId: spec.clientId,
            name: spec.name!,
            selector: spec.selector?.text ?? null,
            noLocal: spec.noLocal,
            shared: spec.shared,
          },
        },
      ]);
    }
    return subscription;
  }

  #addSubscription(topic: TopicState, spec: SubscriptionSpec): Subscription {
    const subscription = new Subscription(topic, spec, this.#hooks);
    this.#owners.set(subscription.backlog, topic);
    topic.add(subscription);
    return subscription;
  }

  /** @internal Called when a consumer leaves a subscription: plain and shared non-durable ones end with their last consumer. */
  consumerLeft(subscription: Subscription): void {
    subscription.consumers--;
    if (subscription.consumers === 0 && !subscription.spec.durable) this.removeSubscription(subscription);
  }

  /** @internal Deletes a subscription and its messages. */
  removeSubscription(subscription: Subscription): void {
    subscription.topic.remove(subscription);
    this.#namedSubscriptions.delete(subscription.spec.key);
    subscription.backlog.close();
    if (subscription.spec.durable) this.enqueue([{ op: 'removeSubscription', key: subscription.spec.key }]);
  }

  /** @internal Deletes a durable subscription by client id and name (JMS `unsubscribe`, DST-3). */
  unsubscribe(clientId: string | null, name: string): void {
    const subscription =
      this.#namedSubscriptions.get(subscriptionKey({ clientId, name, shared: false, durable: true })) ??
      this.#namedSubscriptions.get(subscriptionKey({ clientId, name, shared: true, durable: true }));
    if (!subscription || !subscription.spec.durable) {
      throw new InvalidDestinationError(
        `there is no durable subscription '${name}'${clientId ? ` for client '${clientId}'` : ''}`,
      );
    }
    if (subscription.consumers > 0)
      throw new IllegalStateError(`durable subscription '${name}' has an active subscriber`);
    const stats = subscription.backlog.stats.byState;
    if (stats.delivered.messages > 0) {
      throw new IllegalStateError(
        `durable subscription '${name}' holds ${stats.delivered.messages} unacknowledged or uncommitted messages`,
      );
    }
    this.removeSubscription(subscription);
  }

  /** Durable subscriptions that exist now, with whether each is active (DST-9). */
  durableSubscriptions(): {
    clientId: string | null;
    name: string;
    topic: string;
    selector: string | null;
    active: boolean;
    messages: number;
  }[] {
    return [...this.#namedSubscriptions.values()]
      .filter((s) => s.spec.durable)
      .map((s) => ({
        clientId: s.spec.clientId,
        name: s.spec.name!,
        topic: s.topic.name,
        selector: s.spec.selector?.text ?? null,
        active: s.consumers > 0,
        messages: s.backlog.stats.messagesHeld,
      }));
  }

  // --- deletion ---

  /**
   * Deletes a destination at run time (DST-6): its messages and durable subscriptions go, its
   * consumers are closed. Refused while it is another destination's error destination.
   */
  async deleteDestination(destination: Destination | string): Promise<void> {
    const state = this.#state(toHandle(destination));
    const key = state.handle.toString();
    for (const other of this.#destinations.values()) {
      if (other !== state && other.options.errorDestination === key) {
        throw new IllegalStateError(
          `destination '${key}' is the error destination of '${other.handle.toString()}' and cannot be deleted`,
        );
      }
    }
    this.deleteDestinationState(state);
    await this.flush();
  }

  /** @internal Deletes a destination and everything it holds (DST-6). */
  deleteDestinationState(state: DestinationState): void {
    state.deleted = true;
    this.#destinations.delete(state.handle.toString());
    if (state.kind === 'queue') {
      state.backlog.close();
    } else {
      for (const subscription of [...state.subscriptions()]) this.removeSubscription(subscription);
    }
    if (!state.handle.temporary) {
      this.#deleted.add(state.handle.toString());
      this.enqueue([{ op: 'removeDestination', kind: state.kind, name: state.name }]);
    }
    this.logger.info({ destination: state.handle.toString() }, 'destination deleted');
  }

  // --- lifecycle ---

  /** Stops timers and closes the store. Connections should be closed first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.flush();
    this.timers.close();
    await this.#store.close();
  }

  #createHooks(): BacklogHooks {
    return {
      timers: this.timers,
      now: () => this.clock.now(),
      removed: (backlog, entry) => {
        if (entry.stored.persistent && this.#isDurable(backlog)) {
          this.enqueue([{ op: 'removeRef', backlog: backlog.key, id: entry.message.getJMSMessageID()! }]);
        }
      },
      expired: (backlog, entry) => {
        this.logger.debug(
          { messageId: entry.message.getJMSMessageID(), backlog: backlog.key },
          'message expired',
        );
        backlog.remove(entry, 'expired');
      },
    };
  }
}

function checkName(name: string): string {
  if (typeof name !== 'string' || name.trim() === '' || /[\s#]/.test(name)) {
    throw new InvalidDestinationError(
      `destination name '${String(name)}' is not valid (expected a non-empty name without spaces or '#')`,
    );
  }
  return name;
}

function toHandle(destination: Destination | string): Queue | Topic {
  if (typeof destination !== 'string')
    return destination instanceof Queue ? new Queue(destination.name) : new Topic(destination.name);
  return parseDestination(destination);
}

function subscriptionKey(spec: Pick<SubscriptionSpec, 'clientId' | 'name' | 'shared' | 'durable'>): string {
  const kind = `${spec.durable ? 'durable' : 'nondurable'}${spec.shared ? '-shared' : ''}`;
  return `${DURABLE_KEY_PREFIX}${kind}/${encodeURIComponent(spec.clientId ?? '')}/${encodeURIComponent(spec.name ?? '')}`;
}

function sameSubscription(
  existing: Subscription,
  topic: TopicState,
  spec: Omit<SubscriptionSpec, 'key'>,
): boolean {
  return (
    existing.topic === topic &&
    (existing.spec.selector?.text ?? null) === (spec.selector?.text ?? null) &&
    existing.spec.noLocal === spec.noLocal
  );
}
