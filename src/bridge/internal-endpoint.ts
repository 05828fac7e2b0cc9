/**
 * Endpoints over the engine's own queues and topics (BRG-1), built on the public JMS API like any
 * embedding program: a source is a consumer (optionally a durable subscriber) in a
 * CLIENT_ACKNOWLEDGE or transacted session, a sink is a persistent producer.
 *
 * A bridge settles deliveries out of order (ordering units proceed in parallel), but a JMS
 * session acknowledges in receive order: CLIENT acknowledge with policy "previous" covers a
 * message and everything received before it, and commit covers everything. So the source keeps
 * a ledger of deliveries in receive order and acknowledges the longest settled prefix (client
 * mode) or commits once every delivery of the transaction is settled (transacted mode). A
 * `retry` outcome puts messages back with `recover()` / `rollback()` once nothing is open; the
 * messages that come back although the bridge had already settled them are acknowledged silently
 * instead of being delivered twice.
 *
 * A JMS receive counts a delivery the moment it returns a message, so the source keeps no receive
 * open that the bridge is not waiting on: when the bridge stops asking (pause, stop), the source
 * stops the connection's delivery. Messages then stay on the destination, uncounted, where an
 * operator can reach them, and messages put back meanwhile (a stop's give-back) are not taken
 * again by a receive nobody reads (SES-4, DLV-2).
 */
import { ConnectionFactory } from '../jms/client/connection-factory.js';
import type { Connection } from '../jms/client/connection.js';
import type { MessageConsumer } from '../jms/client/consumer.js';
import type { MessageProducer } from '../jms/client/producer.js';
import { Session } from '../jms/client/session.js';
import { type Destination, Queue, Topic, parseDestination } from '../jms/destination/destination.js';
import type { JmsEngine } from '../jms/engine.js';
import {
  IllegalStateError,
  InvalidArgumentError,
  InvalidDestinationError,
  InvalidSelectorError,
  ResourceAllocationError,
} from '../jms/errors.js';
import { DeliveryMode, type Message } from '../jms/message/message.js';
import type { StagedId } from './duplicate-window.js';
import type { Delivery, Outcome, SendResult, Sink, Source } from '../spi/connector.js';
import { BackOffError, EndpointConfigurationError, NotConnectedError } from '../spi/errors.js';
import { untilAborted } from '../spi/abort.js';

/** Where an internal source reads from. */
export interface InternalSourceConfig {
  readonly engine: JmsEngine;
  /** A queue or topic, as a handle or as `queue://name` / `topic://name`. */
  readonly destination: Queue | Topic | string;
  /**
   * Applied by the engine (BRG-3): on a queue, non-matching messages stay for other consumers;
   * on a topic, the subscription never takes them. Default: none.
   */
  readonly selector?: string;
  /** Read a topic through this durable subscription (DST-3), which keeps messages while the bridge is stopped. */
  readonly durable?: { readonly clientId: string; readonly name: string };
  /** `client` (default): CLIENT_ACKNOWLEDGE, policy previous. `transacted`: a transacted session. */
  readonly session?: 'client' | 'transacted';
  /**
   * Transacted only: deliveries per transaction. Reading pauses while a transaction is full and
   * commits once all of them are settled. Default 10.
   */
  readonly transactionSize?: number;
}

/** Where an internal sink writes to. */
export interface InternalSinkConfig {
  readonly engine: JmsEngine;
  readonly destination: Queue | Topic | string;
  /** Ms a send waits for room in a full destination before the bridge backs off (DLV-7). Default: the factory's 10,000. */
  readonly sendTimeoutMs?: number;
  /** JMSXAppID of what it sends (MSG-2), the bridge's name, say. Default: none (a value the message carries stays). */
  readonly applicationId?: string;
}

interface LedgerRecord {
  readonly message: Message;
  readonly generation: number;
  state: 'open' | 'done' | 'retry';
}

