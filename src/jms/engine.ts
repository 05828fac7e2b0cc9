/**
 * The JMS engine: the registry of destinations and subscriptions, the send path, and the link to
 * the store. Client objects (connections, sessions, producers, consumers) live in `client/` and
 * call the methods marked internal here. State changes are synchronous; only store writes wait.
 */
import { randomBytes } from 'node:crypto';
import { type Clock, TimerQueue, systemClock } from './clock.js';
import type { Backlog } from './destination/backlog.js';
import { type BacklogHooks } from './destination/backlog.js';
import { type Destination, Queue, Topic, parseDestination } from './destination/destination.js';
import { checkDestinationName } from './destination/destination-name.js';
import {
  type DestinationOptions,
  checkDestinationOptions,
  deliveryTimeOverrideOf,
  overrideOf,
} from './destination/destination-options.js';
import {
  type DestinationState,
  QueueState,
  Subscription,
  type SubscriptionSpec,
  TopicState,
} from './destination/destination-state.js';
import { Entry, StoredMessage } from './destination/entry.js';
import {
  type Admission,
  type AdmissionPart,
  FlowControl,
  type Quota,
  type ThrottlingOptions,
} from './delivery/flow-control.js';
import { ExpiryPolicies } from './delivery/expiry.js';
import { errorDestinationCopy } from './delivery/error-copy.js';
import { ErrorDestinationParking, type ParkedMove } from './delivery/error-destination-parking.js';
import { SharedTally } from './destination/backlog-statistics.js';
import { Undelivered, type UndeliveredTotal } from './destination/undelivered.js';
import { type Schedule, parseSchedule } from './schedule.js';
import { parseSelector } from './selector/index.js';
import {
  IllegalStateError,
  InvalidArgumentError,
  InvalidClientIDError,
  InvalidDestinationError,
} from './errors.js';
import {
  DistributedState,
  type LoadBalancing,
  type Member,
  type TransactionAffinity,
} from './destination/distributed.js';
import { type EngineUser, UserDirectory } from './client/user-directory.js';
import { type EngineLogger, silentLogger } from './logger.js';
import type { Message } from './message/message.js';
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
   * Uniform numbers in [0, 1) for weighted random load balancing (DST-8); tests pass a seeded or
   * scripted source. Default `Math.random`.
   */
  random?: () => number;
  /**
   * Whether a producer or consumer on an unknown destination creates it with default settings.
   * A destination deleted at run time is never re-created this way, nor a `distributed/member`
   * name that names no member (DST-8). Default true.
   */
  autoCreateDestinations?: boolean;
  logger?: EngineLogger;
  /** Gateway-wide quota over every destination (DLV-7). Default: unlimited. */
  quota?: Quota;
  /** Producer throttling (DLV-8): true for the defaults 100,000 / 1,000 / 100, or the settings. Default off. */
  throttling?: ThrottlingOptions | boolean;
  /** Ms between active scans for expired messages (DLV-4); 0 disables the scan. Default 30,000. */
  expirationScanIntervalMs?: number;
  /**
   * Bytes of messages held above which the bodies of newly stored persistent messages are paged
   * out to the store, keeping only headers in memory (PER-4). Needs a store that can read
   * messages back (the file store). Default 128 MiB.
   */
  pagingThresholdBytes?: number;
  /**
   * The users connections may authenticate as with `createConnection(user, password)`; a wrong
   * user or password is a JMSSecurityError. JMSXUserID of what a connection sends is its user
   * (MSG-2). Connections naming no user stay anonymous. Default: no list, so a named user is
   * taken as given.
   */
  users?: readonly EngineUser[];
}

/** One message on its way into one backlog. */
export interface Routed {
  backlog: Backlog;
  entry: Entry;
}

const DURABLE_KEY_PREFIX = 'sub://';
const NO_OPERATIONS: readonly StoreOperation[] = Object.freeze([]);
/**
 * The longest redelivery delay, some 4,400 years: a backoff without a maximum stops growing here,
 * so due times stay exact integers (now + 2^47 < 2^53) that the store can keep.
 */
const LONGEST_REDELIVERY_DELAY_MS = 2 ** 47;

/**
 * The separator of `distributed/member` names (`000`: a name with a forward slash names a member
 * of a distributed destination), so no destination of its own may contain it.
 */
const MEMBER_SEPARATOR = '/';

