/**
 * What the admin API does to destinations, done through the engine's own JMS API so that every
 * rule (selectors, transactions, persistence, quotas) applies as it does to any client: browse,
 * send, delete one message, and move or replay messages in one transaction per batch.
 */
import type { Connection } from '../jms/client/connection.js';
import { ConnectionFactory } from '../jms/client/connection-factory.js';
import { ERROR_BRIDGE, ERROR_ORIGIN, ERROR_PROPERTIES, externalOrigin } from '../jms/delivery/error-copy.js';
import { type Destination, Queue, parseDestination } from '../jms/destination/destination.js';
import type { JmsEngine } from '../jms/engine.js';
import { InvalidDestinationError } from '../jms/errors.js';
import type { Message } from '../jms/message/message.js';

/** How the origin of a message a bridge read from an external broker starts: no replay can reach it. */
const EXTERNAL_ORIGIN = externalOrigin('');
/** Messages moved per transaction. */
const MOVE_BATCH = 500;

/** Result of a move or replay. */
export interface MoveResult {
  moved: number;
}

export class DestinationOperations {
  readonly #connection: Connection;

  constructor(readonly engine: JmsEngine) {
    this.#connection = new ConnectionFactory(engine, { messagesMaximum: 1 }).createConnection();
    this.#connection.start();
  }

  /** The available messages of a queue in delivery order, through an optional selector (DST-7). */
  browse(queue: string, selector: string | null, limit: number): Message[] {
    const session = this.#connection.createSession();
    try {
      return session.createBrowser(this.#existingQueue(queue), selector).getEnumeration().slice(0, limit);
    } finally {
      void session.close();
    }
  }

  /**
   * How many available messages of a queue a browse (or a move) through `selector` would see: a
   * long move or replay asks first, to show its progress against a total.
   */
  count(queue: string, selector: string | null): number {
    const session = this.#connection.createSession();
    try {
      // A count never creates the queue it asks about.
      const handle = this.#existing(queueHandle(queue).toString());
      return session.createBrowser(handle as Queue, selector).getEnumeration().length;
    } finally {
      void session.close();
    }
  }

  /** Sends a message; resolves when it is stored (persistent) or queued. */
  async send(destination: string, message: Message): Promise<string> {
    const session = this.#connection.createSession();
    try {
      await session.createProducer(this.#existing(destination)).send(message, {
        deliveryMode: message.getJMSDeliveryMode(),
        priority: message.getJMSPriority(),
      });
      return message.getJMSMessageID()!;
    } finally {
      await session.close();
    }
  }

  /** Deletes one available message by JMSMessageID; false when there is none. */
  async deleteMessage(queue: string, messageId: string): Promise<boolean> {
    const session = this.#connection.createSession(true);
    try {
      const consumer = session.createConsumer(
        this.#existingQueue(queue),
        `JMSMessageID = '${messageId.replaceAll("'", "''")}'`,
      );
      const found = await consumer.receiveNoWait();
      await session.commit();
      return found !== null;
    } finally {
      await session.close();
    }
  }

  /**
   * Moves available messages of `from` (optionally through a selector) to `to`, or, with
   * `to = 'origin'`, each back to the destination recorded in `JMS_ErrorOrigin` (replaying an
   * error destination; messages without one stay; one whose origin is an external broker, as
   * `bridge://<name>`, fails the batch: it needs an explicit target). Headers and properties are kept, the parking
   * properties removed, and the delivery count starts again. Each batch of up to 500 is one
   * transaction, so nothing is lost or doubled; a failure rolls the batch back and is thrown.
   */
  async move(
    from: string,
    to: string,
    options: { selector?: string | null; limit?: number; onProgress?: (moved: number) => void } = {},
  ): Promise<MoveResult> {
    const limit = options.limit ?? Infinity;
    const target = to === 'origin' ? null : this.#existing(to);
    const selector = [options.selector, target ? null : `${ERROR_ORIGIN} IS NOT NULL`]
      .filter((part): part is string => Boolean(part))
      .map((part) => `(${part})`)
      .join(' AND ');
    const session = this.#connection.createSession(true);
    let moved = 0;
    try {
      const consumer = session.createConsumer(this.#existingQueue(from), selector || null);
      const producer = session.createProducer();
      for (;;) {
        let batch = 0;
        while (batch < MOVE_BATCH && moved < limit) {
          const message = await consumer.receiveNoWait();
          if (!message) break;
          const destination = target ?? this.#origin(message);
          await producer.send(destination, copyForResend(message), {
            deliveryMode: message.getJMSDeliveryMode(),
            priority: message.getJMSPriority(),
          });
          batch++;
          moved++;
        }
        await session.commit();
        if (batch > 0) options.onProgress?.(moved);
        if (batch < MOVE_BATCH || moved >= limit) return { moved };
      }
    } catch (error) {
      await session.rollback();
      throw error;
    } finally {
      await session.close();
    }
  }

  async close(): Promise<void> {
    await this.#connection.close();
  }

  #existing(name: string): Destination {
    const handle = parseDestination(name);
    // A map lookup: a replay asks once per message.
    if (!this.engine.destinationOptions(handle)) {
      throw new InvalidDestinationError(`destination '${name}' does not exist`);
    }
    return handle;
  }

  /** A queue to read: looking at one that does not exist must not create it on first use. */
  #existingQueue(name: string): Queue {
    const handle = queueHandle(name);
    this.#existing(handle.toString());
    return handle;
  }

  #origin(message: Message): Destination {
    const origin = message.getStringProperty(ERROR_ORIGIN)!;
    const id = message.getJMSMessageID();
    if (origin.startsWith(EXTERNAL_ORIGIN)) {
      const bridge = message.getStringProperty(ERROR_BRIDGE) ?? origin.slice(EXTERNAL_ORIGIN.length);
      throw new InvalidDestinationError(
        `cannot replay message '${id}' to its origin: it came through bridge '${bridge}' from an external source, which the gateway cannot send to; give a target destination instead`,
      );
    }
    let handle: Destination;
    try {
      handle = parseDestination(origin);
    } catch {
      throw new InvalidDestinationError(
        `cannot replay message '${id}' to its origin: '${origin}' is not a destination of this gateway; give a target destination instead`,
      );
    }
    try {
      return this.#existing(handle.toString());
    } catch {
      throw new InvalidDestinationError(
        `cannot replay message '${id}': its origin '${origin}' no longer exists; move it to another destination instead`,
      );
    }
  }
}

function queueHandle(name: string): Queue {
  const handle = name.includes('://') ? parseDestination(name) : new Queue(name);
  if (handle.kind !== 'queue')
    throw new InvalidDestinationError(`'${name}' is not a queue: only queues can be browsed or moved from`);
  return handle;
}

/** A writable copy to send again: same body, headers the sender sets, properties but the parking ones. */
function copyForResend(message: Message): Message {
  const copy = message.copy();
  copy.clearProperties();
  for (const name of message.getPropertyNames()) {
    if (ERROR_PROPERTIES.includes(name) || name === 'JMSXDeliveryCount') continue;
    const value = message.getTypedProperty(name)!;
    if (name.startsWith('JMS') && name !== 'JMSXGroupID' && name !== 'JMSXGroupSeq')
      copy.setProviderProperty(name, value);
    else copy.setObjectProperty(name, value);
  }
  copy.deliveryCount = 0;
  return copy;
}
