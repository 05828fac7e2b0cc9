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
 * Batches (`sendBatch`): the records are cut into produce requests (record-chunks.ts, at most
 * `maxRequestBytes` of records each) and written with ONE request on the wire at a time per
 * producer; batches handed over meanwhile join the next request, as the Java producer's
 * accumulator does. A record over the size limits fails alone (poison) and the rest goes on.
 * Every record gets its partition from the sink (the key's murmur2 hash, as kafkajs and the
 * Java client compute it; keyless records of one batch stick to one partition, the next batch
 * takes the next), so the ordering rule applies per partition.
 *
 * With `transactionalId` — or on an exactly-once bridge, where it defaults to
 * `jms-gateway-<bridge name>` — each `send`, and each `sendBatch` as a whole, goes in one
 * transaction (batches handed over while one commits share the next), committed before it
 * resolves; read_committed consumers never see a record of a failed send, and a restarted
 * gateway's producer fences the previous one (aborting the transaction it left open). Each record
 * then carries the header `jms.forwardedBy` (the transactional id), so {@link KafkaSink.forwardedIds}
 * can read back which messages the topic holds from this sink: the bridge rebuilds its duplicate
 * window from it, and a message whose send committed just before a crash is recognised when the
 * source delivers it again. The Kafka source's offsets are not part of that transaction (the
 * message passes through the runtime in between, and the source may be another broker), so
 * exactly-once rests on the runtime's duplicate detection by JMSMessageID, with the target as
 * the record of what was sent (see docs/bridges.md, "Where exactly-once ends").
 */
import type { Message as KafkaMessage, PartitionMetadata, Producer, ProducerRecord } from 'kafkajs';
import {
  EndpointConfigurationError,
  NotConnectedError,
  OrderedBatches,
  PoisonMessageError,
  isPoison,
  untilAborted,
} from '../../src/spi/index.js';
import type { ConnectorContext, Message, SendResult, Sink } from '../../src/spi/index.js';
import type { ForwardedIdSeen, ForwardedIdsQuery } from '../../src/spi/index.js';
import { createAdmin, createProducer, defaultClientId, disconnectFully } from './client.js';
import { ensureTopic } from './create-topic.js';
import { classifyConnectionError, classifySendError } from './errors.js';
import { readForwardedIds } from './forwarded-ids.js';
import { CompressionTypes, Partitioners } from './kafkajs.js';
import { FORWARDED_BY_HEADER, messageToRecord } from './mapping.js';
import { type RecordChunk, chunkRecords } from './record-chunks.js';
import {
  type KafkaSizeLimits,
  type RequestEnvelope,
  checkRecordSize,
  readSizeLimits,
} from './size-limits.js';
import type { KafkaConfig } from './spec.js';

/**
 * Batches the sink takes at once (see {@link Sink.maxBatchesInFlight}): as many as an idempotent
 * producer's in-flight requests, so the runtime keeps a batch ready behind the one on the wire.
 */
const BATCHES_IN_FLIGHT = 5;

/** A record ready to send, or why its message cannot be one. */
type Prepared =
  | { readonly record: KafkaMessage; readonly id: string | null; readonly error?: undefined }
  | { readonly error: Error; readonly record?: undefined; readonly id?: undefined };

/** A record waiting in the queue for its produce request (at-least-once). */
interface Queued {
  readonly record: KafkaMessage;
  readonly id: string | null;
  readonly signal: AbortSignal;
  readonly done: (result: SendResult) => void;
}