export class JmsEngine {
  readonly clock: Clock;
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  /** @internal Checks the user a connection names (`createConnection(user, password)`). */
  readonly users: UserDirectory;
  readonly #store: MessageStore;
  readonly #autoCreate: boolean;
  readonly #random: () => number;
  readonly #destinations = new Map<string, DestinationState>();
  /** Destinations deleted at run time: auto-create leaves them deleted (DST-6). */
  readonly #deleted = new Set<string>();
  /** Durable and shared subscriptions by key. */
  readonly #namedSubscriptions = new Map<string, Subscription>();
  readonly #clientIds = new Set<string>();
  /** Distributed destinations by key, and `name/member` aliases of their members (DST-8). */
  readonly #distributed = new Map<string, DistributedState>();
  readonly #aliases = new Map<string, DestinationState>();
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
  /** Set while the store's definitions are restored (see #recover). */
  #recovering = false;
  readonly #hooks: BacklogHooks;
  /** Messages held by every backlog together (quotas, paging). */
  readonly #total = new SharedTally();
  /** Undelivered messages of every destination together (throttling's server threshold, DLV-8). */
  readonly #undelivered: UndeliveredTotal = { messages: 0 };
  readonly #flowControl: FlowControl;
  readonly #expiry: ExpiryPolicies;
  /** Undeliverable messages waiting for room in a full error destination (DLV-3). */
  readonly #parking: ErrorDestinationParking;

