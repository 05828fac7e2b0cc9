import type { Entry, EntryState } from './entry.js';
import type { Undelivered } from './undelivered.js';

/** Message and byte counts for one state. */
export interface Tally {
  messages: number;
  bytes: number;
}

/** Gateway-wide held counts, shared by every backlog's statistics (quotas, throttling). */
export interface SharedTally {
  messages: number;
  bytes: number;
}

/** Counters a backlog keeps as entries move between states (DST-9, and pending by cause). */
export class BacklogStatistics {
  constructor(
    private readonly total: SharedTally = { messages: 0, bytes: 0 },
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
  /** Highest count of messages held (current + pending) seen. */
  messagesHighWater = 0;
  /** Highest count of bytes held seen. */
  bytesHighWater = 0;

  /** Moves an entry's message and bytes from one state's tally to another's. */
  move(entry: Entry, from: EntryState, to: EntryState): void {
    if (from === 'removed' && to !== 'removed') {
      this.total.messages++;
      this.total.bytes += entry.size;
    } else if (to === 'removed' && from !== 'removed') {
      this.total.messages--;
      this.total.bytes -= entry.size;
    }
    if (from !== 'removed') {
      const tally = this.byState[from];
      tally.messages--;
      tally.bytes -= entry.size;
    }
    if (to !== 'removed') {
      const tally = this.byState[to];
      tally.messages++;
      tally.bytes += entry.size;
      if (from === 'removed') this.#checkHighWater();
    }
    if (this.undelivered !== undefined) this.undelivered.track(entry, to);
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

  /** Bytes held in any live state. */
  get bytesHeld(): number {
    const s = this.byState;
    return (
      s.uncommitted.bytes +
      s.scheduled.bytes +
      s.delayed.bytes +
      s.available.bytes +
      s.delivered.bytes +
      s.parked.bytes
    );
  }

  #checkHighWater(): void {
    const messages = this.messagesHeld;
    if (messages > this.messagesHighWater) this.messagesHighWater = messages;
    const bytes = this.bytesHeld;
    if (bytes > this.bytesHighWater) this.bytesHighWater = bytes;
  }
}