/** One producer and what belongs to it; a new connect makes a new one. */
interface Session {
  readonly producer: Producer;
  /** Applies the batch ordering rule to this producer's batches. */
  readonly ordered: OrderedBatches;
  /** The topic's partition count read at connect; undefined when it could not be read. */
  readonly partitions: number | undefined;
  /** Those partitions as kafkajs's partitioner reads them, made once rather than for each record. */
  readonly partitionMetadata: readonly PartitionMetadata[];
  /** Records handed over and not yet in a request, in order (at-least-once). */
  readonly queue: Queued[];
  /** A produce request is on the wire. */
  sending: boolean;
  /** Batches waiting for the next transaction, in the order they were handed over. */
  readonly toCommit: Array<{
    readonly prepared: readonly Prepared[];
    readonly done: (results: SendResult[]) => void;
  }>;
  /** Transactions of one producer run one at a time (kafkajs allows one open transaction). */
  transactions: Promise<void>;
  /** A transaction is open or being committed. */
  committing: boolean;
  /** Why the producer was given up; set once. */
  lost: Error | undefined;
  /** The partition the next batch's keyless records go to. */
  nextKeyless: number;
}

/** A Kafka sink; see the module comment for what `send` and `sendBatch` guarantee. */
export class KafkaSink implements Sink {
  readonly #config: KafkaConfig;
  readonly #context: ConnectorContext;
  #session: Session | undefined;
  /** Set when the producer is transactional (configured, or defaulted for exactly-once). */
  readonly #transactionalId: string | undefined;
  /** What a record may weigh, checked before each send; empty when no limit is known. */
  #limits: KafkaSizeLimits = {};
  /** A limit could not be read: said once at warn, then at debug on every reconnect. */
  #limitsUnknownSaid = false;
  readonly #envelope: RequestEnvelope;
  /**
   * JMSMessageIDs of messages that were in a request the broker refused as too large without
   * saying which record: each is sent in a request of its own next time, which finds the culprit.
   */
  readonly #suspects = new Set<string>();
  readonly #partitioner = Partitioners.DefaultPartitioner();

  readonly maxBatchesInFlight = BATCHES_IN_FLIGHT;

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
    if (this.#session !== undefined) return;
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
      // The sink gives every record its partition; kafkajs's default partitioner then keeps it.
      createPartitioner: Partitioners.DefaultPartitioner,
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
    let partitions: number | undefined;
    try {
      this.#limits = await this.#sizeLimits(signal);
      partitions = config.partition === undefined ? await this.#partitionCount(signal) : undefined;
    } catch (error) {
      await disconnectFully(producer);
      throw error;
    }
    this.#session = {
      producer,
      ordered: new OrderedBatches(),
      partitions,
      partitionMetadata: partitionsOf(partitions ?? 0),
      queue: [],
      sending: false,
      toCommit: [],
      transactions: Promise.resolve(),
      committing: false,
      lost: undefined,
      nextKeyless: partitions === undefined ? 0 : Math.floor(Math.random() * partitions),
    };
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
    const session = this.#connected();
    const [prepared] = this.#prepare(session, [message]);
    if (prepared!.error !== undefined) throw prepared!.error;
    // An aborted send may still reach Kafka: the runtime treats it as failed and may send it
    // again (at-least-once).
    const [result] = await untilAborted(this.#write(session, [prepared!], signal), signal);
    if (!result!.ok) throw result!.error;
  }