  constructor(options: EngineOptions) {
    this.clock = options.clock ?? systemClock;
    this.timers = new TimerQueue(this.clock);
    this.#hooks = this.#createHooks();
    this.#flowControl = new FlowControl(
      this.timers,
      () => this.#total,
      () => this.#undelivered.messages,
      options.quota ?? {},
      options.throttling,
    );
    this.logger = options.logger ?? silentLogger;
    this.users = new UserDirectory(options.users);
    this.#store = options.store;
    this.#autoCreate = options.autoCreateDestinations ?? true;
    this.#random = options.random ?? Math.random;
    this.#expiry = new ExpiryPolicies(this.logger);
    this.#parking = new ErrorDestinationParking({
      timers: this.timers,
      logger: this.logger,
      now: () => this.clock.now(),
      hasRoom: (target, size) => this.#flowControl.hasRoom(target, size),
      move: (move, target) => this.#moveParked(move, target),
    });
    this.#pagingThreshold = options.pagingThresholdBytes ?? 128 * 1024 * 1024;
    const store = this.#store;
    if (store.readMessage) {
      this.#readStored = (id) => {
        const message = store.readMessage!(id);
        if (!message) throw new Error(`paged-out message '${id}' is missing from the store`);
        return message;
      };
    }
    this.#scheduleExpirationScan(options.expirationScanIntervalMs ?? 30_000);
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
    const distributedRecords = recovered.destinations.filter((record) =>
      Array.isArray(record.options.distributedMembers),
    );
    for (const record of recovered.destinations) {
      if (distributedRecords.includes(record)) continue;
      const handle = record.kind === 'queue' ? new Queue(record.name) : new Topic(record.name);
      if (!this.#destinations.has(handle.toString())) this.#register(handle, record.options);
    }
    // Definitions stored by an earlier run come back as they were, checked or not: refusing one
    // now would keep the gateway from starting.
    this.#recovering = true;
    try {
      for (const record of distributedRecords) {
        const members = record.options.distributedMembers as { name: string; weight: number }[];
        await this.createDistributedDestination(record.kind, record.name, members, {
          loadBalancing: record.options.loadBalancing as LoadBalancing,
        });
      }
    } finally {
      this.#recovering = false;
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
    // References come in seq order, so those to one message come together: one StoredMessage is
    // shared by them, and no map of every recovered message is needed (it would grow with the backlog).
    let stored: StoredMessage | undefined;
    let lastSeq = -Infinity;
    let restored = 0;
    /** Entries the crash left delivered: they may have used up their redeliveries (DLV-2). */
    const leftDelivered: { backlog: Backlog; entry: Entry }[] = [];
    for (const ref of recovered.refs) {
      if (ref.seq < lastSeq)
        throw new Error(
          `the store returned message references out of order (seq ${ref.seq} after ${lastSeq}): recovery needs them in seq order`,
        );
      lastSeq = ref.seq;
      const backlog = backlogs.get(ref.backlog);
      if (!backlog) continue;
      if (stored?.message.getJMSMessageID() !== ref.id || stored.seq !== ref.seq) {
        stored = new StoredMessage(
          ref.message,
          ref.seq,
          ref.message.getSize(),
          true,
          'recovered',
          ref.sender?.clientId ?? null,
        );
        // The producer's redelivery limit still applies after a restart (DLV-2).
        if (ref.sender) stored.redeliveryLimit = ref.sender.redeliveryLimit;
      }
      stored.references++;
      stored.holders++;
      stored.scheduled = ref.message.getJMSDeliveryTime() > this.clock.now();
      const entry = new Entry(stored);
      entry.deliveryCount = ref.deliveryCount;
      // A redelivery delay still to run is waited out; a message left unacknowledged by the crash gets none (DLV-1).
      if (ref.notBefore > this.clock.now()) backlog.addDelayed(entry, ref.notBefore);
      else {
        backlog.add(entry);
        if (entry.deliveryCount > 0) leftDelivered.push({ backlog, entry });
      }
      this.pageOutIfOverThreshold(stored);
      restored++;
    }
    // Recovery rewrote nothing: what was stored is as it was.
    this.#pendingOperations = [];
    // Delivering one of these again would be a redelivery past its limit: it is undeliverable
    // now, as it would have been had it been rolled back instead of left by the crash.
    for (const { backlog, entry } of leftDelivered) this.undeliverable(backlog, entry);
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

  /** Parsed schedules by text: a TimeToDeliverOverride is parsed once, not per send. */
  readonly #schedules = new Map<string, Schedule>();

  #schedule(text: string): Schedule {
    let schedule = this.#schedules.get(text);
    if (!schedule) this.#schedules.set(text, (schedule = parseSchedule(text)));
    return schedule;
  }

  async #create(handle: Queue | Topic, options: DestinationOptions): Promise<Destination> {
    checkDestinationOptions(options);
    this.#checkErrorDestination(handle, options.errorDestination);
    // An invalid schedule is refused here, with its position, not at the first send (DLV-6).
    const deliveryTime = deliveryTimeOverrideOf(options.timeToDeliverOverride);
    if (deliveryTime.kind === 'schedule') this.#schedule(deliveryTime.schedule);
    const existing = this.#destinations.get(handle.toString());
    if (existing) return existing.handle;
    if (this.#distributed.has(handle.toString()))
      throw new InvalidDestinationError(
        `destination '${handle.toString()}' already exists as a distributed destination`,
      );
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

  /**
   * Refuses an error destination the engine could never move a message to (DLV-3): the
   * destination itself (its undeliverable messages would come straight back), or a distributed
   * destination or one of its `name/member` aliases (a move goes to one queue or topic).
   */
  #checkErrorDestination(handle: Queue | Topic, errorDestination: string | undefined): void {
    if (errorDestination === undefined) return;
    const of = `error destination '${errorDestination}' of '${handle.toString()}'`;
    let target: Queue | Topic;
    try {
      target = parseDestination(errorDestination);
    } catch {
      throw new InvalidDestinationError(`${of} is not valid (expected 'queue://name' or 'topic://name')`);
    }
    const key = target.toString();
    if (key === handle.toString())
      throw new InvalidDestinationError(
        `destination '${key}' cannot be its own error destination: its undeliverable messages would come straight back to it`,
      );
    const distributed = this.#distributed.get(key);
    if (distributed)
      throw new InvalidDestinationError(
        `${of} is a distributed destination: name one of its members instead (${distributed.members.map((m) => `'${m.state.handle.toString()}'`).join(', ')})`,
      );
    const member = this.#aliases.get(key);
    if (member)
      throw new InvalidDestinationError(
        `${of} is a member's alias: name the member itself, '${member.handle.toString()}'`,
      );
  }

  #register(handle: Destination, options: DestinationOptions): DestinationState {
    const state =
      handle.kind === 'queue'
        ? this.#newQueueState(handle, options)
        : new TopicState(handle, options, this.#newUndelivered(true));
    this.#destinations.set(handle.toString(), state);
    this.logger.info({ destination: handle.toString() }, 'destination created');
    return state;
  }

  #newQueueState(handle: Destination, options: DestinationOptions): QueueState {
    const state = new QueueState(handle, options, this.#newUndelivered(false), this.#hooks);
    this.#owners.set(state.backlog, state);
    if (!handle.temporary && options.storeEnabled !== false) this.#durableBacklogs.add(state.backlog);
    return state;
  }

  /** What throttling counts of a new destination (DLV-8); nothing while throttling is off. */
  #newUndelivered(shared: boolean): Undelivered | undefined {
    if (!this.#flowControl.throttling) return undefined;
    return new Undelivered(this.#undelivered, shared, () => this.#flowControl.changed());
  }

  /**
   * Creates a distributed queue or topic over member destinations (DST-8); members are created
   * if they do not exist, and can still be addressed by their own names or as `name/member`.
   */
  async createDistributedDestination(
    kind: 'queue' | 'topic',
    name: string,
    members: readonly { name: string; weight?: number }[],
    options: { loadBalancing?: LoadBalancing; memberOptions?: DestinationOptions } = {},
  ): Promise<Queue | Topic> {
    const handle = kind === 'queue' ? new Queue(checkName(name)) : new Topic(checkName(name));
    if (this.#distributed.has(handle.toString()) || this.#destinations.has(handle.toString())) {
      throw new InvalidDestinationError(`destination '${handle.toString()}' already exists`);
    }
    if (members.length === 0)
      throw new InvalidArgumentError(`distributed destination '${name}' needs at least one member`);
    this.#checkNotAnErrorDestination(handle, options.memberOptions);
    const resolved: Member[] = [];
    for (const member of members) {
      const weight = member.weight ?? 1;
      if (!Number.isInteger(weight) || weight < 1) {
        throw new InvalidArgumentError(
          `member '${member.name}' of '${name}': weight ${String(weight)} is not valid (expected an integer >= 1)`,
        );
      }
      const memberHandle =
        kind === 'queue'
          ? await this.createQueue(member.name, options.memberOptions)
          : await this.createTopic(member.name, options.memberOptions);
      resolved.push({ state: this.#destinations.get(memberHandle.toString())!, weight });
    }
    this.#deleted.delete(handle.toString());
    const state = new DistributedState(
      handle,
      resolved,
      options.loadBalancing ?? 'round-robin',
      this.#random,
      (member) => this.consumerCount(member),
    );
    this.#distributed.set(handle.toString(), state);
    if (kind === 'topic') this.#linkTopicMembers();
    for (const member of resolved) this.#aliases.set(memberAlias(handle, member), member.state);
    const definition = {
      distributedMembers: members.map((m) => ({ name: m.name, weight: m.weight ?? 1 })),
      loadBalancing: state.loadBalancing,
    };
    await this.commit([{ op: 'putDestination', destination: { kind, name, options: definition } }]);
    return handle;
  }

  /**
   * Points each member of a distributed topic at the other members, which get what is published
   * to it directly (`000`); `unlinked` are the members of one just deleted.
   */
  #linkTopicMembers(unlinked: readonly Member[] = []): void {
    const others = new Map<DestinationState, Set<DestinationState>>();
    for (const member of unlinked) others.set(member.state, new Set());
    for (const distributed of this.#distributed.values()) {
      if (distributed.handle.kind !== 'topic') continue;
      for (const { state } of distributed.members) {
        const set = others.get(state) ?? new Set<DestinationState>();
        for (const other of distributed.members) if (other.state !== state) set.add(other.state);
        others.set(state, set);
      }
    }
    for (const [state, set] of others) state.forwardTo = [...set];
  }

  /**
   * A distributed destination (or a `name/member` alias of it) cannot be an error destination
   * (DLV-3): a move goes to one queue or topic. Checked here too, for destinations created first.
   */
  #checkNotAnErrorDestination(handle: Queue | Topic, memberOptions: DestinationOptions | undefined): void {
    if (this.#recovering) return;
    const key = handle.toString();
    const names = (errorDestination: string | undefined) =>
      errorDestination === key || errorDestination?.startsWith(`${key}${MEMBER_SEPARATOR}`) === true;
    const referrer = [...this.#destinations.values()].find((state) => names(state.options.errorDestination));
    const by = names(memberOptions?.errorDestination) ? 'its own members' : referrer && `'${referrer.label}'`;
    if (by === undefined) return;
    throw new InvalidDestinationError(
      `distributed destination '${key}' cannot be created: it would be the error destination of ${by}, and an error destination must be a queue or topic`,
    );
  }

  /** The destinations that exist now. */
  destinations(): Destination[] {
    return [...this.#destinations.values()].map((state) => state.handle);
  }

  /** Statistics of one destination (DST-9). */
  destinationStatistics(destination: Destination | string): DestinationStatistics {
    return destinationStatistics(this.#state(toHandle(destination)));
  }

  /**
   * Messages and bytes the whole gateway holds now: what the gateway quota, throttling and paging
   * count. Unlike {@link statistics}, this includes messages of deleted destinations still pending
   * under an open transaction or an unacknowledged receive (DST-6).
   */
  held(): { messages: number; bytes: number } {
    return { messages: this.#total.messages, bytes: this.#total.bytes };
  }

  /** Statistics of every destination and their totals (DST-9). */
  statistics(): EngineStatistics {
    const destinations = [...this.#destinations.values()].map(destinationStatistics);
    return { destinations, totals: totalStatistics(destinations, this.#total) };
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
    const override = state.deliveryTimeOverride;
    if (override.kind === 'schedule') return this.#schedule(override.schedule).nextScheduledTime(now);
    return now + (override.kind === 'relative' ? override.ms : deliveryDelay);
  }

  /**
   * @internal Admits a send of `size` bytes taking `entries` entries in the destination (DLV-7,
   * DLV-8): the room it reserves, at once when it may go in (the hot path does not wait), else a
   * promise of it. The sender releases it once the entries are held, or when the send fails.
   */
  admit(
    state: DestinationState,
    entries: number,
    size: number,
    timeoutMs: number,
  ): Admission | Promise<Admission> {
    return this.#flowControl.admit(state, entries, size, timeoutMs);
  }

  /** @internal Admits a send that goes to several destinations at once (a distributed topic). */
  admitAll(parts: readonly AdmissionPart[], size: number, timeoutMs: number): Admission | Promise<Admission> {
    return this.#flowControl.admitAll(parts, size, timeoutMs);
  }

  /** The store the engine writes to; the gateway keeps bridges' duplicate windows in it too. */
  get store(): MessageStore {
    return this.#store;
  }

  /** Sends waiting for room now (DLV-7). */
  get blockedSends(): number {
    return this.#flowControl.waiting;
  }

  /**
   * @internal The delay before a rolled-back or recovered entry is available again (DLV-1): the
   * destination's override wins over the session's value; an optional backoff grows it, up to
   * its maximum if it has one.
   */
  redeliveryDelay(backlog: Backlog, entry: Entry, sessionDelay: number): number {
    const options = this.#ownerOptions(backlog);
    const base = overrideOf(options?.redeliveryDelayOverride) ?? sessionDelay;
    const backoff = options?.redeliveryBackoff;
    if (!backoff || base <= 0) return base;
    const grown = base * backoff.multiplier ** Math.max(0, entry.deliveryCount - 1);
    // An uncapped backoff overflows to Infinity after enough redeliveries: a due time must stay a number.
    return Math.min(grown, backoff.maximumMs ?? LONGEST_REDELIVERY_DELAY_MS, LONGEST_REDELIVERY_DELAY_MS);
  }

  /** @internal The destination's RedeliveryDelayOverride for a backlog, if any (DLV-1). */
  redeliveryDelayOverride(backlog: Backlog): number | undefined {
    return overrideOf(this.#ownerOptions(backlog)?.redeliveryDelayOverride);
  }

  /**
   * @internal Called before a delivered entry goes back: when it has used up its redeliveries
   * (DLV-2) it is moved to the error destination, or deleted when there is none (DLV-3), and
   * true is returned.
   */
  undeliverable(backlog: Backlog, entry: Entry): boolean {
    const limit = this.#redeliveryLimit(backlog, entry);
    if (limit < 0 || entry.deliveryCount - 1 < limit) return false;
    this.moveToErrorDestination(
      backlog,
      entry,
      `redelivery limit ${limit} reached after ${entry.deliveryCount} deliveries`,
    );
    return true;
  }

  /** An entry's redelivery limit (DLV-2): the destination's, unless it has none or -1 (no override), else the producer's. */
  #redeliveryLimit(backlog: Backlog, entry: Entry): number {
    return overrideOf(this.#ownerOptions(backlog)?.redeliveryLimit) ?? entry.stored.redeliveryLimit;
  }

  /**
   * @internal Moves an entry to its destination's error destination, keeping headers and
   * properties and recording origin, reason, delivery count and time (see `error-copy.ts`,
   * DLV-3, DLV-9); deletes it (counted and logged)
   * when there is none. An error destination over its quota is not written past: the message is
   * parked where it is, pending for no consumer, and moved once the error destination has room.
   */
  moveToErrorDestination(
    backlog: Backlog,
    entry: Entry,
    reason: string,
    removal: 'deleted' | 'expired' = 'deleted',
  ): void {
    // Its destination was deleted after delivery: the message went with it (DST-6), whether it
    // was rejected as poison or used up its redeliveries, rather than surviving in the error destination.
    if (backlog.closed) {
      backlog.remove(entry, removal);
      return;
    }
    const errorName = this.#owners.get(backlog)?.options.errorDestination;
    const target = errorName ? this.#destinations.get(errorName) : undefined;
    if (!target) {
      this.#discardUndeliverable(backlog, entry, errorName, reason, removal);
      return;
    }
    // Behind those already waiting, so the error destination gets them in the order they failed.
    if (this.#parking.holds(target) || !this.#flowControl.hasRoom(target, entry.size)) {
      this.#parking.park(target, { backlog, entry, reason, removal });
      return;
    }
    this.#copyToErrorDestination(backlog, entry, target, reason, removal);
  }

  /** A parked message's error destination has room (or was deleted meanwhile: then it is looked up again). */
  #moveParked(move: ParkedMove, target: DestinationState): void {
    if (target.deleted) this.moveToErrorDestination(move.backlog, move.entry, move.reason, move.removal);
    else this.#copyToErrorDestination(move.backlog, move.entry, target, move.reason, move.removal);
  }

  #discardUndeliverable(
    backlog: Backlog,
    entry: Entry,
    errorName: string | undefined,
    reason: string,
    removal: 'deleted' | 'expired',
  ): void {
    this.messagesDiscarded++;
    const fields = {
      messageId: entry.message.getJMSMessageID(),
      destination: this.#owners.get(backlog)?.handle.toString(),
      errorDestination: errorName,
      reason,
    };
    if (errorName)
      this.logger.error(
        fields,
        `undeliverable message deleted: error destination '${errorName}' does not exist`,
      );
    else this.logger.warn(fields, 'undeliverable message deleted: no error destination');
    backlog.remove(entry, removal);
  }

  #copyToErrorDestination(
    backlog: Backlog,
    entry: Entry,
    target: DestinationState,
    reason: string,
    removal: 'deleted' | 'expired',
  ): void {
    const origin = this.#owners.get(backlog)!.handle.toString();
    const moved = errorDestinationCopy(entry.stored.load(), {
      origin,
      reason,
      deliveryCount: entry.deliveryCount,
      now: this.clock.now(),
    });
    moved.setJMSDestination(target.handle);
    moved.setJMSExpiration(0);
    moved.setJMSDeliveryTime(0);
    const persistent = entry.stored.persistent && target.options.storeEnabled !== false;
    const stored = new StoredMessage(
      moved,
      this.nextSeq(),
      moved.getSize(),
      persistent,
      entry.stored.connectionId,
      entry.stored.clientId,
    );
    const routed = this.route(target, stored);
    // One batch: the copy is stored in the error destination and removed from here together.
    this.enqueue(this.sendOperations(stored, routed));
    backlog.remove(entry, removal);
    for (const r of routed) r.backlog.add(r.entry);
    this.messagesMovedToErrorDestinations++;
    this.logger.debug(
      { messageId: entry.message.getJMSMessageID(), from: origin, to: target.handle.toString(), reason },
      'message moved to error destination',
    );
  }

  /** @internal A message sent to expire at or before its delivery time: counted, never stored (DLV-5). */
  expiredAtSend(state: DestinationState): void {
    state.messagesExpiredAtSend++;
  }

  readonly #pagingThreshold: number;
  readonly #readStored: ((id: string) => Message) | undefined;
  /** Message bodies paged out to the store, ever (PER-4). */
  messagesPagedOut = 0;

  /**
   * @internal Called once a message is stored and in its backlogs: while the engine holds more
   * than its paging threshold, the body leaves memory and only headers stay (PER-4).
   */
  pageOutIfOverThreshold(stored: StoredMessage): void {
    if (!this.#readStored || stored.references === 0 || stored.paged) return;
    if (this.#total.bytes <= this.#pagingThreshold) return;
    stored.pageOut(this.#readStored);
    this.messagesPagedOut++;
  }

  /** Messages moved to an error destination, ever. */
  messagesMovedToErrorDestinations = 0;
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

  /**
   * @internal The destination a send goes to: for a distributed queue, the member chosen for this
   * message (the transaction's member, given its `affinity`); for a distributed topic, the first
   * member, with the others in `alsoTo`, as for a send to one of its members (DST-8).
   */
  resolveForSend(
    destination: Destination | null | undefined,
    message: Message,
    affinity?: TransactionAffinity,
  ): {
    state: DestinationState;
    distributed: boolean;
    alsoTo: readonly DestinationState[];
  } {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    if (!distributed) {
      const state = this.resolve(destination, 'send');
      return { state, distributed: false, alsoTo: state.forwardTo };
    }
    if (distributed.handle.kind === 'topic') {
      const [first, ...others] = distributed.members.filter((m) => !m.state.deleted).map((m) => m.state);
      if (!first)
        throw new InvalidDestinationError(
          `distributed topic '${distributed.handle.toString()}' has no members left`,
        );
      return { state: first, distributed: true, alsoTo: others };
    }
    return { state: distributed.pickForMessage(message, affinity), distributed: true, alsoTo: [] };
  }

  /** @internal Whether a destination exists or may be created on first use (for producers created with one). */
  checkSendable(destination: Destination): void {
    if (!this.#distributed.has(destination.toString())) this.resolve(destination, 'create a producer');
  }

  /** @internal The destination a new consumer reads: for a distributed destination, the member it is pinned to (DST-8). */
  resolveForConsumer(destination: Destination | null | undefined, purpose: string): DestinationState {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    return distributed ? distributed.pickForConsumer() : this.resolve(destination, purpose);
  }

  /**
   * @internal The topic a durable or shared subscription is made on. Not a distributed topic
   * (`000`: durable subscribers cannot be created for distributed topics): each member keeps its
   * own subscriptions, and one subscription cannot span members.
   */
  resolveForNamedSubscription(destination: Destination | null | undefined): DestinationState {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    if (distributed) {
      const members = distributed.members.map((m) => `'${memberAlias(distributed.handle, m)}'`);
      throw new InvalidDestinationError(
        `a durable or shared subscription cannot be made on distributed topic '${distributed.handle.toString()}': make it on one of its members (${members.join(', ')})`,
      );
    }
    return this.resolve(destination, 'subscribe');
  }

  /** @internal The state behind a handle, created on first use if allowed. */
  resolve(destination: Destination | null | undefined, purpose: string): DestinationState {
    if (!destination) throw new InvalidDestinationError(`no destination given to ${purpose}`);
    if (!(destination instanceof Queue) && !(destination instanceof Topic)) {
      throw new InvalidDestinationError(`${purpose}: ${String(destination)} is not a queue or topic`);
    }
    const key = destination.toString();
    const state = this.#destinations.get(key) ?? this.#aliases.get(key);
    if (state) return state;
    // A physical destination under a distributed one's name would take messages no member sees.
    if (this.#distributed.has(key))
      throw new InvalidDestinationError(`${purpose}: '${key}' is a distributed destination`);
    if (destination.name.includes(MEMBER_SEPARATOR)) {
      throw new InvalidDestinationError(
        `${purpose}: '${key}' is not a member of a distributed destination (a name with '${MEMBER_SEPARATOR}' names one, as 'distributed${MEMBER_SEPARATOR}member')`,
      );
    }
    if (destination.temporary || this.#deleted.has(key) || !this.#autoCreate) {
      throw new InvalidDestinationError(
        `${purpose}: destination '${key}' does not exist${this.#deleted.has(key) ? ' (it was deleted)' : ''}`,
      );
    }
    // Created on first use: the same names as any other way of creating one.
    checkDestinationName(destination.name);
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
    const routed = this.entriesFor(state, stored);
    this.published(state, routed.length);
    return routed;
  }

  /** @internal Where a message sent to a destination goes, as {@link route}, not yet counted as published. */
  entriesFor(state: DestinationState, stored: StoredMessage): Routed[] {
    if (state.kind === 'queue') {
      stored.holders++;
      return [{ backlog: state.backlog, entry: new Entry(stored) }];
    }
    const routed = state
      .route(stored)
      .map((subscription) => ({ backlog: subscription.backlog, entry: new Entry(stored) }));
    stored.holders += routed.length;
    return routed;
  }

  /** @internal Counts a message published to a topic that went to `subscriptions` subscriptions. */
  published(state: DestinationState, subscriptions: number): void {
    if (state.kind === 'queue') return;
    state.messagesPublished++;
    if (subscriptions === 0) state.messagesUnrouted++;
  }

  /** @internal Store operations that record a sent message in the durable backlogs it went to. */
  sendOperations(stored: StoredMessage, routed: readonly Routed[]): StoreOperation[] {
    if (!stored.persistent) return [];
    const durable = routed.filter((r) => this.#isDurable(r.backlog));
    if (durable.length === 0) return [];
    const id = stored.message.getJMSMessageID()!;
    stored.references += durable.length;
    const add: StoreOperation = { op: 'addMessage', id, seq: stored.seq, message: stored.message };
    if (stored.redeliveryLimit !== -1 || stored.clientId !== null)
      add.sender = { redeliveryLimit: stored.redeliveryLimit, clientId: stored.clientId };
    return [
      add,
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

  /**
   * @internal Records an entry's delivery count and the time before which it may not be
   * delivered again, so both survive a restart (PER-2). Written with the next group commit.
   */
  storeDeliveryState(backlog: Backlog, entry: Entry, notBefore: number): void {
    if (!entry.stored.persistent || !this.#isDurable(backlog)) return;
    this.enqueue([
      {
        op: 'updateRef',
        backlog: backlog.key,
        id: entry.message.getJMSMessageID()!,
        deliveryCount: entry.deliveryCount,
        notBefore,
      },
    ]);
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
    const handle = toHandle(destination);
    const distributed = this.#distributed.get(handle.toString());
    if (distributed) {
      this.#distributed.delete(handle.toString());
      for (const member of distributed.members) this.#aliases.delete(memberAlias(handle, member));
      // Like any deleted destination, its name is not auto-created again, not even as a plain one.
      this.#deleted.add(handle.toString());
      if (handle.kind === 'topic') this.#linkTopicMembers(distributed.members);
      await this.commit([{ op: 'removeDestination', kind: handle.kind, name: handle.name }]);
      return;
    }
    const state = this.#state(handle);
    const key = state.handle.toString();
    for (const owner of this.#distributed.values()) {
      if (owner.members.some((m) => m.state === state)) {
        throw new IllegalStateError(
          `destination '${key}' is a member of distributed destination '${owner.handle.toString()}' and cannot be deleted`,
        );
      }
    }
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
    this.#flowControl.cancel(state);
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

  /** Applies the destination's expiration policy to an expired entry (DLV-4). */
  #expire(backlog: Backlog, entry: Entry): void {
    const owner = this.#owners.get(backlog);
    const policy = owner?.options.expirationPolicy ?? { policy: 'discard' };
    if (policy.policy === 'redirect') {
      this.moveToErrorDestination(backlog, entry, 'expired', 'expired');
      return;
    }
    if (policy.policy === 'log')
      this.#expiry.log(owner?.handle.toString() ?? backlog.key, entry.message, policy.fields);
    backlog.remove(entry, 'expired');
  }

  /** The active expiration scan (DLV-4): finds expired messages nobody is reading. */
  #scheduleExpirationScan(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.timers.after(intervalMs, () => {
      if (this.#closed) return;
      this.expireNow();
      this.#scheduleExpirationScan(intervalMs);
    });
  }

  /** Expires every message whose time to live has run out, now (what the active scan does). */
  expireNow(): number {
    const now = this.clock.now();
    let expired = 0;
    for (const backlog of [...this.#allBacklogs()]) {
      for (const entry of backlog.expiredEntries(now)) {
        this.#expire(backlog, entry);
        expired++;
      }
    }
    return expired;
  }

  *#allBacklogs(): IterableIterator<Backlog> {
    for (const state of this.#destinations.values()) {
      if (state.kind === 'queue') yield state.backlog;
      else for (const subscription of state.subscriptions()) yield subscription.backlog;
    }
  }

  /** Stops timers and closes the store. Connections should be closed first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#parking.close();
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
      expired: (backlog, entry) => this.#expire(backlog, entry),
      drained: () => {
        this.#flowControl.changed();
        this.#parking.drained();
      },
      total: this.#total,
    };
  }
}

/** The `distributed/member` name a member is also reachable as (DST-8). */
function memberAlias(distributed: Destination, member: Member): string {
  return `${distributed.toString()}${MEMBER_SEPARATOR}${member.state.name}`;
}

function checkName(name: string): string {
  return checkDestinationName(name);
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
