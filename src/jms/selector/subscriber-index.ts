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
  /** The bucket the registration sits in, to remove it in O(1). */
  readonly bucket: Set<Registration<S>>;
}

/** Subscribers by selector, for matching a published message against all of them. */
export class SubscriberIndex<S> {
  readonly #registrations = new Map<S, Registration<S>>();
  readonly #byProperty = new Map<string, Set<Registration<S>>>();
  readonly #byHeader = new Map<string, Set<Registration<S>>>();
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
    const identifier = selector.indexedIdentifier;
    let bucket: Set<Registration<S>>;
    if (identifier === undefined) {
      bucket = this.#scanned;
    } else {
      const buckets = isHeaderName(identifier) ? this.#byHeader : this.#byProperty;
      bucket = buckets.get(identifier) ?? new Set();
      buckets.set(identifier, bucket);
    }
    const registration: Registration<S> = { subscriber, selector, order: this.#nextOrder++, bucket };
    bucket.add(registration);
    this.#registrations.set(subscriber, registration);
  }

  /** Removes a subscriber; false when it was not there. */
  remove(subscriber: S): boolean {
    const registration = this.#registrations.get(subscriber);
    if (!registration) return false;
    this.#registrations.delete(subscriber);
    const bucket = registration.bucket;
    bucket.delete(registration);
    const identifier = registration.selector.indexedIdentifier;
    if (bucket.size === 0 && identifier !== undefined) {
      (isHeaderName(identifier) ? this.#byHeader : this.#byProperty).delete(identifier);
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
        for (const registration of bucket) found.push(registration);
      }
    }
    for (const bucket of this.#byHeader.values()) {
      // Every selector in the bucket is the same `<header> IS NOT NULL`: one test decides for all.
      const first = bucket.values().next().value as Registration<S>;
      if (!first.selector.matches(message)) continue;
      sources++;
      for (const registration of bucket) found.push(registration);
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
}

function byOrder(a: { order: number }, b: { order: number }): number {
  return a.order - b.order;
}
