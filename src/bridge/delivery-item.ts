/** A delivery as the bridge runtime carries it from the source to the target. */
import type { Message } from '../jms/message/message.js';
import type { Delivery } from '../spi/connector.js';

/** A delivery inside the runtime. */
export interface Item {
  readonly delivery: Delivery;
  readonly message: Message;
  /** JMSMessageID as read, the duplicate-window key. */
  readonly id: string | null;
  /** The source connection it was read on: a lost connection abandons what it had not settled. */
  readonly epoch: number;
  /** JMSXDeliveryCount as the runtime keeps it: the attempt under way. */
  deliveryCount: number;
  /** Failed attempts that count toward the retry limit (since the last `resume()`). */
  failures: number;
  /** BackOffError retries (not counted). */
  backoffs: number;
  /** Sends made so far. */
  sends: number;
  /** Sends in a row that ended in a lost sink connection. */
  lostSends: number;
  /**
   * A send of it ended in a lost sink connection: it may be what makes the target drop the
   * connection, so its next sends go alone and a loss then counts toward its retry limit.
   */
  suspect: boolean;
  /** Part of a batch the sink has not answered yet. */
  sending: boolean;
  /** At-most-once: acknowledged at the source before sending. */
  settledAtSource: boolean;
  /** Exactly-once: the duplicate window was consulted. */
  checked: boolean;
  /**
   * An earlier send may have reached the target: the source delivered it again (it was read
   * before a restart or a lost connection), or a send of it ended with the connection lost.
   */
  maybeSent: boolean;
}

/** A new item for a delivery read on source connection `epoch`. */
export function itemOf(delivery: Delivery, epoch: number): Item {
  const message = delivery.message;
  return {
    delivery,
    message,
    id: message.getJMSMessageID(),
    epoch,
    deliveryCount: Math.max(1, message.deliveryCount),
    failures: 0,
    backoffs: 0,
    sends: 0,
    lostSends: 0,
    suspect: false,
    sending: false,
    settledAtSource: false,
    checked: false,
    maybeSent: message.getJMSRedelivered() || message.deliveryCount > 1,
  };
}
