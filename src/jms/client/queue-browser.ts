import type { QueueState } from '../destination/destination-state.js';
import type { Queue } from '../destination/destination.js';
import { IllegalStateError } from '../errors.js';
import type { Message } from '../message/message.js';
import type { MessageSelector } from '../selector/index.js';
import type { SessionLink } from './client-links.js';

/**
 * Looks at a queue's available messages in delivery order without consuming them (DST-7).
 * Pending messages (uncommitted, scheduled, delayed, delivered) are not shown.
 */
export class QueueBrowser {
  readonly #session: SessionLink;
  readonly #state: QueueState;
  readonly #selector: MessageSelector;
  #closed = false;

  /** @internal Made by `session.createBrowser()`, which checked that the destination is a queue. */
  static create(session: SessionLink, state: QueueState, selector: MessageSelector): QueueBrowser {
    return new QueueBrowser(session, state, selector);
  }

  /** Not for applications: a QueueBrowser comes from `session.createBrowser()`. */
  // Private, not marked internal: a stripped constructor would publish `new QueueBrowser()`.
  private constructor(session: SessionLink, state: QueueState, selector: MessageSelector) {
    this.#session = session;
    this.#state = state;
    this.#selector = selector;
  }

  getQueue(): Queue {
    return this.#state.handle as Queue;
  }

  getMessageSelector(): string | null {
    return this.#selector.text;
  }

  /** A snapshot of the available messages now, as read-only copies. */
  getEnumeration(): Message[] {
    this.#checkOpen();
    const messages: Message[] = [];
    for (const entry of this.#state.backlog.browse(this.#selector.text === null ? null : this.#selector)) {
      const copy = entry.stored.load().copy();
      copy.deliveryCount = entry.deliveryCount;
      copy.setJMSRedelivered(entry.deliveryCount > 0);
      copy.markReadOnly();
      messages.push(copy);
    }
    return messages;
  }

  [Symbol.iterator](): Iterator<Message> {
    return this.getEnumeration()[Symbol.iterator]();
  }

  /** A browser is closed with its queue (DST-6): noticed here, so deleting costs nothing per browser. */
  #checkOpen(): void {
    if (!this.#closed && this.#state.deleted) this.close();
    if (!this.#closed) return;
    throw new IllegalStateError(
      this.#state.deleted
        ? `browser is closed: its queue '${this.#state.handle.toString()}' was deleted`
        : 'browser is closed',
    );
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#session.browserClosed(this);
  }
}
