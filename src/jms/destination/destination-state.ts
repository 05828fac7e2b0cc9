/**
 * The engine's state of each destination: a queue is one backlog; a topic is a set of
 * subscriptions, each with its own backlog, found through a subscriber index (SEL-6).
 */
import { SubscriberIndex, parseSelector, type MessageSelector } from '../selector/index.js';
import type { AdmissionTarget, FlowThresholds, Held, Quota, Reserved } from '../delivery/flow-control.js';
import { Backlog, type BacklogHooks, type BacklogOptions } from './backlog.js';
import { SharedTally } from './backlog-statistics.js';
import type { Destination } from './destination.js';
import {
  type DeliveryTimeOverride,
  type DestinationOptions,
  deliveryTimeOverrideOf,
} from './destination-options.js';
import type { StoredMessage } from './entry.js';
import type { Undelivered } from './undelivered.js';
import { unitOfOrderProperty } from './unit-of-order.js';

/** The backlog options a destination's settings imply. */
function backlogOptions(options: DestinationOptions): BacklogOptions {
  return {
    keys: options.keys,
    unitOfOrderProperty: unitOfOrderProperty(options.unitOfOrderProperty),
  };
}

/** What queues and topics share: settings, admission state (DLV-7, DLV-8). */
abstract class DestinationStateBase implements AdmissionTarget {
  deleted = false;
  /**
   * The other members of the distributed topics this topic belongs to: a message published to
   * it directly goes to them too (DST-8, `000`). Empty for every other destination.
   */
  forwardTo: readonly DestinationState[] = NOWHERE;
  /** Messages sent to expire at or before their delivery time, dropped at send (DLV-5). */
  messagesExpiredAtSend = 0;
  flowControlOn = false;
  throttled = false;
  readonly reserved: Reserved = { messages: 0, bytes: 0, undelivered: 0 };
  /** Messages and bytes held by all its backlogs together, and the most they held at once (DLV-7, DST-9). */
  readonly tally = new SharedTally();
  readonly quota: Quota;
  /** Its TimeToDeliverOverride, read once: every send to it applies it (DLV-5). */
  readonly deliveryTimeOverride: DeliveryTimeOverride;

  constructor(
    readonly handle: Destination,
    readonly options: DestinationOptions,
    /** Its undelivered messages, counted while producer throttling is on (DLV-8). */
    readonly undelivered: Undelivered | undefined,
  ) {
    this.quota = { messagesMaximum: options.messagesMaximum, bytesMaximum: options.bytesMaximum };
    this.deliveryTimeOverride = deliveryTimeOverrideOf(options.timeToDeliverOverride);
  }

  get name(): string {
    return this.handle.name;
  }

  /** `queue://name`, for messages. */
  get label(): string {
    return this.handle.toString();
  }

  get thresholds(): FlowThresholds | undefined {
    return this.options.thresholds;
  }

  /** Held now (current + pending): a topic counts a message once per subscription holding it. */
  held(): Held {
    return this.tally;
  }
}

/** A queue's state. */
export class QueueState extends DestinationStateBase {
  readonly kind = 'queue' as const;
  readonly backlog: Backlog;

  constructor(
    handle: Destination,
    options: DestinationOptions,
    undelivered: Undelivered | undefined,
    hooks: BacklogHooks,
  ) {
    super(handle, options, undelivered);
    this.backlog = new Backlog(handle.toString(), hooks, {
      ...backlogOptions(options),
      tally: this.tally,
      undelivered,
    });
  }

  /** The backlogs whose messages survive a restart. */
  backlogs(): Backlog[] {
    return [this.backlog];
  }
}

/** What identifies a subscription and what it keeps. */
export interface SubscriptionSpec {
  /** Store key; for durable ones stable across restarts. */
  key: string;
  /** Subscription name (durable or shared); null for a plain non-durable subscriber. */
  name: string | null;
  clientId: string | null;
  selector: MessageSelector | null;
  noLocal: boolean;
  durable: boolean;
  shared: boolean;
  /** For noLocal: the connection of a non-durable subscriber. */
  connectionId: string | null;
}

/** One subscription of a topic (DST-2, DST-3). */
export class Subscription {
  readonly backlog: Backlog;
  /** Consumers attached; an unshared durable subscription allows one (DST-3). */
  consumers = 0;

  constructor(
    readonly topic: TopicState,
    readonly spec: SubscriptionSpec,
    hooks: BacklogHooks,
  ) {
    this.backlog = new Backlog(spec.key, hooks, {
      ...backlogOptions(topic.options),
      tally: topic.tally,
      undelivered: topic.undelivered,
    });
  }

  /** Whether a message published by this connection/client must skip it (DST-4). */
  excludes(stored: StoredMessage): boolean {
    if (!this.spec.noLocal) return false;
    if (this.spec.durable && this.spec.clientId !== null) return stored.clientId === this.spec.clientId;
    return stored.connectionId === this.spec.connectionId;
  }
}

/** A topic's state. */
export class TopicState extends DestinationStateBase {
  readonly kind = 'topic' as const;
  readonly #index = new SubscriberIndex<Subscription>();
  readonly #subscriptions = new Set<Subscription>();
  /** Messages published with no subscription to take them. */
  messagesUnrouted = 0;
  /** Messages published, ever. */
  messagesPublished = 0;

  add(subscription: Subscription): void {
    this.#subscriptions.add(subscription);
    this.#index.add(subscription, subscription.spec.selector ?? ALL);
  }

  remove(subscription: Subscription): void {
    this.#subscriptions.delete(subscription);
    this.#index.remove(subscription);
  }

  subscriptions(): IterableIterator<Subscription> {
    return this.#subscriptions.values();
  }

  /** The subscriptions a published message goes to: selector matches, noLocal respected. */
  route(stored: StoredMessage): Subscription[] {
    return this.#index.match(stored.message).filter((subscription) => !subscription.excludes(stored));
  }

  backlogs(): Backlog[] {
    return [...this.#subscriptions].filter((s) => s.spec.durable).map((s) => s.backlog);
  }
}

const NOWHERE: readonly DestinationState[] = Object.freeze([]);

/** A selector that takes everything, for subscriptions without one. */
const ALL = parseSelector(null);

/** A queue or topic's state. */
export type DestinationState = QueueState | TopicState;
