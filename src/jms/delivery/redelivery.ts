/**
 * Redelivery (DLV-1, DLV-2): how long a rolled-back or recovered message waits before it is
 * delivered again, and what happens to one that has used up its redeliveries.
 */
import type { Backlog } from '../destination/backlog.js';
import { type DestinationOptions, overrideOf } from '../destination/destination-options.js';
import type { Entry } from '../destination/entry.js';
import type { ErrorDestinations } from './error-destinations.js';

/**
 * The longest redelivery delay, some 4,400 years: a backoff without a maximum stops growing here,
 * so due times stay exact integers (now + 2^47 < 2^53) that the store can keep.
 */
const LONGEST_REDELIVERY_DELAY_MS = 2 ** 47;

/** What redelivery needs of the engine. */
export interface RedeliveryContext {
  /** The settings of the destination a backlog belongs to. */
  optionsOf(backlog: Backlog): DestinationOptions | undefined;
  readonly errorDestinations: ErrorDestinations;
}

export class Redelivery {
  readonly #context: RedeliveryContext;

  constructor(context: RedeliveryContext) {
    this.#context = context;
  }

  /**
   * The delay before a rolled-back or recovered entry is available again (DLV-1): the
   * destination's override wins over the session's value; an optional backoff grows it, up to
   * its maximum if it has one.
   */
  delayFor(backlog: Backlog, entry: Entry, sessionDelay: number): number {
    const options = this.#context.optionsOf(backlog);
    const base = overrideOf(options?.redeliveryDelayOverride) ?? sessionDelay;
    const backoff = options?.redeliveryBackoff;
    if (!backoff || base <= 0) return base;
    const grown = base * backoff.multiplier ** Math.max(0, entry.deliveryCount - 1);
    // An uncapped backoff overflows to Infinity after enough redeliveries: a due time must stay a number.
    return Math.min(grown, backoff.maximumMs ?? LONGEST_REDELIVERY_DELAY_MS, LONGEST_REDELIVERY_DELAY_MS);
  }

  /**
   * Called before a delivered entry goes back: when it has used up its redeliveries (DLV-2) it
   * is moved to the error destination, or deleted when there is none (DLV-3), and true is
   * returned; false leaves it to be put back.
   */
  moveToErrorDestinationIfLimitReached(backlog: Backlog, entry: Entry): boolean {
    const limit = this.#limit(backlog, entry);
    if (limit < 0 || entry.deliveryCount - 1 < limit) return false;
    this.#context.errorDestinations.move(
      backlog,
      entry,
      `redelivery limit ${limit} reached after ${entry.deliveryCount} deliveries`,
    );
    return true;
  }

  /** An entry's redelivery limit (DLV-2): the destination's, unless it has none or -1 (no override), else the producer's. */
  #limit(backlog: Backlog, entry: Entry): number {
    return overrideOf(this.#context.optionsOf(backlog)?.redeliveryLimit) ?? entry.stored.redeliveryLimit;
  }
}
