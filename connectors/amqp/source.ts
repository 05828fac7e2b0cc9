/**
 * Consumes an AMQP queue with manual acknowledgement and a prefetch window. Settling maps to the
 * broker as follows:
 *
 * - `ack` → `basic.ack`: the broker forgets the message. The acks settled in one turn go as one
 *   frame where they can (`acks.ts`).
 * - `retry` → `basic.nack(requeue=true)`: the broker puts it back and delivers it again, marked
 *   redelivered (JMSRedelivered). The runtime waits the redelivery delay before it settles
 *   with `retry` (AMQP 0-9-1 has no delayed requeue).
 * - `reject` → `basic.nack(requeue=false)`: the broker drops the message, or dead-letters it to
 *   the queue's dead-letter exchange when it has one (argument `x-dead-letter-exchange`).
 *
 * Losing the connection or channel fails waiting and later `receive` calls with
 * NotConnectedError, and settling a delivery of the lost channel rejects with NotConnectedError:
 * the broker has already put its messages back and delivers them again after `connect`. `close`
 * closes the channel without acknowledging, so unsettled messages return to the queue.
 */
import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import {
  ConfigValidationError,
  NotConnectedError,
  type ConnectorContext,
  type Delivery,
  type Outcome,
  type Source,
  WaitingQueue,
} from '../../src/spi/index.js';
import { ChannelAcks } from './acks.js';
import { classify, openConnection } from './connection.js';
import { declareTopology } from './declare.js';
import { fromAmqp } from './mapping.js';
import type { AmqpConfig } from './spec.js';

/** One connection's worth of state: deliveries of a lost connection cannot be settled. */
interface Session {
  readonly connection: ChannelModel;
  readonly channel: Channel;
  readonly deliveries: WaitingQueue<Delivery>;
  /** Acks settled in one turn go as one frame. */
  readonly acks: ChannelAcks;
  lost: boolean;
}

/** An AMQP 0-9-1 source: see the module comment for how outcomes reach the broker. */
export class AmqpSource implements Source {
  readonly #config: AmqpConfig;
  readonly #context: ConnectorContext;
  readonly #queue: string;
  #session: Session | undefined;

  constructor(config: AmqpConfig, context: ConnectorContext) {
    if (config.queue === undefined || config.queue === '') {
      throw new ConfigValidationError('queue', 'is required for an amqp source: the queue to consume');
    }
    this.#config = config;
    this.#context = context;
    this.#queue = config.queue;
  }

  async connect(signal: AbortSignal): Promise<void> {
    await this.close();
    const connection = await openConnection(this.#config, this.#context, 'source', signal);
    const log = { bridge: this.#context.name, queue: this.#queue };
    connection.on('error', (error: Error) =>
      this.#context.logger.warn({ ...log, error: error.message }, 'amqp connection error'),
    );
    let session: Session | undefined;
    try {
      const channel = await connection.createChannel();
      channel.on('error', (error: Error) =>
        this.#context.logger.warn({ ...log, error: error.message }, 'amqp channel error'),
      );
      session = {
        connection,
        channel,
        deliveries: new WaitingQueue<Delivery>(),
        acks: new ChannelAcks(channel),
        lost: false,
      };
      const current = session;
      connection.on('close', () => this.#lose(current, 'the connection to the AMQP broker was closed'));
      channel.on('close', () => this.#lose(current, 'the AMQP channel was closed'));
      if (this.#config.declare) await declareTopology(connection, this.#config.declare);
      await channel.checkQueue(this.#queue);
      await channel.prefetch(this.#config.prefetch);
      await channel.consume(this.#queue, (message) => this.#onMessage(current, message), { noAck: false });
      if (signal.aborted) throw signal.reason;
      this.#session = session;
      this.#context.logger.info(log, 'amqp source connected');
    } catch (error) {
      if (session) session.lost = true;
      await connection.close().catch(() => {});
      throw signal.aborted ? error : classify(error, `cannot consume from queue '${this.#queue}'`);
    }
  }

  receive(signal: AbortSignal): Promise<Delivery> {
    const session = this.#session;
    if (session === undefined)
      return Promise.reject(new NotConnectedError('the amqp source is not connected'));
    return session.deliveries.take(signal);
  }

  /** Up to `max` deliveries: waits for the first, then takes what is already buffered. */
  receiveBatch(max: number, signal: AbortSignal): Promise<readonly Delivery[]> {
    const session = this.#session;
    if (session === undefined)
      return Promise.reject(new NotConnectedError('the amqp source is not connected'));
    return session.deliveries.takeUpTo(max, signal);
  }

  async close(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    this.#lose(session, 'the amqp source was closed');
    // Channel first: its close travels behind the acks already written on it, whereas amqplib
    // may send the connection's close ahead of them and the broker would requeue acked messages.
    // Closing without acknowledging returns every unsettled message to the queue.
    await session.channel.close().catch(() => {});
    await session.connection.close().catch(() => {});
  }

  #lose(session: Session, reason: string): void {
    if (session.lost) return;
    session.lost = true;
    session.deliveries.fail(new NotConnectedError(reason));
    session.acks.lose(
      new NotConnectedError('the channel this message came on is closed; the broker delivers it again'),
    );
    if (this.#session === session) {
      this.#context.logger.warn({ bridge: this.#context.name, queue: this.#queue }, reason);
      session.connection.close().catch(() => {});
    }
  }

  #onMessage(session: Session, raw: ConsumeMessage | null): void {
    if (raw === null) {
      // basic.cancel from the broker: the queue was deleted or its node went away.
      this.#lose(session, `the broker cancelled the consumer of queue '${this.#queue}' (queue deleted?)`);
      return;
    }
    session.acks.delivered(raw);
    const { message, warnings } = fromAmqp(raw, Date.now());
    if (warnings.length > 0) {
      this.#context.logger.warn(
        { bridge: this.#context.name, queue: this.#queue, messageId: message.getJMSMessageID(), warnings },
        'amqp message read with approximations',
      );
    }
    let settled = false;
    const settle = (outcome: Outcome): Promise<void> => {
      if (settled)
        return Promise.reject(
          new Error(`delivery of message '${message.getJMSMessageID()}' was already settled`),
        );
      settled = true;
      if (session.lost)
        return Promise.reject(
          new NotConnectedError('the channel this message came on is closed; the broker delivers it again'),
        );
      if (outcome.kind === 'ack') return session.acks.ack(raw);
      try {
        session.acks.nack(raw, outcome.kind === 'retry');
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(
          new NotConnectedError('could not settle: the channel is closed', { cause: error }),
        );
      }
    };
    session.deliveries.push({ message, orderingKey: this.#queue, settle });
  }
}
