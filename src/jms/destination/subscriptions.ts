/**
 * Topic subscriptions (DST-2, DST-3): plain ones, one per topic consumer; durable and shared ones,
 * found by client id and name, replaced when their topic, selector or noLocal change, and ended
 * by `unsubscribe` or, for non-durable ones, with their last consumer. Durable ones are stored.
 */
import type { BacklogHooks } from './backlog.js';
import { Subscription, type SubscriptionSpec, type TopicState } from './destination-state.js';
import type { DestinationRegistry } from './registry.js';
import type { EngineIds } from '../engine/ids.js';
import type { StoreLink } from '../engine/store-link.js';
import { IllegalStateError, InvalidDestinationError } from '../errors.js';
import type { DurableSubscriptionInfo } from '../statistics.js';

const NAMED_KEY_PREFIX = 'sub://';

/** What the subscriptions need of the engine. */
export interface SubscriptionsContext {
  readonly registry: DestinationRegistry;
  readonly storeLink: StoreLink;
  readonly ids: EngineIds;
  readonly hooks: BacklogHooks;
}

export class Subscriptions {
  readonly #context: SubscriptionsContext;
  /** Durable and shared subscriptions by key. */
  readonly #named = new Map<string, Subscription>();

  constructor(context: SubscriptionsContext) {
    this.#context = context;
  }

  /** Finds or creates the subscription a topic consumer attaches to (DST-2, DST-3). */
  subscribe(topic: TopicState, spec: Omit<SubscriptionSpec, 'key'>): Subscription {
    if (!spec.durable && !spec.shared)
      return this.#add(topic, { ...spec, key: `${topic.handle.toString()}#${this.#context.ids.nextSeq()}` });
    const key = namedKey(spec);
    const existing = this.#named.get(key);
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
      this.remove(existing);
    }
    const subscription = this.#add(topic, { ...spec, key });
    this.#named.set(key, subscription);
    if (spec.durable) {
      this.#context.storeLink.storeBacklog(subscription.backlog);
      this.#context.storeLink.writeLater([
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

  #add(topic: TopicState, spec: SubscriptionSpec): Subscription {
    const subscription = new Subscription(topic, spec, this.#context.hooks);
    this.#context.registry.setOwner(subscription.backlog, topic);
    topic.add(subscription);
    return subscription;
  }

  /** A consumer left a subscription: plain and shared non-durable ones end with their last consumer. */
  consumerLeft(subscription: Subscription): void {
    subscription.consumers--;
    if (subscription.consumers === 0 && !subscription.spec.durable) this.remove(subscription);
  }

  /** Deletes a subscription and its messages. */
  remove(subscription: Subscription): void {
    subscription.topic.remove(subscription);
    this.#named.delete(subscription.spec.key);
    subscription.backlog.close();
    if (subscription.spec.durable)
      this.#context.storeLink.writeLater([{ op: 'removeSubscription', key: subscription.spec.key }]);
  }

  /** Deletes a durable subscription by client id and name (JMS `unsubscribe`, DST-3). */
  unsubscribe(clientId: string | null, name: string): void {
    const subscription =
      this.#named.get(namedKey({ clientId, name, shared: false, durable: true })) ??
      this.#named.get(namedKey({ clientId, name, shared: true, durable: true }));
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
    this.remove(subscription);
  }

  /** The durable and shared subscriptions that exist now. */
  named(): IterableIterator<Subscription> {
    return this.#named.values();
  }

  /** Durable subscriptions that exist now, with whether each is active (DST-9). */
  durable(): DurableSubscriptionInfo[] {
    return [...this.#named.values()]
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
}

function namedKey(spec: Pick<SubscriptionSpec, 'clientId' | 'name' | 'shared' | 'durable'>): string {
  const kind = `${spec.durable ? 'durable' : 'nondurable'}${spec.shared ? '-shared' : ''}`;
  return `${NAMED_KEY_PREFIX}${kind}/${encodeURIComponent(spec.clientId ?? '')}/${encodeURIComponent(spec.name ?? '')}`;
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
