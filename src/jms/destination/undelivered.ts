/**
 * Undelivered messages as producer throttling counts them (DLV-8, `004`): a message counts
 * against its destination until it is dequeued by every subscriber that takes it (a queue: its
 * one consumer). A consumer outside a transaction has it once it is delivered, acknowledged or
 * not; a consumer in a transacted session once it commits. A topic message counts once, however
 * many subscriptions hold it. Messages pending for any other cause (uncommitted sends, delivery
 * times, redelivery delays) are undelivered.
 *
 * Kept only while throttling is on: with it off, backlogs skip this altogether.
 */
import type { Entry, EntryState, StoredMessage } from './entry.js';

/** Undelivered messages over every destination: what the server threshold is compared with. */
export interface UndeliveredTotal {
  messages: number;
}

/** One destination's undelivered messages. */
export class Undelivered {
  /** Messages of the destination not yet had by every subscriber. */
  messages = 0;
  /** A topic's messages by how many of its subscriptions still count them; none for a queue. */
  readonly #holders: Map<StoredMessage, number> | undefined;

  constructor(
    private readonly total: UndeliveredTotal,
    /** Whether several backlogs hold one message (a topic's subscriptions). */
    shared: boolean,
    /** Called when a message stops counting: throttled sends may go on. */
    private readonly fewer: () => void,
  ) {
    this.#holders = shared ? new Map() : undefined;
  }

  /** Called as an entry moves to state `to`; counts its message in or out. */
  track(entry: Entry, to: EntryState): void {
    const counts = to === 'delivered' ? deliveredInTransaction(entry) : to !== 'removed';
    if (counts === entry.undelivered) return;
    entry.undelivered = counts;
    if (counts) this.#enter(entry.stored);
    else this.#leave(entry.stored);
  }

  #enter(stored: StoredMessage): void {
    if (this.#holders) {
      const holders = this.#holders.get(stored) ?? 0;
      this.#holders.set(stored, holders + 1);
      if (holders > 0) return;
    }
    this.messages++;
    this.total.messages++;
  }

  #leave(stored: StoredMessage): void {
    if (this.#holders) {
      const holders = this.#holders.get(stored) ?? 1;
      if (holders > 1) {
        this.#holders.set(stored, holders - 1);
        return;
      }
      this.#holders.delete(stored);
    }
    this.messages--;
    this.total.messages--;
    this.fewer();
  }
}

/** Whether a delivered entry went to a transacted session's consumer: it is had only on commit. */
function deliveredInTransaction(entry: Entry): boolean {
  return (entry.holder as { readonly transacted?: boolean } | undefined)?.transacted === true;
}
