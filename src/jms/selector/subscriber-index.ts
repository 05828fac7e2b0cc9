/**
 * Topic fan-out by selector (SEL-6). Subscribers whose selector is exactly
 * `<identifier> IS NOT NULL` (WebLogic's indexed form: one property per target subscriber) are
 * kept in a map by identifier, so a publish looks up the message's own property names instead
 * of testing every subscriber: O(properties of the message + non-indexed subscribers), flat in
 * the number of indexed subscribers. Header identifiers (`JMSCorrelationID IS NOT NULL`) have
 * their own bucket per header, tested once per publish. Every other subscriber is tested one by
 * one.
 *
 * Matches come back in the order subscribers were added, whatever bucket they sit in, because
 * the engine relies on deterministic delivery order.
 */
import type { Message } from '../message/message.js';
import { isHeaderName } from './header-fields.js';
import type { MessageSelector } from './message-selector.js';

interface Registration<S> {
  readonly subscriber: S;
  readonly selector: MessageSelector;
  /** Insertion order, to merge matches from several buckets back into it. */
  readonly order: number;
}

/**
 * The subscribers sharing one identifier. Usually one (a user name), so a single registration is
 * stored as itself: with 100,000 subscribers a Set each would cost memory and cache misses.
 */
type Bucket<S> = Registration<S> | Set<Registration<S>>;

/** Subscribers by selector, for matching a published message against all of them. */
export class SubscriberIndex<S> {
  readonly #registrations = new Map<S, Registration<S>>();
  readonly #byProperty = new Map<string, Bucket<S>>();
  readonly #byHeader = new Map<string, Bucket<S>>();
  readonly #scanned = new Set<Registration<S>>();
  #nextOrder = 0;

  /** Number of subscribers. */
  get size(): number {
    return this.#registrations.size;
  }

  /** True when the subscriber is in the index. */
  has(subscriber: S): boolean {
    return this.#registrations.has(subscriber);
  }

  /**
   * Adds a subscriber with its selector. Adding one that is already there replaces its selector
   * and moves it to the end of the order, as removing and adding it would.
   */
  add(subscriber: S, selector: MessageSelector): void {
    this.remove(subscriber);
    const registration: Registration<S> = { subscriber, selector, order: this.#nextOrder++ };
    this.#registrations.set(subscriber, registration);
    const identifier = selector.indexedIdentifier;
    if (identifier === undefined) {
      this.#scanned.add(registration);
      return;
    }
    const buckets = this.#bucketsFor(identifier);
    const bucket = buckets.get(identifier);
    if (bucket === undefined) buckets.set(identifier, registration);
    else if (bucket instanceof Set) bucket.add(registration);
    else buckets.set(identifier, new Set([bucket, registration]));
  }

  /** Removes a subscriber; false when it was not there. */
  remove(subscriber: S): boolean {
    const registration = this.#registrations.get(subscriber);
    if (!registration) return false;
    this.#registrations.delete(subscriber);
    const identifier = registration.selector.indexedIdentifier;
    if (identifier === undefined) {
      this.#scanned.delete(registration);
      return true;
    }
    const buckets = this.#bucketsFor(identifier);
    const bucket = buckets.get(identifier);
    if (bucket === registration) {
      buckets.delete(identifier);
    } else if (bucket instanceof Set) {
      bucket.delete(registration);
      // Back to a single registration stored as itself (a Set keeps insertion order).
      if (bucket.size === 1) buckets.set(identifier, bucket.values().next().value!);
    }
    return true;
  }

  /** The subscribers whose selector selects `message`, in the order they were added. */
  match(message: Message): S[] {
    const found: Registration<S>[] = [];
    let sources = 0;
    if (this.#byProperty.size > 0) {
      for (const name of message.getPropertyNames()) {
        const bucket = this.#byProperty.get(name);
        if (bucket === undefined) continue;
        sources++;
        collect(bucket, found);
      }
    }
    for (const bucket of this.#byHeader.values()) {
      // Every selector in the bucket is the same `<header> IS NOT NULL`: one test decides for all.
      const first = bucket instanceof Set ? bucket.values().next().value! : bucket;
      if (!first.selector.matches(message)) continue;
      sources++;
      collect(bucket, found);
    }
    if (this.#scanned.size > 0) {
      const before = found.length;
      for (const registration of this.#scanned) {
        if (registration.selector.matches(message)) found.push(registration);
      }
      if (found.length > before) sources++;
    }
    if (sources > 1) found.sort(byOrder);
    const subscribers = new Array<S>(found.length);
    for (let i = 0; i < found.length; i++) subscribers[i] = found[i]!.subscriber;
    return subscribers;
  }

  /** Calls `visit` for each subscriber whose selector selects `message`, in the order they were added. */
  forEachMatch(message: Message, visit: (subscriber: S) => void): void {
    for (const subscriber of this.match(message)) visit(subscriber);
  }

  /** Every subscriber, in the order they were added. */
  subscribers(): S[] {
    // A Map iterates in insertion order, and re-adding deletes first, so this is already in order.
    return [...this.#registrations.keys()];
  }

  #bucketsFor(identifier: string): Map<string, Bucket<S>> {
    return isHeaderName(identifier) ? this.#byHeader : this.#byProperty;
  }
}

function collect<S>(bucket: Bucket<S>, found: Registration<S>[]): void {
  if (bucket instanceof Set) for (const registration of bucket) found.push(registration);
  else found.push(bucket);
}

function byOrder(a: { order: number }, b: { order: number }): number {
  return a.order - b.order;
}