/** A source over an engine queue or topic. */
export class InternalSource implements Source {
  readonly #config: InternalSourceConfig;
  readonly #destination: Queue | Topic;
  readonly #transacted: boolean;
  readonly #transactionSize: number;
  #connection: Connection | undefined;
  #session: Session | undefined;
  #consumer: MessageConsumer | undefined;
  /** Session generation: bumped on close, recover and rollback, so stale settles are recognised. */
  #generation = 0;
  /** Deliveries in receive order, not yet acknowledged or committed. */
  #ledger: LedgerRecord[] = [];
  /**
   * Records of the ledger settled `retry`: counted, since reading asks at every message whether
   * one waits (a scan of a ledger of `maxInFlight` records per message read was quadratic).
   */
  #retries = 0;
  /** A message the consumer returned that receive() has not handed to the caller yet. */
  #parked: LedgerRecord | undefined;
  #pulling: Promise<void> | undefined;
  /** Whether the connection delivers: only while a receive() waits for a message. */
  #delivering = false;
  /** Ids the bridge settled that were put back anyway: acknowledged silently when they return. */
  readonly #alreadyDone = new Set<string>();
  #resolving: Promise<void> = Promise.resolve();
  #changed: (() => void)[] = [];

  constructor(config: InternalSourceConfig) {
    this.#config = config;
    this.#destination = toDestination(config.destination);
    this.#transacted = config.session === 'transacted';
    this.#transactionSize = config.transactionSize ?? 10;
    if (!Number.isInteger(this.#transactionSize) || this.#transactionSize < 1)
      throw new InvalidArgumentError(
        `transactionSize ${String(config.transactionSize)} is not valid (expected an integer >= 1)`,
      );
    if (config.durable && this.#destination.kind !== 'topic')
      throw new InvalidArgumentError(
        `a durable subscription needs a topic, not '${this.#destination.toString()}'`,
      );
  }

  /** The destination read, for logs. */
  get destination(): Destination {
    return this.#destination;
  }

  connect(_signal: AbortSignal): Promise<void> {
    if (this.#connection) return Promise.resolve();
    try {
      const factory = new ConnectionFactory(this.#config.engine, { acknowledgePolicy: 'previous' });
      const connection = factory.createConnection();
      try {
        if (this.#config.durable) connection.setClientID(this.#config.durable.clientId);
        const session = connection.createSession(this.#transacted, Session.CLIENT_ACKNOWLEDGE);
        const selector = this.#config.selector ?? null;
        this.#consumer = this.#config.durable
          ? session.createDurableSubscriber(this.#destination as Topic, this.#config.durable.name, selector)
          : session.createConsumer(this.#destination, selector);
        this.#session = session;
        this.#connection = connection;
      } catch (error) {
        void connection.close();
        throw error;
      }
      return Promise.resolve();
    } catch (error) {
      this.#consumer = undefined;
      this.#session = undefined;
      return Promise.reject(connectError(error, this.#destination));
    }
  }

  /**
   * The next delivery. When `signal` aborts, delivery stops until the next call; a message the
   * engine handed over just before the abort is still returned (then the call resolves although
   * aborted), so nothing is held back from the caller.
   */
  async receive(signal: AbortSignal): Promise<Delivery> {
    for (;;) {
      const consumer = this.#consumer;
      if (!consumer)
        throw new NotConnectedError(`internal source '${this.#destination.toString()}' is not connected`);
      const parked = this.#parked;
      if (parked) {
        this.#parked = undefined;
        return this.#delivery(parked);
      }
      try {
        if (this.#holding()) await untilAborted(this.#nextChange(), signal);
        else await untilAborted(this.#pull(consumer), signal);
      } catch (error) {
        if (!signal.aborted) throw error;
        const received = await this.#stopDelivering();
        if (received) return this.#delivery(received);
        throw error;
      }
    }
  }

  /**
   * Up to `max` deliveries: waits for the first as {@link receive} does, then takes what the
   * destination has ready without waiting (nothing while a put-back or a full transaction holds
   * reading).
   */
  async receiveBatch(max: number, signal: AbortSignal): Promise<readonly Delivery[]> {
    const deliveries = [await this.receive(signal)];
    while (deliveries.length < max && !this.#holding()) {
      const consumer = this.#consumer;
      if (!consumer || this.#pulling || this.#parked) break;
      const message = await consumer.receiveNoWait();
      // Closed meanwhile: close() gave the message back.
      if (!message || this.#consumer !== consumer) break;
      const record = await this.#record(message);
      if (record) deliveries.push(this.#delivery(record));
    }
    return deliveries;
  }

  /**
   * The caller stopped waiting: no more deliveries until the next receive(). A message the
   * engine handed over just before is returned to the caller rather than kept (it is counted
   * already, and held here it would be out of everyone's reach).
   */
  async #stopDelivering(): Promise<LedgerRecord | undefined> {
    const connection = this.#connection;
    if (connection && this.#delivering) {
      this.#delivering = false;
      await connection.stop();
    }
    const parked = this.#parked;
    this.#parked = undefined;
    return parked;
  }

  /** Closes the session: what is not acknowledged or committed goes back to the destination (SES-1). */
  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#session = undefined;
    this.#consumer = undefined;
    this.#parked = undefined;
    this.#pulling = undefined;
    this.#delivering = false;
    this.#generation++;
    // Settled by the bridge but not yet acknowledged (behind an open one): they come back, silently.
    for (const record of this.#ledger) if (record.state === 'done') this.#rememberDone(record.message);
    this.#ledger = [];
    this.#retries = 0;
    this.#notify();
    await connection?.close();
  }

  /**
   * Messages in the queue (available and pending: unacknowledged, delayed, scheduled, uncommitted)
   * or in the durable subscription, less those handed to the bridge and not yet acknowledged to
   * the engine. Undefined for a non-durable topic subscription and while not connected.
   */
  backlog(): number | undefined {
    if (!this.#consumer) return undefined;
    const handedOut = this.#ledger.length - (this.#parked ? 1 : 0);
    let held: number | undefined;
    try {
      if (this.#destination.kind === 'queue') {
        const stats = this.#config.engine.destinationStatistics(this.#destination);
        held = stats.messagesCurrent + stats.messagesPending;
      } else if (this.#config.durable) {
        const { clientId, name } = this.#config.durable;
        held = this.#config.engine
          .durableSubscriptions()
          .find((s) => s.clientId === clientId && s.name === name)?.messages;
      }
    } catch {
      return undefined; // the destination was deleted meanwhile
    }
    return held === undefined ? undefined : Math.max(0, held - handedOut);
  }

  #pull(consumer: MessageConsumer): Promise<void> {
    if (!this.#delivering) {
      this.#delivering = true;
      this.#connection?.start();
    }
    if (this.#pulling) return this.#pulling;
    const pulling = consumer.receive(0).then(async (message) => {
      if (this.#pulling === pulling) this.#pulling = undefined;
      // Closed by us meanwhile: close() gave the message back; receive() reports not connected.
      if (this.#consumer !== consumer) return;
      if (message === null) {
        throw new NotConnectedError(
          `the consumer of '${this.#destination.toString()}' was closed (was the destination deleted?)`,
        );
      }
      const record = await this.#record(message);
      if (record) this.#parked = record;
    });
    this.#pulling = pulling;
    return pulling;
  }

  /**
   * Enters a received message in the ledger; undefined when the bridge had settled it and it was
   * put back anyway (see `#alreadyDone`): it is acknowledged in turn, not handed out again.
   */
  async #record(message: Message): Promise<LedgerRecord | undefined> {
    const record: LedgerRecord = { message, generation: this.#generation, state: 'open' };
    this.#ledger.push(record);
    const id = message.getJMSMessageID();
    if (id === null || !this.#alreadyDone.delete(id)) return record;
    record.state = 'done';
    await this.#advance();
    return undefined;
  }

  #delivery(record: LedgerRecord): Delivery {
    return { message: record.message, settle: (outcome) => this.#settle(record, outcome) };
  }

  /** Reading waits while a put-back is pending (so it can happen) or a transaction is full. */
  #holding(): boolean {
    return this.#retries > 0 || (this.#transacted && this.#ledger.length >= this.#transactionSize);
  }

  #settle(record: LedgerRecord, outcome: Outcome): Promise<void> {
    if (record.state !== 'open') return Promise.reject(new IllegalStateError('delivery was already settled'));
    record.state = outcome.kind === 'retry' ? 'retry' : 'done';
    if (record.generation !== this.#generation) {
      // The session it came from is gone and the message is on its way back.
      if (record.state === 'done') this.#rememberDone(record.message);
      return Promise.resolve();
    }
    if (record.state === 'retry') this.#retries++;
    return this.#advance();
  }

  #advance(): Promise<void> {
    const run = this.#resolving.then(() => this.#advanceNow());
    this.#resolving = run.catch(() => {});
    return run;
  }

  async #advanceNow(): Promise<void> {
    const session = this.#session;
    if (!session) return;
    try {
      if (this.#transacted) await this.#completeTransaction(session);
      else await this.#acknowledgePrefix(session);
    } finally {
      this.#notify();
    }
  }

  async #acknowledgePrefix(session: Session): Promise<void> {
    let prefix = 0;
    while (prefix < this.#ledger.length && this.#ledger[prefix]!.state === 'done') prefix++;
    if (prefix > 0) {
      const last = this.#ledger[prefix - 1]!;
      this.#ledger.splice(0, prefix);
      await last.message.acknowledge();
    }
    if (this.#ledger[0]?.state === 'retry' && !this.#hasOpen())
      await this.#putBack(session, () => session.recover());
  }

  async #completeTransaction(session: Session): Promise<void> {
    if (this.#ledger.length === 0 || this.#hasOpen()) return;
    if (this.#retries > 0) {
      await this.#putBack(session, () => session.rollback());
      return;
    }
    this.#ledger = [];
    await session.commit();
  }

  /** recover/rollback: every ledger message goes back; the ones already settled are remembered. */
  async #putBack(session: Session, putBack: () => Promise<void>): Promise<void> {
    const records = this.#ledger;
    this.#ledger = [];
    this.#retries = 0;
    this.#generation++;
    for (const record of records) if (record.state === 'done') this.#rememberDone(record.message);
    // The bridge runtime has waited its own backoff already: what goes back is available at once.
    session.setRedeliveryDelay(0);
    try {
      await putBack();
    } finally {
      session.setRedeliveryDelay(undefined);
    }
  }

  #hasOpen(): boolean {
    return this.#ledger.some((record) => record.state === 'open');
  }

  #rememberDone(message: Message): void {
    const id = message.getJMSMessageID();
    if (id !== null) this.#alreadyDone.add(id);
  }

  #nextChange(): Promise<void> {
    return new Promise<void>((resolve) => this.#changed.push(resolve));
  }

  #notify(): void {
    for (const resolve of this.#changed.splice(0)) resolve();
  }
}

/** A sink into an engine queue or topic: a persistent producer; a send resolves once the engine stored it. */
export class InternalSink implements Sink {
  readonly #config: InternalSinkConfig;
  readonly #destination: Queue | Topic;
  #connection: Connection | undefined;
  #producer: MessageProducer | undefined;

  constructor(config: InternalSinkConfig) {
    this.#config = config;
    this.#destination = toDestination(config.destination);
  }

  /** The destination written, for logs. */
  get destination(): Destination {
    return this.#destination;
  }

  connect(_signal: AbortSignal): Promise<void> {
    if (this.#connection) return Promise.resolve();
    try {
      const options = {
        ...(this.#config.sendTimeoutMs === undefined ? {} : { sendTimeout: this.#config.sendTimeoutMs }),
        ...(this.#config.applicationId === undefined ? {} : { applicationId: this.#config.applicationId }),
      };
      const connection = new ConnectionFactory(this.#config.engine, options).createConnection();
      try {
        const producer = connection.createSession().createProducer(this.#destination);
        producer.setDeliveryMode(DeliveryMode.PERSISTENT);
        this.#producer = producer;
        this.#connection = connection;
      } catch (error) {
        void connection.close();
        throw error;
      }
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(connectError(error, this.#destination));
    }
  }

  /**
   * Sends a copy (the producer stamps the headers it owns, MSG-1) with the message's priority and
   * what is left of its time to live. A full destination blocks here (DLV-7); one that stays full
   * past the send timeout becomes a BackOffError, so the bridge waits and never drops.
   */
  send(message: Message, signal: AbortSignal): Promise<void> {
    return this.#send(message, signal);
  }

  /** The engine written to: a bridge's duplicate window in its store can ride along ({@link sendStaged}). */
  get engine(): JmsEngine {
    return this.#config.engine;
  }

  /**
   * As {@link send}, with a duplicate-window record written in the same store commit as the
   * message (BRG-2): after a crash both are stored or neither. The record learns the real outcome
   * of the commit, even when `signal` ends the wait first.
   */
  sendStaged(message: Message, signal: AbortSignal, staged: StagedId): Promise<void> {
    return this.#send(message, signal, staged);
  }

  /**
   * Sends many messages in one store commit: each send is queued in the same turn, so the
   * engine's group commit writes them together; each settles on its own.
   */
  sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]> {
    return this.sendBatchStaged(batch, signal, []);
  }

  /** As {@link sendBatch}, each message with its duplicate-window record (by index) in the same commit. */
  async sendBatchStaged(
    batch: readonly Message[],
    signal: AbortSignal,
    staged: readonly (StagedId | undefined)[],
  ): Promise<readonly SendResult[]> {
    // One wait on the signal for the whole batch: an abort listener added to and removed from the
    // bridge's signal for each message took about 1.5% of a gateway forwarding into a queue.
    // Ended by the signal, the sends not settled by then fail with its reason; those settled
    // keep their outcome.
    const results: (SendResult | undefined)[] = new Array<SendResult | undefined>(batch.length);
    const sends = batch.map((message, index) =>
      this.#send(message, undefined, staged[index]).then(
        () => void (results[index] = { ok: true }),
        (error: unknown) => void (results[index] = failedWith(error)),
      ),
    );
    try {
      await untilAborted(Promise.all(sends), signal);
    } catch (reason) {
      return Array.from(results, (result) => result ?? failedWith(reason));
    }
    return results as SendResult[];
  }

  /** Sends a copy; `signal` ends the wait for it (none: the caller waits on its own). */
  async #send(message: Message, signal: AbortSignal | undefined, staged?: StagedId): Promise<void> {
    const producer = this.#producer;
    if (!producer) {
      staged?.failed();
      throw new NotConnectedError(`internal sink '${this.#destination.toString()}' is not connected`);
    }
    const expiration = message.getJMSExpiration();
    const timeToLive = expiration > 0 ? Math.max(1, expiration - this.#config.engine.clock.now()) : 0;
    try {
      const sent = producer.send(message.copy(), {
        priority: message.getJMSPriority(),
        timeToLive,
        ...(staged ? { storeWith: [staged.operation] } : {}),
      });
      if (staged)
        void sent.then(
          () => staged.committed(),
          () => staged.failed(),
        );
      await (signal ? untilAborted(sent, signal) : sent);
    } catch (error) {
      if (error instanceof ResourceAllocationError)
        // Full or throttled: the error says which.
        throw new BackOffError(
          `'${this.#destination.toString()}' cannot take it now: ${error.message}`,
          undefined,
          {
            cause: error,
          },
        );
      if (error instanceof IllegalStateError && this.#producer !== producer)
        throw new NotConnectedError(`internal sink '${this.#destination.toString()}' was closed`, {
          cause: error,
        });
      throw error;
    }
  }

  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#producer = undefined;
    await connection?.close();
  }
}

function toDestination(destination: Queue | Topic | string): Queue | Topic {
  if (destination instanceof Queue || destination instanceof Topic) return destination;
  try {
    return parseDestination(destination);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

/** Errors no retry fixes become configuration errors (the bridge fails); the rest are "not connected" (retried). */
function connectError(error: unknown, destination: Destination): Error {
  if (error instanceof InvalidDestinationError || error instanceof InvalidSelectorError)
    return new EndpointConfigurationError(`'${destination.toString()}': ${error.message}`, { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new NotConnectedError(`cannot open '${destination.toString()}': ${message}`, { cause: error });
}

function failedWith(error: unknown): SendResult {
  return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
}
