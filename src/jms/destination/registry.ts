/**
 * The destination registry: every queue and topic by name, the distributed destinations and the
 * `distributed/member` aliases of their members (DST-8), the names deleted at run time (DST-6),
 * and the one place a destination named by a client is looked up, for each purpose: to send, to
 * create a producer, to consume, to subscribe by name; created on first use where allowed.
 */
import type { Backlog, BacklogHooks } from './backlog.js';
import { type Destination, Queue, Topic, parseDestination } from './destination.js';
import { checkDestinationName } from './destination-name.js';
import type { DestinationOptions } from './destination-options.js';
import { type DestinationState, QueueState, type Subscription, TopicState } from './destination-state.js';
import type { DistributedState, Member, TransactionAffinity } from './distributed.js';
import { Undelivered, type UndeliveredTotal } from './undelivered.js';
import type { FlowControl } from '../delivery/flow-control.js';
import type { StoreLink } from '../engine/store-link.js';
import { InvalidDestinationError } from '../errors.js';
import type { EngineLogger } from '../logger.js';
import type { Message } from '../message/message.js';

/**
 * The separator of `distributed/member` names (DST-8: a name with a forward slash names a member
 * of a distributed destination), so no destination of its own may contain it.
 */
export const MEMBER_SEPARATOR = '/';

/** The `distributed/member` name a member is also reachable as (DST-8). */
export function memberAlias(distributed: Destination, member: Member): string {
  return `${distributed.toString()}${MEMBER_SEPARATOR}${member.state.name}`;
}

/** A fresh queue or topic handle for a destination or its `queue://` / `topic://` name. */
export function toHandle(destination: Destination | string): Queue | Topic {
  if (typeof destination !== 'string')
    return destination instanceof Queue ? new Queue(destination.name) : new Topic(destination.name);
  return parseDestination(destination);
}

/** Where a send goes (DST-8). */
export interface SendTarget {
  readonly state: DestinationState;
  /** Whether it was picked among the members of a distributed destination. */
  readonly distributed: boolean;
  /** The other members of a distributed topic, which get the message too. */
  readonly alsoTo: readonly DestinationState[];
}

/** What the registry needs of the engine. */
export interface RegistryContext {
  readonly logger: EngineLogger;
  readonly hooks: BacklogHooks;
  readonly storeLink: StoreLink;
  readonly flowControl: FlowControl;
  /** Undelivered messages of every destination together (throttling's server threshold, DLV-8). */
  readonly undelivered: UndeliveredTotal;
  /** Whether an unknown destination is created on first use. */
  readonly autoCreate: boolean;
  removeSubscription(subscription: Subscription): void;
}

export class DestinationRegistry {
  readonly #context: RegistryContext;
  readonly #destinations = new Map<string, DestinationState>();
  /** Destinations deleted at run time: auto-create leaves them deleted (DST-6). */
  readonly #deleted = new Set<string>();
  /** Distributed destinations by key, and `name/member` aliases of their members (DST-8). */
  readonly #distributed = new Map<string, DistributedState>();
  readonly #aliases = new Map<string, DestinationState>();
  /** The destination each backlog belongs to, for its settings. */
  readonly #owners = new WeakMap<Backlog, DestinationState>();

  constructor(context: RegistryContext) {
    this.#context = context;
  }

  // --- registering ---

