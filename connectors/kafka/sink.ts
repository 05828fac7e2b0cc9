/**
 * Writes messages to a Kafka topic. `send` resolves once the broker acknowledged the record with
 * the configured acks (-1 by default: every in-sync replica has it), which is what at-least-once
 * needs (BRG-2).
 *
 * The producer is idempotent by default: the broker drops duplicates of the client's own retries
 * within one producer session, so they neither duplicate nor reorder records. It does not
 * recognise a message the runtime sends again after a failed `send` (a new record to Kafka).
 *
 * With `transactionalId` each message is sent in its own transaction, committed before `send`
 * resolves; read_committed consumers never see a record of a failed send, and a restarted
 * gateway's producer fences the previous one. The Kafka source's offsets are not part of that
 * transaction (the message passes through the gateway's own destinations in between), so
 * exactly-once from a Kafka source rests on the runtime's duplicate detection by JMSMessageID,
 * not on Kafka transactions alone (see the Kafka mapping docs, `docs/mapping-kafka.md`).
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
import { createProducer, disconnectFully } from './client.js';
import { ensureTopic } from './create-topic.js';
import { classifyConnectionError, classifySendError } from './errors.js';
import { messageToRecord } from './mapping.js';
import type { XPathEvaluator } from './mapping.js';
import type { KafkaConfig } from './spec.js';

/**
 * What the runtime may add to the connector context for a Kafka sink. Connectors cannot import
 * the engine's selector module, so an XPath key (`key.from: xpath`) needs the runtime to pass
 * its evaluator here; without it, such a sink refuses to connect, and a route can instead set a
 * property from the XPath and key by that property (`key.from: property`).
 */
export interface KafkaSinkContext extends ConnectorContext {
  readonly evaluateXPath?: XPathEvaluator;
}

/** A Kafka sink; see the module comment for what `send` guarantees. */
export class KafkaSink implements Sink {
  readonly #config: KafkaConfig;
  readonly #context: KafkaSinkContext;
  #producer: Producer | undefined;
  /** Transactions of one producer run one at a time (kafkajs allows one open transaction). */
  #transactions: Promise<void> = Promise.resolve();

  constructor(config: KafkaConfig, context: KafkaSinkContext) {
    this.#config = config;
    this.#context = context;
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
      maxInFlightRequests: config.maxInFlightRequests,
      allowAutoTopicCreation: config.allowAutoTopicCreation,
      transactionTimeout: config.transactionTimeout,
      retry: { retries: config.retries },
      ...(config.transactionalId !== undefined ? { transactionalId: config.transactionalId } : {}),
    });
    try {
      await untilAborted(producer.connect(), signal);
    } catch (error) {
      await disconnectFully(producer);
      if (signal.aborted) throw signal.reason;
      throw classifyConnectionError(error, `connecting to kafka for topic '${config.topic}'`);
    }
    this.#producer = producer;
    this.#context.logger.info({ topic: config.topic }, 'kafka sink connected');
  }

  async send(message: Message, signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    const producer = this.#producer;
    if (producer === undefined)
      throw new NotConnectedError(`kafka sink for '${this.#config.topic}' is not connected`);
    const record = this.#record(message);
    try {
      // An aborted send may still reach Kafka: the runtime treats it as failed and may send it
      // again (at-least-once).
      const sent =
        this.#config.transactionalId === undefined
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
