/**
 * The JMS engine's public face: administration (destinations, subscriptions, statistics) and
 * lifecycle. Client objects (`client/`) reach the engine's units through `engine/internals.ts`,
 * never through this class. Where each part of the engine's work lives:
 *
 * - engine/recovery.ts: restores destinations, subscriptions and messages from the store (PER-1, PER-2)
 * - engine/ids.ts: sequence numbers, JMSMessageIDs, connection ids (MSG-1)
 * - engine/store-link.ts: which backlogs are stored, their records, the group commit (PER-1, PER-4)
 * - engine/send-pipeline.ts: routing, admission, delivery time, store → backlog → page-out tail
 * - engine/paging.ts: paging message bodies out over the threshold (PER-4)
 * - destination/registry.ts: every destination by name, and the lookups for send, consume, subscribe
 * - destination/definitions.ts: creating and deleting queues and topics (DST-6)
 * - destination/distributed-destinations.ts: distributed destinations and their members (DST-8)
 * - destination/subscriptions.ts: plain, shared and durable subscriptions (DST-2, DST-3)
 * - delivery/redelivery.ts: redelivery delays and limits (DLV-1, DLV-2)
 * - delivery/error-destinations.ts: moving undeliverable messages, parking (DLV-3, DLV-9)
 * - delivery/error-copy.ts: the JMS_Error* properties of an error-destination copy
 * - delivery/expiration.ts: expiration policies and the active scan (DLV-4)
 * - delivery/delivery-times.ts: delivery times and schedules (DLV-5, DLV-6)
 * - delivery/flow-control.ts: quotas and throttling (DLV-7, DLV-8)
 * - client/listener-pipeline.ts: a session's listener deliveries, one at a time (SES-5, SES-6)
 * - client/client-ids.ts: the client ids connections hold (SES-1)
 * - engine/internals.ts: the EngineInternals interface through which client objects reach these
 */
import { type Clock, TimerQueue, systemClock } from './clock.js';
import { ClientIdClaims } from './client/client-ids.js';
import { type EngineUser, UserDirectory } from './client/user-directory.js';
import { DeliveryTimes } from './delivery/delivery-times.js';
import { ErrorDestinations } from './delivery/error-destinations.js';
import { Expiration } from './delivery/expiration.js';
import { FlowControl, type Quota, type ThrottlingOptions } from './delivery/flow-control.js';
import { Redelivery } from './delivery/redelivery.js';
import type { BacklogHooks } from './destination/backlog.js';
import { SharedTally } from './destination/backlog-statistics.js';
import { DestinationDefinitions } from './destination/definitions.js';
import { type Destination, Queue, Topic } from './destination/destination.js';
import { checkDestinationName } from './destination/destination-name.js';
import type { DestinationOptions } from './destination/destination-options.js';
import { DistributedDestinations } from './destination/distributed-destinations.js';
import type { LoadBalancing } from './destination/load-balancing.js';
import { DestinationRegistry, toHandle } from './destination/registry.js';
import { Subscriptions } from './destination/subscriptions.js';
import type { UndeliveredTotal } from './destination/undelivered.js';
import { EngineIds } from './engine/ids.js';
import { type EngineInternals, bindInternals } from './engine/internals.js';
import { Paging } from './engine/paging.js';
import { recover } from './engine/recovery.js';
import { SendPipeline } from './engine/send-pipeline.js';
import { StoreLink } from './engine/store-link.js';
import { type EngineLogger, silentLogger } from './logger.js';
import {
  type DestinationStatistics,
  type DurableSubscriptionInfo,
  type EngineStatistics,
} from './statistics.js';
import { destinationStatistics, totalStatistics } from './destination/statistics-snapshot.js';
import type { MessageStore } from './store-port.js';

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

