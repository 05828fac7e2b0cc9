/**
 * Writes messages to a Kafka topic. `send` resolves once the broker acknowledged the record with
 * the configured acks (-1 by default: every in-sync replica has it), which is what at-least-once
 * needs (BRG-2).
 *
 * The producer is idempotent by default: the broker drops duplicates of the client's own retries
 * within one producer session, so they neither duplicate nor reorder records. It does not
 * recognise a message the runtime sends again after a failed `send` (a new record to Kafka).
 *
 * Before sending, a record is checked against the topic's and the brokers' size limits, read at
 * connect (`size-limits.ts`): a request over `socket.request.max.bytes` is not answered by Kafka
 * but by a closed connection, so it must not be sent at all.
 *
 * With `transactionalId` — or on an exactly-once bridge, where it defaults to
 * `jms-gateway-<bridge name>` — each message is sent in its own transaction, committed before
 * `send` resolves; read_committed consumers never see a record of a failed send, and a restarted
 * gateway's producer fences the previous one (aborting the transaction it left open). Each record
 * then carries the header `jms.forwardedBy` (the transactional id), so {@link KafkaSink.forwardedIds}
 * can read back which messages the topic holds from this sink: the bridge rebuilds its duplicate
 * window from it, and a message whose send committed just before a crash is recognised when the
 * source delivers it again. The Kafka source's offsets are not part of that transaction (the
 * message passes through the runtime in between, and the source may be another broker), so
 * exactly-once rests on the runtime's duplicate detection by JMSMessageID, with the target as
 * the record of what was sent (see docs/bridges.md, "Where exactly-once ends").
 */
import type { Producer, ProducerRecord } from 'kafkajs';
import { CompressionTypes } from 'kafkajs';
import {
  EndpointConfigurationError,
  NotConnectedError,
  PoisonMessageError,
  untilAborted,
} from '../../src/spi/index.js';
import type { ConnectorContext, Message, Sink } from '../../src/spi/index.js';
import type { ForwardedIdSeen, ForwardedIdsQuery } from '../../src/spi/index.js';
import { createAdmin, createProducer, defaultClientId, disconnectFully } from './client.js';
import { ensureTopic } from './create-topic.js';
import { classifyConnectionError, classifySendError } from './errors.js';
import { readForwardedIds } from './forwarded-ids.js';
import { FORWARDED_BY_HEADER, messageToRecord } from './mapping.js';
import {
  type KafkaSizeLimits,
  type RequestEnvelope,
  checkRecordSize,
  readSizeLimits,
} from './size-limits.js';
import type { KafkaConfig } from './spec.js';

/** A Kafka sink; see the module comment for what `send` guarantees. */
export class KafkaSink implements Sink {
  readonly #config: KafkaConfig;
  readonly #context: ConnectorContext;
  #producer: Producer | undefined;
  /** Set when the producer is transactional (configured, or defaulted for exactly-once). */
  readonly #transactionalId: string | undefined;
  /** What a record may weigh, checked before each send; empty when no limit is known. */
  #limits: KafkaSizeLimits = {};
  /** A limit could not be read: said once at warn, then at debug on every reconnect. */
  #limitsUnknownSaid = false;
  readonly #envelope: RequestEnvelope;
  /** Transactions of one producer run one at a time (kafkajs allows one open transaction). */
  #transactions: Promise<void> = Promise.resolve();

  constructor(config: KafkaConfig, context: ConnectorContext) {
    this.#config = config;
    this.#context = context;
    this.#transactionalId =
      config.transactionalId ??
      (context.qos === 'exactly-once' && config.idempotent ? defaultClientId(context) : undefined);
    this.#envelope = {
      clientId: config.clientId ?? defaultClientId(context),
      topic: config.topic,
      ...(this.#transactionalId !== undefined ? { transactionalId: this.#transactionalId } : {}),
    };
  }

