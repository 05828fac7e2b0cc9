/** A queue that holds messages pending for each cause a test can bring about without waiting on the clock. */
import { Session, TextMessage } from '../../src/index.js';
import type { TestEngine } from './engine.js';

/**
 * Sends to queue 'orders' (made on first use) and leaves pending: one unacknowledged message
 * ('unacked', 7 bytes), `scheduled` scheduled ones ('later', 5 bytes each, due in a minute) and
 * one uncommitted ('tx', 2 bytes); none pending for redeliveryDelay or errorDestinationFull.
 * The consumer that holds the unacknowledged message stays open, so the queue has one consumer.
 */
export async function pendingForEachCause(t: TestEngine, options: { scheduled?: number } = {}) {
  const connection = t.connect();
  const session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = session.createQueue('orders');
  const producer = session.createProducer(queue);
  await producer.send(new TextMessage('unacked'));
  for (let i = 0; i < (options.scheduled ?? 1); i++) {
    await producer.send(new TextMessage('later'), { deliveryDelay: 60_000 });
  }
  const transacted = connection.createSession(true);
  await transacted.createProducer(queue).send(new TextMessage('tx'));
  // Receiving after the other sends takes 'unacked': the rest are not yet deliverable.
  const consumer = session.createConsumer(queue);
  await consumer.receiveNoWait();
  return { connection, session, queue, consumer, transacted };
}