export class JmsEngine {
  readonly clock: Clock;
  /** The one timer queue behind delivery times, redelivery delays, expiry and receive timeouts. */
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  readonly #storeLink: StoreLink;
  readonly #registry: DestinationRegistry;
  readonly #definitions: DestinationDefinitions;
  readonly #distributed: DistributedDestinations;
  readonly #subscriptions: Subscriptions;
  readonly #flowControl: FlowControl;
  readonly #errorDestinations: ErrorDestinations;
  readonly #expiration: Expiration;
  readonly #paging: Paging;
  readonly #units: EngineInternals;
  /** Messages held by every backlog together (quotas, paging). */
  readonly #total = new SharedTally();
  #closed = false;

  constructor(options: EngineOptions) {
    const clock = options.clock ?? systemClock;
    const logger = options.logger ?? silentLogger;
    const timers = new TimerQueue(clock);
    const now = () => clock.now();
    this.clock = clock;
    this.timers = timers;
    this.logger = logger;
    /** Undelivered messages of every destination together (throttling's server threshold, DLV-8). */
    const undelivered: UndeliveredTotal = { messages: 0 };
    const total = this.#total;
    const storeLink = (this.#storeLink = new StoreLink(options.store, logger));
    const flowControl = (this.#flowControl = new FlowControl(
      timers,
      () => total,
      () => undelivered.messages,
      options.quota ?? {},
      options.throttling,
    ));
    const ids = new EngineIds();
    const deliveryTimes = new DeliveryTimes();
    const hooks: BacklogHooks = {
      timers,
      now,
      removed: (backlog, entry) => storeLink.recordRemoval(backlog, entry),
      expired: (backlog, entry) => this.#expiration.expire(backlog, entry),
      drained: () => {
        flowControl.changed();
        this.#errorDestinations.drained();
      },
      total,
    };
    const registry = (this.#registry = new DestinationRegistry({
      logger,
      hooks,
      storeLink,
      flowControl,
      undelivered,
      autoCreate: options.autoCreateDestinations ?? true,
      removeSubscription: (subscription) => this.#subscriptions.remove(subscription),
    }));
    this.#subscriptions = new Subscriptions({ registry, storeLink, ids, hooks });
    this.#definitions = new DestinationDefinitions({ registry, storeLink, deliveryTimes });
    this.#distributed = new DistributedDestinations({
      registry,
      storeLink,
      random: options.random ?? Math.random,
      createMember: (kind, name, memberOptions) =>
        kind === 'queue' ? this.createQueue(name, memberOptions) : this.createTopic(name, memberOptions),
    });
    this.#paging = new Paging(options.store, total, options.pagingThresholdBytes ?? 128 * 1024 * 1024);
    const sendPipeline = new SendPipeline({ storeLink, flowControl, deliveryTimes, paging: this.#paging });
    const errorDestinations = (this.#errorDestinations = new ErrorDestinations({
      registry,
      flowControl,
      storeLink,
      sendPipeline,
      ids,
      timers,
      logger,
      now,
    }));
    this.#expiration = new Expiration({
      registry,
      errorDestinations,
      timers,
      logger,
      now,
      closed: () => this.#closed,
    });
    this.#units = {
      clock,
      timers,
      logger,
      ids,
      users: new UserDirectory(options.users),
      clientIds: new ClientIdClaims(),
      registry,
      subscriptions: this.#subscriptions,
      sendPipeline,
      redelivery: new Redelivery({
        optionsOf: (backlog) => registry.ownerOf(backlog)?.options,
        errorDestinations,
      }),
      errorDestinations,
      storeLink,
    };
    bindInternals(this, this.#units);
    this.#expiration.scanEvery(options.expirationScanIntervalMs ?? 30_000);
  }

  /**
   * Opens an engine on a store, recovering what a previous run left: destinations made at run
   * time, durable subscriptions, and their messages with delivery counts and delivery times (PER-1, PER-2).
   */
  static async open(options: EngineOptions): Promise<JmsEngine> {
    const engine = new JmsEngine(options);
    await recover({
      ...engine.#units,
      distributed: engine.#distributed,
      paging: engine.#paging,
      now: () => engine.clock.now(),
    });
    return engine;
  }

  // --- administration ---

  /** Creates a queue, or returns the existing one (its settings unchanged). The definition is stored (PER-2). */
  async createQueue(name: string, options: DestinationOptions = {}): Promise<Queue> {
    return (await this.#definitions.create(new Queue(checkDestinationName(name)), options)) as Queue;
  }

  /** Creates a topic, or returns the existing one. */
  async createTopic(name: string, options: DestinationOptions = {}): Promise<Topic> {
    return (await this.#definitions.create(new Topic(checkDestinationName(name)), options)) as Topic;
  }

  /**
   * Creates a distributed queue or topic over member destinations (DST-8); members are created
   * if they do not exist, and can still be addressed by their own names or as `name/member`.
   */
  createDistributedDestination(
    kind: 'queue' | 'topic',
    name: string,
    members: readonly { name: string; weight?: number }[],
    options: { loadBalancing?: LoadBalancing; memberOptions?: DestinationOptions } = {},
  ): Promise<Queue | Topic> {
    return this.#distributed.create({ kind, name, members, ...options });
  }

  /**
   * Deletes a destination at run time (DST-6): its messages and durable subscriptions go, its
   * consumers are closed. Refused while it is another destination's error destination.
   */
  async deleteDestination(destination: Destination | string): Promise<void> {
    const handle = toHandle(destination);
    if (await this.#distributed.delete(handle)) return;
    await this.#definitions.delete(handle);
  }

  /** The destinations that exist now. */
  destinations(): Destination[] {
    return [...this.#registry.states()].map((state) => state.handle);
  }

  /** The settings of a queue or topic that exists now, or undefined. */
  destinationOptions(destination: Destination | string): Readonly<DestinationOptions> | undefined {
    return this.#registry.find(toHandle(destination))?.options;
  }

  /** Statistics of one destination (DST-9). */
  destinationStatistics(destination: Destination | string): DestinationStatistics {
    return destinationStatistics(this.#registry.get(toHandle(destination)));
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
    const destinations = [...this.#registry.states()].map(destinationStatistics);
    return { destinations, totals: totalStatistics(destinations, this.#total) };
  }

  /** Durable subscriptions that exist now, with whether each is active (DST-9). */
  durableSubscriptions(): DurableSubscriptionInfo[] {
    return this.#subscriptions.durable();
  }

  /**
   * Deletes a durable subscription by client id and name (JMS `unsubscribe`, DST-3): refused
   * while it is active or holds unacknowledged messages.
   */
  unsubscribe(clientId: string | null, name: string): void {
    this.#subscriptions.unsubscribe(clientId, name);
  }

  /** Expires every message whose time to live has run out, now (what the active scan does). */
  expireNow(): number {
    return this.#expiration.expireNow();
  }

  /** The store the engine writes to; the gateway keeps bridges' duplicate windows in it too. */
  get store(): MessageStore {
    return this.#storeLink.store;
  }

  /** Sends waiting for room now (DLV-7). */
  get blockedSends(): number {
    return this.#flowControl.waiting;
  }

  /** Message bodies paged out to the store, ever (PER-4). */
  get messagesPagedOut(): number {
    return this.#paging.messagesPagedOut;
  }

  /** Messages moved to an error destination, ever. */
  get messagesMovedToErrorDestinations(): number {
    return this.#errorDestinations.messagesMoved;
  }

  /** Undeliverable messages deleted because their destination has no error destination (DLV-3). */
  get messagesDiscarded(): number {
    return this.#errorDestinations.messagesDiscarded;
  }

  // --- lifecycle ---

  /** Waits until everything queued so far is stored. */
  flush(): Promise<void> {
    return this.#storeLink.flush();
  }

  /** Stops timers and closes the store. Connections should be closed first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#errorDestinations.close();
    await this.flush();
    this.timers.close();
    await this.#storeLink.store.close();
  }
}
