/**
 * Publishes to an AMQP exchange on a confirm channel. `send` resolves only once the broker
 * confirmed the message (basic.ack after it is routed, and persisted when persistent), so the
 * runtime acknowledges its source only for messages the broker owns (BRG-2 at-least-once).
 *
 * Failures, as the runtime sees them:
 * - unroutable (with `mandatory`, basic.return NO_ROUTE: no queue is bound for the routing key):
 *   BackOffError. The bindings are missing, not the message: parking it as poison would park
 *   every message alike, and a permanent failure would need a restart once the consumer side
 *   binds its queue (which often starts later). The runtime retries the same message with its
 *   retry delay, not counted toward the limit, later messages wait behind it, and the bridge
 *   shows `retrying` with the reason as its last error until a queue is bound.
 * - basic.nack (the broker could not take it, e.g. a queue at its length limit with
 *   `reject-publish`): BackOffError, retried later.
 * - a body over the broker's `max_message_size` (checked before publishing, see
 *   `size-limit.ts`), a message amqplib cannot encode (a header table beyond the frame size, a
 *   property name over 255 bytes) or one the broker refuses for its size: PoisonMessageError,
 *   it never fits.
 * - the channel closed by an error that names the configuration (no such exchange, access
 *   refused): EndpointConfigurationError; a lost connection: NotConnectedError.
 */
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import {
  BackOffError,
  ConfigValidationError,
  NotConnectedError,
  PoisonMessageError,
  type ConnectorContext,
  type Message,
  type Sink,
  OrderedBatches,
  type SendResult,
  untilAborted,
  writeBatchInTurn,
} from '../../src/spi/index.js';
import { classify, connectionUser, replyCode, openConnection, writeCoalescer } from './connection.js';
import { declareTopology } from './declare.js';
import { toAmqp, type AmqpOutgoing } from './mapping.js';
import { confirmPublisher, type Publish } from './publish.js';
import { type BodyLimit, bodyLimit, checkBodySize, tooLargeAnswer } from './size-limit.js';
import type { AmqpConfig } from './spec.js';

/** The error amqplib passes to a publish callback for basic.nack (others mean the channel closed). */
const NACKED = 'message nacked';

/** A publish waiting for its confirm; `returned` is set when basic.return came back for it. */
interface Pending {
  readonly routingKey: string;
  readonly outgoing: AmqpOutgoing;
  returned?: string;
}

interface Session {
  readonly connection: ChannelModel;
  readonly channel: ConfirmChannel;
  /** Unconfirmed publishes in publish order, to match basic.return to its send. */
  readonly pending: Set<Pending>;
  /** The error that closed the channel, if it was closed by one. */
  closeError?: Error;
  /** The largest body the broker takes, when known. */
  readonly limit: BodyLimit | undefined;
  /** Publishes on `channel`, confirmed. */
  readonly publish: Publish;
  /** Called after each publish: the frames of one turn's publishes go out in one write. */
  readonly coalesceWrites: () => void;
  /** Set while the socket's write buffer is full: sends wait for it to drain. */
  draining?: Promise<void> | undefined;
  /** Applies the batch ordering rule to this channel's batches (confirms come in publish order). */
  readonly ordered: OrderedBatches;
  /** Resolves when the batch before has been written: batches are published one after the other. */
  writing: Promise<void>;
  lost: boolean;
}

/**
 * Batches `sendBatch` takes at once. One channel confirms in publish order, so batches in flight
 * keep their order; a few keep the pipe full while the last confirms of one batch travel back.
 */
const BATCHES_IN_FLIGHT = 4;

/** An AMQP 0-9-1 sink: see the module comment for what each failure means. */
export class AmqpSink implements Sink {
  readonly #config: AmqpConfig;
  readonly #context: ConnectorContext;
  readonly #routingKey: string;
  /** The user the connection authenticates as: the only JMSXUserID RabbitMQ takes as `userId`. */
  readonly #user: string;
  #session: Session | undefined;

  constructor(config: AmqpConfig, context: ConnectorContext) {
    if (config.exchange === '' && (config.queue === undefined || config.queue === '')) {
      throw new ConfigValidationError(
        'queue',
        "is required for an amqp sink that publishes to the default exchange (or set 'exchange')",
      );
    }
    this.#config = config;
    this.#context = context;
    this.#routingKey = config.routingKey ?? config.queue ?? '';
    this.#user = connectionUser(config.url);
  }