  /**
   * Sends the batch: one transaction for all of it when transactional, else its records join the
   * queue of produce requests. A message that cannot become a record, or is over the size limits,
   * fails alone (poison); the ordering rule is applied per partition by {@link OrderedBatches}.
   */
  async sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]> {
    signal.throwIfAborted();
    const session = this.#connected();
    const turn = session.ordered.begin();
    const prepared = this.#prepare(session, batch);
    const results = await this.#write(session, prepared, signal);
    return turn.finish(results, (index) => {
      const partition = prepared[index]?.record?.partition;
      return partition === undefined ? 'topic' : `partition ${partition}`;
    });
  }

  async close(): Promise<void> {
    const session = this.#session;
    this.#session = undefined;
    if (session === undefined) return;
    this.#lose(session, new NotConnectedError(`kafka sink for '${this.#config.topic}' is closed`));
    await session.transactions.catch(() => undefined);
    await disconnectFully(session.producer);
    this.#context.logger.info({ topic: this.#config.topic }, 'kafka sink closed');
  }

  #connected(): Session {
    const session = this.#session;
    if (session === undefined || session.lost !== undefined)
      throw new NotConnectedError(`kafka sink for '${this.#config.topic}' is not connected`);
    return session;
  }

  /** Each message as a record with its partition, checked against the size limits. */
  #prepare(session: Session, messages: readonly Message[]): Prepared[] {
    const keyless = session.nextKeyless;
    let keylessUsed = false;
    const prepared = messages.map((message): Prepared => {
      const id = message.getJMSMessageID();
      try {
        const record = this.#record(message);
        checkRecordSize(record, id, this.#limits, this.#envelope);
        if (record.partition === undefined && session.partitions !== undefined) {
          if (record.key === null || record.key === undefined) {
            record.partition = keyless;
            keylessUsed = true;
          } else {
            record.partition = this.#partitioner({
              topic: this.#config.topic,
              partitionMetadata: session.partitionMetadata as PartitionMetadata[],
              message: record,
            });
          }
        }
        return { record, id };
      } catch (error) {
        return { error: error as Error };
      }
    });
    if (keylessUsed && session.partitions !== undefined)
      session.nextKeyless = (session.nextKeyless + 1) % session.partitions;
    return prepared;
  }

  /** The results of the prepared records, one per record in order, once all are settled. */
  async #write(session: Session, prepared: readonly Prepared[], signal: AbortSignal): Promise<SendResult[]> {
    if (this.#transactionalId !== undefined) return this.#inTransaction(session, prepared);
    const outcomes = prepared.map((one) =>
      one.error !== undefined
        ? Promise.resolve<SendResult>({ ok: false, error: one.error })
        : new Promise<SendResult>((done) =>
            session.queue.push({ record: one.record, id: one.id, signal, done }),
          ),
    );
    void this.#pump(session);
    return Promise.all(outcomes);
  }

  /**
   * Sends the queue, one produce request at a time. kafkajs 2.2.4 gives an idempotent request its
   * sequence numbers as it writes it and, when it fails, takes them back
   * (`eosManager.updateSequence(..., -n)` in src/producer/sendMessages.js) for whichever request
   * comes next: with two sends under way, the second (waiting on kafkajs's per-broker lock) would
   * take the numbers of a first the broker did write (a timeout), and the broker would drop the
   * second as a duplicate, losing its records. Only kafkajs's own retry of the same records may
   * reuse them. So the sink keeps one request on the wire and gives up the producer after a
   * failure it cannot account for; records handed over meanwhile go in the next request.
   */
  async #pump(session: Session): Promise<void> {
    if (session.sending) return;
    session.sending = true;
    try {
      while (session.queue.length > 0 && session.lost === undefined) {
        const waiting = session.queue.filter((queued) => {
          if (!queued.signal.aborted) return true;
          queued.done({
            ok: false,
            error: new NotConnectedError('the send was aborted before the message was sent'),
          });
          return false;
        });
        session.queue.length = 0;
        if (waiting.length === 0) break;
        const items = waiting.slice(0, this.#chunks(waiting)[0]!.end);
        session.queue.push(...waiting.slice(items.length));
        await this.#produce(session, items);
      }
    } finally {
      session.sending = false;
    }
    this.#failQueue(session);
  }

  /** Sends `items` as one produce request and settles them. */
  async #produce(session: Session, items: readonly Queued[]): Promise<void> {
    try {
      await session.producer.send(this.#request(items.map((item) => item.record)));
      for (const item of items) {
        if (item.id !== null) this.#suspects.delete(item.id);
        item.done({ ok: true });
      }
    } catch (error) {
      const failure = this.#failure(session, items, error);
      if (failure === 'one by one') {
        for (const item of items) {
          if (session.lost === undefined) await this.#produce(session, [item]);
          else item.done({ ok: false, error: session.lost });
        }
        return;
      }
      for (const item of items) item.done({ ok: false, error: failure });
    }
  }

  /**
   * What a failed request of `items` means for them. A broker's poison answer ("too large",
   * invalid record) for several records does not say which: records of one partition are sent
   * again one by one (the broker wrote none of them, so their sequence numbers are free); across
   * partitions the broker may have written some partitions' batches, whose numbers kafkajs took
   * back anyway, so the producer is given up and the records go alone after the reconnect. Poison
   * of a lone record fails it alone; any other failure fails the request and gives up the
   * producer, whose sequence state is unknown.
   */
  #failure(
    session: Session,
    items: ReadonlyArray<{ readonly record: KafkaMessage; readonly id: string | null }>,
    error: unknown,
  ): Error | 'one by one' {
    const reason = classifySendError(error, this.#config.topic);
    if (isPoison(reason) && items.length === 1) return reason;
    if (isPoison(reason)) {
      const partitions = new Set(items.map((item) => item.record.partition));
      if (partitions.size === 1 && !partitions.has(undefined)) return 'one by one';
      for (const item of items) if (item.id !== null) this.#suspects.add(item.id);
      const lost = new NotConnectedError(
        `kafka topic '${this.#config.topic}' refused a request of ${items.length} records without saying which (${reason.message}); they are sent one by one after the reconnect`,
        { cause: error },
      );
      this.#lose(session, lost);
      return lost;
    }
    this.#lose(session, reason);
    return reason;
  }

  /**
   * Sends the prepared records (one `send` or one batch) in a transaction, committed before it
   * resolves. When anything fails the transaction is aborted and every record of it fails (not
   * sent), except poison found before the send, which fails alone.
   *
   * A batch is never split over transactions, but batches handed over while the previous
   * transaction was being committed share the next one, as records share the next produce
   * request at at-least-once: kafkajs allows one open transaction per producer, and each costs
   * three round trips (AddPartitionsToTxn, Produce, EndTxn), which with one transaction per
   * batch held exactly-once to under half the at-least-once rate. They commit or abort together.
   */
  #inTransaction(session: Session, prepared: readonly Prepared[]): Promise<SendResult[]> {
    const results = new Promise<SendResult[]>((done) => session.toCommit.push({ prepared, done }));
    if (!session.committing) {
      session.committing = true;
      session.transactions = this.#commitWaiting(session);
    }
    return results;
  }

  /** Runs transactions while batches wait for one, each taking every batch waiting then. */
  async #commitWaiting(session: Session): Promise<void> {
    try {
      while (session.toCommit.length > 0) {
        const group = session.toCommit.splice(0);
        const all = group.flatMap((batch) => batch.prepared);
        let results: SendResult[];
        try {
          results = await this.#transact(session, all);
        } catch (error) {
          results = all.map(() => ({ ok: false, error: error as Error }));
        }
        let start = 0;
        for (const batch of group) {
          batch.done(results.slice(start, start + batch.prepared.length));
          start += batch.prepared.length;
        }
      }
    } finally {
      session.committing = false;
    }
  }

  /** One transaction of `prepared`, on the session's turn (see `#inTransaction`). */
  async #transact(session: Session, prepared: readonly Prepared[]): Promise<SendResult[]> {
    const results: SendResult[] = prepared.map((one) =>
      one.error !== undefined ? { ok: false, error: one.error } : { ok: true },
    );
    const items = prepared.flatMap((one, index) =>
      one.error === undefined ? [{ record: one.record, id: one.id, index }] : [],
    );
    if (items.length === 0) return results;
    const fail = (error: Error): SendResult[] => {
      for (const item of items) results[item.index] = { ok: false, error };
      return results;
    };
    if (session.lost !== undefined) return fail(session.lost);
    let transaction;
    try {
      transaction = await session.producer.transaction();
      for (const chunk of this.#chunks(items))
        await transaction.send(this.#request(items.slice(chunk.start, chunk.end).map((item) => item.record)));
      await transaction.commit();
      for (const item of items) if (item.id !== null) this.#suspects.delete(item.id);
      return results;
    } catch (error) {
      await transaction?.abort().catch(() => undefined);
      const failure = this.#failure(session, items, error);
      if (failure !== 'one by one') return fail(failure);
    }
    // The broker refused the batch as too large without saying which record: each alone, in its
    // own transaction, finds it and commits the others, still on this batch's turn so no later
    // batch comes in between.
    for (const item of items) {
      const [result] = await this.#transact(session, [prepared[item.index]!]);
      results[item.index] = result!;
    }
    return results;
  }

  /** The produce requests for `records`; a suspect record goes in a request of its own. */
  #chunks(
    items: ReadonlyArray<{ readonly record: KafkaMessage; readonly id: string | null }>,
  ): RecordChunk[] {
    const records = items.map((item) => item.record);
    const limits = {
      maxRequestBytes: this.#config.maxRequestBytes,
      sizeLimits: this.#limits,
      envelope: this.#envelope,
    };
    const chunks: RecordChunk[] = [];
    let start = 0;
    const flush = (end: number): void => {
      if (end <= start) return;
      for (const chunk of chunkRecords(
        records.slice(start, end),
        limits,
        (i) => records[start + i]!.partition,
      ))
        chunks.push({ start: start + chunk.start, end: start + chunk.end });
    };
    items.forEach(({ id }, index) => {
      if (id === null || !this.#suspects.has(id)) return;
      flush(index);
      chunks.push({ start: index, end: index + 1 });
      start = index + 1;
    });
    flush(records.length);
    return chunks;
  }

  #request(messages: KafkaMessage[]): ProducerRecord {
    const config = this.#config;
    return {
      topic: config.topic,
      acks: config.acks,
      timeout: config.ackTimeout,
      compression: config.compression === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None,
      messages,
    };
  }

  /** Gives up the session's producer: queued records fail, the next send needs a new `connect`. */
  #lose(session: Session, reason: Error): void {
    if (session.lost !== undefined) return;
    session.lost =
      reason instanceof NotConnectedError
        ? reason
        : new NotConnectedError(
            `kafka sink for '${this.#config.topic}' gave up its producer after a failed send: ${reason.message}`,
            { cause: reason },
          );
    this.#failQueue(session);
    if (this.#session === session) {
      this.#session = undefined;
      void disconnectFully(session.producer);
    }
  }

  #failQueue(session: Session): void {
    if (session.lost === undefined) return;
    for (const queued of session.queue.splice(0)) queued.done({ ok: false, error: session.lost });
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

  /**
   * The topic's partition count, so the sink can tell each record's partition (the ordering
   * rule's stream). Unknown (the topic does not exist yet, no permission): kafkajs partitions,
   * and the whole topic counts as one stream.
   */
  async #partitionCount(signal: AbortSignal): Promise<number | undefined> {
    const admin = createAdmin(this.#config, this.#context);
    try {
      await untilAborted(admin.connect(), signal);
      const { topics } = await untilAborted(
        admin.fetchTopicMetadata({ topics: [this.#config.topic] }),
        signal,
      );
      const count = topics[0]?.partitions.length;
      return count !== undefined && count > 0 ? count : undefined;
    } catch (error) {
      if (signal.aborted) throw signal.reason;
      this.#context.logger.debug(
        { topic: this.#config.topic, err: error instanceof Error ? error.message : String(error) },
        'kafka sink could not read the partitions of its topic: the topic is one stream for ordering',
      );
      return undefined;
    } finally {
      await disconnectFully(admin);
    }
  }

  #record(message: Message): KafkaMessage {
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
    return kafkaMessage;
  }
}

/** Partition metadata as kafkajs's partitioner reads it: `count` partitions, all with a leader. */
function partitionsOf(count: number): PartitionMetadata[] {
  return Array.from({ length: count }, (_, partitionId) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 0,
    replicas: [0],
    isr: [0],
    offlineReplicas: [],
  }));
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
