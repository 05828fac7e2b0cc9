import type { Entry, EntryState } from './entry.js';
import type { Undelivered } from './undelivered.js';

/** Message and byte counts for one state. */
export interface Tally {
  messages: number;
  bytes: number;
}

/**
 * Held counts several backlogs add to: a destination's (a topic's subscriptions together) and
 * the gateway's (quotas, paging), with the most they held at once. A sum of the backlogs' own
 * maxima would overstate it: they need not have held their most at the same time.
 */
export class SharedTally {
  messages = 0;
  bytes = 0;
  /** Most messages held at once. */
  messagesHighWater = 0;
  /** Most bytes held at once. */
  bytesHighWater = 0;

  add(size: number): void {
    if (++this.messages > this.messagesHighWater) this.messagesHighWater = this.messages;
    if ((this.bytes += size) > this.bytesHighWater) this.bytesHighWater = this.bytes;
  }

  remove(size: number): void {
    this.messages--;
    this.bytes -= size;
  }
}

/** Counters a backlog keeps as entries move between states (DST-9, and pending by cause). */
export class BacklogStatistics {
  constructor(
    /** The gateway's held counts. */
    private readonly total: SharedTally = new SharedTally(),
    /** The destination's held counts: its own for a queue, shared by a topic's subscriptions. */
    private readonly destination: SharedTally = new SharedTally(),
    /** The destination's undelivered messages, while producer throttling is on (DLV-8). */
    private readonly undelivered?: Undelivered | undefined,
  ) {}

  readonly byState: Record<Exclude<EntryState, 'removed'>, Tally> = {
    uncommitted: { messages: 0, bytes: 0 },
    scheduled: { messages: 0, bytes: 0 },
    delayed: { messages: 0, bytes: 0 },
    available: { messages: 0, bytes: 0 },
    delivered: { messages: 0, bytes: 0 },
    parked: { messages: 0, bytes: 0 },
  };
  /** Messages that entered the backlog (made visible or pending), ever. */
  messagesReceived = 0;
  /** Messages acknowledged by consumers, ever. */
  messagesAcknowledged = 0;
  /** Messages that expired, ever. */
  messagesExpired = 0;

  /** Moves an entry's message and bytes from one state's tally to another's. */
  move(entry: Entry, from: EntryState, to: EntryState): void {
    if (from === 'removed' && to !== 'removed') {
      this.total.add(entry.size);
      this.destination.add(entry.size);
    } else if (to === 'removed' && from !== 'removed') {
      this.total.remove(entry.size);
      this.destination.remove(entry.size);
    }
    if (from !== 'removed') {
      const tally = this.#tally(from);
      tally.messages--;
      tally.bytes -= entry.size;
    }
    if (to !== 'removed') {
      const tally = this.#tally(to);
      tally.messages++;
      tally.bytes += entry.size;
    }
    if (this.undelivered !== undefined) this.undelivered.track(entry, to);
  }

  /**
   * A state's tally. A switch rather than `byState[state]`: with six state names that keyed
   * read goes megamorphic, and every move of every entry pays for a generic lookup.
   */
  #tally(state: Exclude<EntryState, 'removed'>): Tally {
    const s = this.byState;
    switch (state) {
      case 'available':
        return s.available;
      case 'delivered':
        return s.delivered;
      case 'delayed':
        return s.delayed;
      case 'uncommitted':
        return s.uncommitted;
      case 'scheduled':
        return s.scheduled;
      case 'parked':
        return s.parked;
    }
  }

  /** Messages held in any live state. */
  get messagesHeld(): number {
    const s = this.byState;
    return (
      s.uncommitted.messages +
      s.scheduled.messages +
      s.delayed.messages +
      s.available.messages +
      s.delivered.messages +
      s.parked.messages
    );
  }
}