  /** Adds a queue or topic with its settings; it is not stored here. */
  register(handle: Destination, options: DestinationOptions): DestinationState {
    const state =
      handle.kind === 'queue'
        ? this.#newQueueState(handle, options)
        : new TopicState(handle, options, this.#newUndelivered(true));
    this.#destinations.set(handle.toString(), state);
    this.#context.logger.info({ destination: handle.toString() }, 'destination created');
    return state;
  }

  /** Registers a temporary destination; it is never stored (DST-5). */
  registerTemporary(handle: Destination): void {
    this.register(handle, { storeEnabled: false });
  }

  #newQueueState(handle: Destination, options: DestinationOptions): QueueState {
    const state = new QueueState(handle, options, this.#newUndelivered(false), this.#context.hooks);
    this.#owners.set(state.backlog, state);
    if (!handle.temporary && options.storeEnabled !== false)
      this.#context.storeLink.storeBacklog(state.backlog);
    return state;
  }

  /** What throttling counts of a new destination (DLV-8); nothing while throttling is off. */
  #newUndelivered(shared: boolean): Undelivered | undefined {
    const flowControl = this.#context.flowControl;
    if (!flowControl.throttling) return undefined;
    return new Undelivered(this.#context.undelivered, shared, () => flowControl.changed());
  }

  /** Records the destination a subscription's backlog belongs to. */
  setOwner(backlog: Backlog, owner: DestinationState): void {
    this.#owners.set(backlog, owner);
  }

  /** The destination a backlog belongs to. */
  ownerOf(backlog: Backlog): DestinationState | undefined {
    return this.#owners.get(backlog);
  }

  /** Forgets that a name was deleted: it is being created again on purpose. */
  undelete(key: string): void {
    this.#deleted.delete(key);
  }

  /** Remembers a name deleted at run time, so auto-create leaves it deleted (DST-6). */
  markDeleted(key: string): void {
    this.#deleted.add(key);
  }

  // --- distributed destinations (their storage; see distributed-destinations.ts) ---

  distributed(key: string): DistributedState | undefined {
    return this.#distributed.get(key);
  }

  allDistributed(): IterableIterator<DistributedState> {
    return this.#distributed.values();
  }

  addDistributed(state: DistributedState): void {
    this.#distributed.set(state.handle.toString(), state);
    for (const member of state.members) this.#aliases.set(memberAlias(state.handle, member), member.state);
  }

  removeDistributed(state: DistributedState): void {
    this.#distributed.delete(state.handle.toString());
    for (const member of state.members) this.#aliases.delete(memberAlias(state.handle, member));
  }

  /** The member a `distributed/member` alias names, if it is one. */
  aliased(key: string): DestinationState | undefined {
    return this.#aliases.get(key);
  }

  // --- lookups ---

  /** The queue or topic of that name, if it exists (not a distributed one, nor an alias). */
  find(handle: Destination): DestinationState | undefined {
    return this.#destinations.get(handle.toString());
  }

  /** The queue or topic of a `queue://name` / `topic://name` key, if it exists. */
  findByKey(key: string): DestinationState | undefined {
    return this.#destinations.get(key);
  }

  /** The queue or topic of that name; an InvalidDestinationError when it does not exist. */
  get(handle: Destination): DestinationState {
    const state = this.#destinations.get(handle.toString());
    if (!state) throw new InvalidDestinationError(`destination '${handle.toString()}' does not exist`);
    return state;
  }

  /** The queues and topics that exist now. */
  states(): IterableIterator<DestinationState> {
    return this.#destinations.values();
  }

  get size(): number {
    return this.#destinations.size;
  }

  /** Every backlog: each queue's, and each subscription's of each topic. */
  *backlogs(): IterableIterator<Backlog> {
    for (const state of this.#destinations.values()) {
      if (state.kind === 'queue') yield state.backlog;
      else for (const subscription of state.subscriptions()) yield subscription.backlog;
    }
  }

  /**
   * The destination a send goes to: for a distributed queue, the member chosen for this message
   * (the transaction's member, given its `affinity`); for a distributed topic, the first member,
   * with the others in `alsoTo`, as for a send to one of its members (DST-8).
   */
  forSend(
    destination: Destination | null | undefined,
    message: Message,
    affinity?: TransactionAffinity,
  ): SendTarget {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    if (!distributed) {
      const state = this.findOrCreate(destination, 'send');
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

  /** Refuses a producer's destination that neither exists nor may be created on first use. */
  checkProducerDestination(destination: Destination): void {
    if (!this.#distributed.has(destination.toString())) this.findOrCreate(destination, 'create a producer');
  }

  /** The destination a new consumer reads: for a distributed destination, the member it is pinned to (DST-8). */
  forConsumer(destination: Destination | null | undefined, purpose: string): DestinationState {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    return distributed ? distributed.pickForConsumer() : this.findOrCreate(destination, purpose);
  }

  /**
   * The topic a durable or shared subscription is made on. Not a distributed topic (DST-8:
   * durable subscribers cannot be created for distributed topics): each member keeps its own
   * subscriptions, and one subscription cannot span members.
   */
  forNamedSubscription(destination: Destination | null | undefined): DestinationState {
    const distributed = destination ? this.#distributed.get(destination.toString()) : undefined;
    if (distributed) {
      const members = distributed.members.map((m) => `'${memberAlias(distributed.handle, m)}'`);
      throw new InvalidDestinationError(
        `a durable or shared subscription cannot be made on distributed topic '${distributed.handle.toString()}': make it on one of its members (${members.join(', ')})`,
      );
    }
    return this.findOrCreate(destination, 'subscribe');
  }

  /** The queue or topic (or member alias) a client names, created on first use if allowed. */
  findOrCreate(destination: Destination | null | undefined, purpose: string): DestinationState {
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
    if (destination.temporary || this.#deleted.has(key) || !this.#context.autoCreate) {
      throw new InvalidDestinationError(
        `${purpose}: destination '${key}' does not exist${this.#deleted.has(key) ? ' (it was deleted)' : ''}`,
      );
    }
    // Created on first use: the same names as any other way of creating one.
    checkDestinationName(destination.name);
    const created = this.register(toHandle(key), {});
    this.#context.storeLink.writeLater([
      { op: 'putDestination', destination: { kind: destination.kind, name: destination.name, options: {} } },
    ]);
    return created;
  }

  /** Consumers attached to a destination now. */
  consumerCount(state: DestinationState): number {
    return state.kind === 'queue'
      ? state.backlog.consumerCount
      : [...state.subscriptions()].reduce((n, s) => n + s.backlog.consumerCount, 0);
  }

  // --- deleting ---

  /** Deletes a destination and everything it holds (DST-6). */
  delete(state: DestinationState): void {
    state.deleted = true;
    this.#context.flowControl.cancel(state);
    this.#destinations.delete(state.handle.toString());
    if (state.kind === 'queue') {
      state.backlog.close();
    } else {
      for (const subscription of [...state.subscriptions()]) this.#context.removeSubscription(subscription);
    }
    if (!state.handle.temporary) {
      this.#deleted.add(state.handle.toString());
      this.#context.storeLink.writeLater([{ op: 'removeDestination', kind: state.kind, name: state.name }]);
    }
    this.#context.logger.info({ destination: state.handle.toString() }, 'destination deleted');
  }
}