  get #target(): string {
    return `exchange '${this.#config.exchange}' with routing key '${this.#routingKey}'`;
  }

  async connect(signal: AbortSignal): Promise<void> {
    await this.close();
    const connection = await openConnection(this.#config, this.#context, 'sink', signal);
    const log = { bridge: this.#context.name, exchange: this.#config.exchange, routingKey: this.#routingKey };
    connection.on('error', (error: Error) =>
      this.#context.logger.warn({ ...log, error: error.message }, 'amqp connection error'),
    );
    connection.on('blocked', (reason: string) =>
      this.#context.logger.warn({ ...log, reason }, 'amqp broker blocked publishing'),
    );
    connection.on('unblocked', () => this.#context.logger.info(log, 'amqp broker unblocked publishing'));
    let session: Session | undefined;
    try {
      const channel = await connection.createConfirmChannel();
      const server = connection.connection.serverProperties;
      const limit = bodyLimit(this.#config.maxMessageBytes, server.product, server.version);
      const current: Session = {
        connection,
        channel,
        pending: new Set(),
        limit,
        publish: confirmPublisher(channel),
        coalesceWrites: writeCoalescer(connection),
        ordered: new OrderedBatches(),
        writing: Promise.resolve(),
        lost: false,
      };
      session = current;
      channel.on('error', (error: Error) => {
        current.closeError = error;
        this.#context.logger.warn({ ...log, error: error.message }, 'amqp channel error');
      });
      channel.on('return', (returned: ConsumeMessage) => this.#onReturn(current, returned));
      channel.on('close', () => this.#lose(current));
      connection.on('close', () => this.#lose(current));
      await this.#prepareTopology(connection, channel);
      if (signal.aborted) throw signal.reason;
      this.#session = session;
      this.#context.logger.info(log, 'amqp sink connected');
    } catch (error) {
      if (session) session.lost = true;
      await connection.close().catch(() => {});
      throw signal.aborted ? error : classify(error, `cannot publish to ${this.#target}`);
    }
  }

  /** Declares what `declare` lists, then checks that the exchange (or queue) it publishes to exists. */
  async #prepareTopology(connection: ChannelModel, channel: ConfirmChannel): Promise<void> {
    const { exchange, queue, declare } = this.#config;
    if (declare) await declareTopology(connection, declare);
    if (exchange !== '') await channel.checkExchange(exchange);
    else if (queue !== undefined) await channel.checkQueue(queue);
  }

  async send(message: Message, signal: AbortSignal): Promise<void> {
    const session = this.#session;
    if (session === undefined || session.lost) throw new NotConnectedError('the amqp sink is not connected');
    if (signal.aborted) throw signal.reason;
    const outgoing = this.#encode(session, message);
    if (session.draining) await untilAborted(session.draining, signal);
    await untilAborted(this.#publish(session, message, outgoing), signal);
  }

  readonly maxBatchesInFlight = BATCHES_IN_FLIGHT;

  /**
   * Publishes the whole batch on the confirm channel without waiting for confirms in between
   * (pausing only while the socket's write buffer drains), then collects every confirm, nack and
   * return. A message that cannot be encoded or is over the size limit fails alone (poison) and
   * is not published; a lost connection fails every unconfirmed message with NotConnectedError.
   * Batches are written one after the other and settled by the ordering rule
   * ({@link writeBatchInTurn}).
   */
  async sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]> {
    const session = this.#session;
    if (session === undefined || session.lost) throw new NotConnectedError('the amqp sink is not connected');
    if (signal.aborted) throw signal.reason;
    const failed = (error: unknown): SendResult => ({ ok: false, error: error as Error });
    return writeBatchInTurn(session, batch, async (message) => {
      if (session.draining) {
        try {
          await untilAborted(session.draining, signal);
        } catch (error) {
          return { result: failed(this.#abandoned(signal, error)) };
        }
      }
      if (session.lost || signal.aborted) return { result: failed(this.#abandoned(signal, undefined)) };
      let outgoing: AmqpOutgoing;
      try {
        outgoing = this.#encode(session, message);
      } catch (error) {
        return { result: failed(error) };
      }
      return {
        result: this.#publish(session, message, outgoing).then(
          (): SendResult => ({ ok: true }),
          (error: unknown) => failed(error),
        ),
      };
    });
  }

  /** Why a message of a batch was not published: the batch was aborted, or the channel is gone. */
  #abandoned(signal: AbortSignal, error: unknown): Error {
    if (signal.aborted) return new NotConnectedError('the send was aborted before the message was published');
    return error instanceof Error && error instanceof NotConnectedError
      ? error
      : new NotConnectedError('the connection to the AMQP broker was lost before the message was published');
  }

  /** The message's AMQP form, checked against the size limit; throws poison when it has none that fits. */
  #encode(session: Session, message: Message): AmqpOutgoing {
    let outgoing: AmqpOutgoing;
    try {
      outgoing = toAmqp(message, {
        persistent: this.#config.persistent,
        ttl: this.#config.ttl,
        now: Date.now(),
        user: this.#user,
      });
    } catch (error) {
      throw new PoisonMessageError(
        `message '${message.getJMSMessageID()}' has no AMQP form: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    checkBodySize(outgoing.content.length, message.getJMSMessageID(), session.limit);
    return outgoing;
  }

  #publish(session: Session, message: Message, outgoing: AmqpOutgoing): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry: Pending = { routingKey: this.#routingKey, outgoing };
      session.pending.add(entry);
      const confirmed = (error: unknown): void => {
        session.pending.delete(entry);
        if (entry.returned !== undefined) {
          reject(
            new BackOffError(
              `message '${message.getJMSMessageID()}' is unroutable: no queue is bound to ${this.#target} (${entry.returned}); retried until one is`,
            ),
          );
        } else if (error === null || error === undefined) {
          resolve();
        } else if (error instanceof Error && error.message === NACKED) {
          reject(
            new BackOffError(
              `the broker refused message '${message.getJMSMessageID()}' (basic.nack)`,
              undefined,
              { cause: error },
            ),
          );
        } else {
          reject(this.#closedFailure(session, message, outgoing.content.length));
        }
      };
      let writable: boolean;
      try {
        writable = session.publish(
          this.#config.exchange,
          this.#routingKey,
          outgoing,
          this.#config.mandatory,
          confirmed,
        );
        session.coalesceWrites();
      } catch (error) {
        session.pending.delete(entry);
        reject(
          error instanceof TypeError || error instanceof RangeError
            ? new PoisonMessageError(
                `message '${message.getJMSMessageID()}' cannot be encoded for AMQP: ${error.message}`,
                {
                  cause: error,
                },
              )
            : new NotConnectedError('cannot publish: the channel is closed', { cause: error }),
        );
        return;
      }
      if (!writable && session.draining === undefined) {
        session.draining = new Promise<void>((done) => {
          const finish = (): void => {
            session.draining = undefined;
            session.channel.off('drain', finish);
            session.channel.off('close', finish);
            done();
          };
          session.channel.on('drain', finish);
          session.channel.on('close', finish);
        });
      }
    });
  }

  /**
   * Why a publish failed when its channel closed. RabbitMQ's close for a too-large message fails
   * every publish in flight on the channel; only the one of the size it names is poison, the
   * others were lost with the channel.
   */
  #closedFailure(session: Session, message: Message, bodyBytes: number): Error {
    const cause = session.closeError;
    if (cause !== undefined && replyCode(cause) === 406 && /message size/i.test(cause.message)) {
      const tooLarge = tooLargeAnswer(cause.message, message.getJMSMessageID(), cause);
      if (tooLarge === undefined)
        return new PoisonMessageError(
          `message '${message.getJMSMessageID()}' is too large for the broker: ${cause.message}`,
          { cause },
        );
      if (tooLarge.size === bodyBytes) return tooLarge;
      return new NotConnectedError(
        `the channel closed before message '${message.getJMSMessageID()}' was confirmed, because another message was too large`,
        { cause },
      );
    }
    return cause === undefined
      ? new NotConnectedError('the connection to the AMQP broker was lost before the message was confirmed')
      : classify(cause, `publishing to ${this.#target} failed`);
  }

  /** basic.return comes before the confirm of the same publish: mark that publish as returned. */
  #onReturn(session: Session, returned: ConsumeMessage): void {
    const { exchange, routingKey } = returned.fields;
    const fields = returned.fields as typeof returned.fields & { replyCode?: number; replyText?: string };
    for (const entry of session.pending) {
      if (
        entry.returned === undefined &&
        exchange === this.#config.exchange &&
        routingKey === entry.routingKey &&
        returned.properties.messageId === entry.outgoing.properties.messageId &&
        returned.content.equals(entry.outgoing.content)
      ) {
        entry.returned = `${fields.replyCode ?? 312} ${fields.replyText ?? 'NO_ROUTE'}`;
        return;
      }
    }
  }

  #lose(session: Session): void {
    if (session.lost) return;
    session.lost = true;
    if (this.#session === session) {
      this.#context.logger.warn({ bridge: this.#context.name }, 'amqp sink lost its channel or connection');
      session.connection.close().catch(() => {});
    }
  }

  async close(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    session.lost = true;
    await session.channel.close().catch(() => {});
    await session.connection.close().catch(() => {});
  }
}