  async connect(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#producer !== undefined) return;
    if (this.#config.key.from === 'xpath' && this.#context.evaluateXPath === undefined) {
      throw new EndpointConfigurationError(
        `kafka sink for '${this.#config.topic}': key.from 'xpath' needs the bridge runtime's XPath evaluator, which it did not pass; set a property from the XPath on the route and use key.from 'property'`,
      );
    }
    const config = this.#config;
    if (config.createTopic !== undefined)
      await ensureTopic({ ...config, createTopic: config.createTopic }, this.#context, signal);
    const producer = createProducer(config, this.#context, {
      idempotent: config.idempotent,
      // Transactions go one at a time anyway; one request in flight keeps their records in order.
      maxInFlightRequests: this.#transactionalId === undefined ? config.maxInFlightRequests : 1,
      allowAutoTopicCreation: config.allowAutoTopicCreation,
      transactionTimeout: config.transactionTimeout,
      retry: { retries: config.retries },
      ...(this.#transactionalId !== undefined ? { transactionalId: this.#transactionalId } : {}),
    });
    try {
      await untilAborted(producer.connect(), signal);
      if (this.#transactionalId !== undefined) await untilAborted(fenceEarlierProducer(producer), signal);
    } catch (error) {
      await disconnectFully(producer);
      if (signal.aborted) throw signal.reason;
      throw classifyConnectionError(error, `connecting to kafka for topic '${config.topic}'`);
    }
    try {
      this.#limits = await this.#sizeLimits(signal);
    } catch (error) {
      await disconnectFully(producer);
      throw error;
    }
    this.#producer = producer;
    this.#context.logger.info(
      { topic: config.topic, transactional: this.#transactionalId !== undefined },
      'kafka sink connected',
    );
  }

  /**
   * What this sink's earlier transactions committed to the topic (read_committed), as far back
   * as `query` says; undefined when the producer is not transactional (nothing marks its records,
   * and a failed send may have left a record behind). Call after `connect`.
   */
  async forwardedIds(
    query: ForwardedIdsQuery,
    signal: AbortSignal,
  ): Promise<readonly ForwardedIdSeen[] | undefined> {
    const transactionalId = this.#transactionalId;
    if (transactionalId === undefined) return undefined;
    return readForwardedIds(this.#config, this.#context, transactionalId, query, signal);
  }

  async send(message: Message, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const producer = this.#producer;
    if (producer === undefined)
      throw new NotConnectedError(`kafka sink for '${this.#config.topic}' is not connected`);
    const record = this.#record(message);
    const kafkaMessage = record.messages[0];
    if (kafkaMessage !== undefined)
      checkRecordSize(kafkaMessage, message.getJMSMessageID(), this.#limits, this.#envelope);
    try {
      // An aborted send may still reach Kafka: the runtime treats it as failed and may send it
      // again (at-least-once).
      const sent =
        this.#transactionalId === undefined
          ? producer.send(record).then(() => undefined)
          : this.#sendInTransaction(producer, record);
      await untilAborted(sent, signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      const reason = classifySendError(error, this.#config.topic);
      if (reason instanceof NotConnectedError) this.#drop(producer);
      throw reason;
    }
  }

  async close(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    if (producer === undefined) return;
    await this.#transactions.catch(() => undefined);
    await disconnectFully(producer);
    this.#context.logger.info({ topic: this.#config.topic }, 'kafka sink closed');
  }

  /**
   * The limits a record is checked against: `maxMessageBytes` when set, else what the brokers
   * say. With compression the read limits are left to the broker, which compares the compressed
   * batch (a record over the topic limit is answered with MESSAGE_TOO_LARGE, poison too).
   */
  async #sizeLimits(signal: AbortSignal): Promise<KafkaSizeLimits> {
    const config = this.#config;
    if (config.maxMessageBytes !== undefined)
      return { batch: { bytes: config.maxMessageBytes, source: `the kafka sink's maxMessageBytes` } };
    if (config.compression !== 'none') return {};
    const admin = createAdmin(config, this.#context);
    const unknown = (what: string, error: unknown): void => {
      const fields = { topic: config.topic, err: error instanceof Error ? error.message : String(error) };
      const text = `kafka sink could not read ${what}: messages are not checked against it before sending; set maxMessageBytes`;
      if (this.#limitsUnknownSaid) this.#context.logger.debug(fields, text);
      else this.#context.logger.warn(fields, text);
      this.#limitsUnknownSaid = true;
    };
    try {
      await untilAborted(admin.connect(), signal);
      return await untilAborted(readSizeLimits(admin, config.topic, unknown), signal);
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      throw classifyConnectionError(error, `reading the size limits of kafka topic '${config.topic}'`);
    } finally {
      await disconnectFully(admin);
    }
  }

  #record(message: Message): ProducerRecord {
    const config = this.#config;
    let kafkaMessage;
    try {
      kafkaMessage = messageToRecord(message, {
        key: config.key,
        ...(config.partition !== undefined ? { partition: config.partition } : {}),
        ...(this.#context.evaluateXPath !== undefined ? { evaluateXPath: this.#context.evaluateXPath } : {}),
      });
    } catch (error) {
      // Mapping depends only on the message: sending it again cannot help.
      throw new PoisonMessageError(
        `message ${message.getJMSMessageID() ?? '(no id)'} cannot become a kafka record: ${(error as Error).message}`,
        { cause: error },
      );
    }
    // Marks what this sink committed, for forwardedIds().
    if (this.#transactionalId !== undefined)
      kafkaMessage.headers = { ...kafkaMessage.headers, [FORWARDED_BY_HEADER]: this.#transactionalId };
    return {
      topic: config.topic,
      acks: config.acks,
      timeout: config.ackTimeout,
      compression: config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      messages: [kafkaMessage],
    };
  }

  #sendInTransaction(producer: Producer, record: ProducerRecord): Promise<void> {
    const run = this.#transactions.then(async () => {
      const transaction = await producer.transaction();
      try {
        await transaction.send(record);
        await transaction.commit();
      } catch (error) {
        await transaction.abort().catch(() => undefined);
        throw error;
      }
    });
    this.#transactions = run.catch(() => undefined);
    return run;
  }

  /** The producer is unusable (connection lost, fenced): the next `connect` builds a new one. */
  #drop(producer: Producer): void {
    if (this.#producer !== producer) return;
    this.#producer = undefined;
    void disconnectFully(producer);
  }
}

/**
 * Registers the transactional id with the broker now rather than at the first send: kafkajs does
 * it lazily, at its first transaction. Registering fences a producer of the same id that is gone
 * (a killed gateway) and completes or aborts the transaction it left, retried until the broker
 * has done so; only then does the tail of the topic show everything that producer committed,
 * which is what an exactly-once bridge reads back after connect (`forwardedIds`). An empty
 * transaction sends nothing: kafkajs ends one without partitions without asking the broker.
 */
async function fenceEarlierProducer(producer: Producer): Promise<void> {
  const transaction = await producer.transaction();
  await transaction.abort();
}
