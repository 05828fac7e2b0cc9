/**
 * Paging (PER-4): while the engine holds more than its threshold, a newly stored persistent
 * message's body leaves memory and is read back from the store when needed.
 */
import type { SharedTally } from '../destination/backlog-statistics.js';
import type { StoredMessage } from '../destination/entry.js';
import type { Message } from '../message/message.js';
import type { MessageStore } from '../store-port.js';

export class Paging {
  readonly #readStored: ((id: string) => Message) | undefined;
  /** Message bodies paged out to the store, ever (PER-4). */
  messagesPagedOut = 0;

  constructor(
    store: MessageStore,
    /** Messages held by every backlog together. */
    private readonly total: SharedTally,
    private readonly thresholdBytes: number,
  ) {
    if (store.readMessage) {
      this.#readStored = (id) => {
        const message = store.readMessage!(id);
        if (!message) throw new Error(`paged-out message '${id}' is missing from the store`);
        return message;
      };
    }
  }

  /**
   * Pages out a recovered message whose body the store left unread (a large body it keeps apart):
   * held in memory, it would be an empty shell of the message.
   */
  keepPagedOut(stored: StoredMessage): void {
    if (!this.#readStored)
      throw new Error(
        `the store left the body of message '${stored.id}' unread but cannot read messages back`,
      );
    if (stored.paged) return;
    stored.pageOut(this.#readStored);
    this.messagesPagedOut++;
  }

  /** Called once a message is stored and in its backlogs: pages it out while over the threshold. */
  pageOutIfOverThreshold(stored: StoredMessage): void {
    if (!this.#readStored || stored.references === 0 || stored.paged) return;
    if (this.total.bytes <= this.thresholdBytes) return;
    stored.pageOut(this.#readStored);
    this.messagesPagedOut++;
  }
}
