import type { Destination, TemporaryQueue } from '../destination/destination.js';
import { IllegalStateError, InvalidArgumentError } from '../errors.js';
import type { Message } from '../message/message.js';
import type { MessageConsumer } from './consumer.js';
import type { MessageProducer } from './producer.js';
import type { Session } from './session.js';

interface Pending {
  resolve(reply: Message | null): void;
  cancel(): void;
}

/**
 * Request/reply over a temporary queue (SES-7). Unlike the JMS QueueRequestor, every request has
 * a timeout. Replies are matched by JMSCorrelationID to the request's JMSMessageID (or to the
 * request's own JMSCorrelationID when it set one), so concurrent requests work.
 */
export class Requestor {
  readonly #session: Session;
  readonly #producer: MessageProducer;
  readonly #replyTo: TemporaryQueue;
  readonly #consumer: MessageConsumer;
  readonly #pending = new Map<string, Pending>();
  readonly #defaultTimeout: number;
  #closed = false;

  /** `defaultTimeoutMs` applies when `request` is given none. The session's connection must be started for replies to arrive. */
  constructor(session: Session, destination: Destination, defaultTimeoutMs = 30_000) {
    this.#session = session;
    this.#defaultTimeout = checkTimeout(defaultTimeoutMs);
    this.#producer = session.createProducer(destination);
    this.#replyTo = session.createTemporaryQueue();
    this.#consumer = session.createConsumer(this.#replyTo);
    this.#consumer.setMessageListener((reply) => this.#onReply(reply));
  }

  /** Sends the request and resolves with the reply, or null when none came within the timeout. */
  async request(message: Message, timeoutMs = this.#defaultTimeout): Promise<Message | null> {
    if (this.#closed) throw new IllegalStateError('requestor is closed');
    checkTimeout(timeoutMs);
    message.setJMSReplyTo(this.#replyTo);
    // `send` stamps JMSMessageID before it first waits, so the reply is registered before it can arrive.
    const sending = this.#producer.send(message);
    const key = message.getJMSCorrelationID() ?? message.getJMSMessageID() ?? '';
    const reply = new Promise<Message | null>((resolve) => {
      const timer = this.#session.connection.engine.timers.after(timeoutMs, () => this.#settle(key, null));
      this.#pending.set(key, { resolve, cancel: () => timer.cancel() });
    });
    try {
      await sending;
    } catch (error) {
      this.#settle(key, null);
      throw error;
    }
    return reply;
  }

  #onReply(reply: Message): void {
    const correlation = reply.getJMSCorrelationID();
    if (correlation !== null) this.#settle(correlation, reply);
  }

  #settle(key: string, reply: Message | null): void {
    const pending = this.#pending.get(key);
    if (!pending) return; // a late reply after its request timed out
    this.#pending.delete(key);
    pending.cancel();
    pending.resolve(reply);
  }

  /** Closes the requestor; pending requests resolve with null. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const key of [...this.#pending.keys()]) this.#settle(key, null);
    await this.#consumer.close();
    this.#producer.close();
    this.#replyTo.delete();
  }
}

function checkTimeout(timeoutMs: number): number {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new InvalidArgumentError(`request timeout ${String(timeoutMs)} is not valid (expected ms > 0)`);
  return timeoutMs;
}
