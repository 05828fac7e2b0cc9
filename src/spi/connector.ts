/**
 * What a connector implements. A connector only moves messages to and from one kind of broker and
 * maps broker metadata to JMS headers and properties; the bridge runtime owns redelivery counts,
 * backoff, limits, ordering, selectors and error destinations.
 */
import type { Clock } from '../jms/clock.js';
import type { EngineLogger } from '../jms/logger.js';
import type { Message } from '../jms/message/message.js';
import type { ConfigSchema } from './config-schema.js';
import type { XPathEvaluator } from './xpath-evaluator.js';

/** How the runtime settles one delivery from a source. Exactly one settle per delivery. */
export type Outcome =
  /** Done: the source may forget it (broker ack, offset commit). */
  | { kind: 'ack' }
  /**
   * Not done: the source must deliver it again (broker nack/requeue, or keep the offset). When it
   * comes again is the runtime's business: it waits its own backoff before settling with a retry.
   */
  | { kind: 'retry' }
  /** Never deliverable: the source drops it (it has been parked in an error destination). */
  | { kind: 'reject'; reason: Error };

/** One message read from a source, waiting to be settled. */
export interface Delivery {
  readonly message: Message;
  /**
   * The ordering unit it belongs to when the source has one (a Kafka partition, an MQTT topic):
   * the runtime keeps order within a unit and lets units proceed in parallel.
   */
  readonly orderingKey?: string;
  /** Settles the delivery; called once. Resolves when the broker has been told. */
  settle(outcome: Outcome): Promise<void>;
}

/** Reads messages from a broker. */
export interface Source {
  /** Connects; rejects with {@link NotConnectedError} (retried with backoff) or a configuration error. */
  connect(signal: AbortSignal): Promise<void>;
  /** The next delivery; waits until one arrives. Rejects with NotConnectedError when the connection drops. */
  receive(signal: AbortSignal): Promise<Delivery>;
  /**
   * Optional: up to `max` deliveries at once, in the order `receive` would have handed them out.
   * Waits as `receive` does until at least one is there, then takes what is already buffered
   * without waiting for more (the runtime's linger decides how long a batch waits). Absent, the
   * runtime calls `receive`.
   */
  receiveBatch?(max: number, signal: AbortSignal): Promise<readonly Delivery[]>;
  /** Stops reading; unsettled deliveries are returned to the broker (redelivered later). */
  close(): Promise<void>;
  /**
   * Optional: messages waiting at the source that `receive` has not handed out yet (read-ahead
   * buffers included), when the source knows without a broker round trip; undefined when it does
   * not. The runtime adds its deliveries not yet settled to make the bridge's `lag`.
   */
  backlog?(): number | undefined;
}

/** Writes messages to a broker. */
export interface Sink {
  connect(signal: AbortSignal): Promise<void>;
  /**
   * Sends one message and resolves once the broker confirmed it (publisher confirm, PUBACK,
   * acks=all). Rejects with NotConnectedError, BackOffError, or PoisonMessageError for a message
   * the broker will never take. A sink that knows the broker's size limit checks the encoded
   * message against it before sending and rejects a larger one with MessageTooLargeError
   * (poison); a connection lost during the send is a NotConnectedError, and the runtime decides
   * whether that attempt counts toward the message's retry limit.
   */
  send(message: Message, signal: AbortSignal): Promise<void>;
  /**
   * Optional: sends many messages in one go (one Kafka request, pipelined AMQP publishes under
   * confirms, a window of MQTT QoS 1/2 packets) and settles each one on its own. Resolves one
   * result per message, in the batch's order, once every message is confirmed or has failed; a
   * failure carries the error `send` would have rejected with, so one poison message fails
   * alone and the rest of its batch goes through. Rejects only when nothing of the batch was
   * tried (every message then failed with that error).
   *
   * Order: the batch is in the order the runtime wants the messages written. When a message
   * fails with anything but a poison error, the sink reports every later message of the batch
   * (and of batches handed over after it, see {@link maxBatchesInFlight}) that goes to the same
   * target stream (a Kafka partition, an AMQP channel, an MQTT connection) as failed too unless
   * it was written before the failed one could have been, so a retry can never land behind a
   * later message. Absent, the runtime calls `send` once per message.
   */
  sendBatch?(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]>;
  /**
   * Optional, with `sendBatch`: how many batches the sink takes at once while keeping the order
   * they were handed over in (the idempotent Kafka producer's in-flight requests, confirms
   * outstanding on one channel). Default 1: the next batch is handed over once the last settled.
   */
  readonly maxBatchesInFlight?: number;
  close(): Promise<void>;
  /**
   * Optional, for exactly-once (BRG-2): the JMSMessageIDs of the messages this sink's earlier
   * sends committed at the target, with when they were sent, as far back as `query` says. The
   * runtime asks after every connect and adds them to its duplicate window, so a message the
   * source delivers again after a crash or a lost confirm is recognised without a second send.
   * Resolves undefined when this sink cannot tell (a target without transactions); rejects with
   * NotConnectedError when the target could not be read (the runtime reconnects).
   */
  forwardedIds?(
    query: ForwardedIdsQuery,
    signal: AbortSignal,
  ): Promise<readonly ForwardedIdSeen[] | undefined>;
}

/** How one message of a {@link Sink.sendBatch} ended: confirmed by the target, or failed with what `send` would have thrown. */
export type SendResult = { readonly ok: true } | { readonly ok: false; readonly error: Error };

/** How far back {@link Sink.forwardedIds} reads: the duplicate window's bounds. */
export interface ForwardedIdsQuery {
  /** The most ids the window keeps: a sink reads at most this many of its messages (per partition). */
  readonly maxEntries: number;
  /** Messages sent before this time (ms since the epoch) are outside the window. Default: no bound. */
  readonly notBefore?: number;
}

/** A message a sink's target holds: its JMSMessageID, and when it was sent (ms since the epoch). */
export interface ForwardedIdSeen {
  readonly id: string;
  readonly at: number;
}

/** What the runtime gives a connector. */
export interface ConnectorContext {
  /** The bridge's name, for logs and client ids. */
  readonly name: string;
  /**
   * The bridge's quality of service, when the runtime tells: a sink that can make exactly-once
   * hold at its target (a transactional Kafka producer) does so when it is `exactly-once`.
   */
  readonly qos?: 'at-most-once' | 'at-least-once' | 'exactly-once';
  readonly logger: EngineLogger;
  /**
   * The gateway's clock, for a connector's own delays (retry pauses, waits): tests pass a fake
   * one. Absent, a connector uses the system clock.
   */
  readonly clock?: Clock;
  /**
   * XPath on a message's XML body, for a connector that keys or routes by the body (the Kafka
   * sink's `key.from: xpath`), with the semantics of the selectors' `JMS_BEA_SELECT`. The gateway
   * always gives it; a connector that needs it and finds none refuses to connect.
   */
  readonly evaluateXPath?: XPathEvaluator;
}

/** One thing a connection check found wrong with an endpoint. */
export interface EndpointProblem {
  /** The endpoint field it is about (`queue`, `topic`, `url`), relative to the endpoint. */
  readonly field: string;
  /** Lower-case, identifiers in quotes, never a credential: `queue 'orders' does not exist`. */
  readonly message: string;
}

/** What a connection check found: problems (the check fails) and notes (what it could not check). */
export interface EndpointCheck {
  readonly problems: readonly EndpointProblem[];
  readonly notes: readonly string[];
}

/** What a connector's `check` gets. */
export interface CheckContext extends ConnectorContext {
  /** How the endpoint is used: read from (`source`) or written to (`sink`: a target or error destination). */
  readonly role: 'source' | 'sink';
  /** Aborted when the check's time is up: a check must give up then, not hang. */
  readonly signal: AbortSignal;
}

/** A connector type, as registered in `connectors/index.ts`. */
export interface ConnectorDefinition<C = unknown> {
  /** The YAML `type:`, unique. */
  readonly type: string;
  /** One line, for generated docs. */
  readonly summary: string;
  /** The endpoint's configuration: every field described, defaults declared. */
  readonly config: ConfigSchema<C>;
  createSource?(config: C, context: ConnectorContext): Source;
  createSink?(config: C, context: ConnectorContext): Sink;
  /**
   * Optional, for `jms-gateway check --connect`: connects to the broker and checks that what the
   * endpoint reads or writes exists (or would be declared at connect), changing nothing on the
   * broker. Problems are resolved, not thrown; it closes whatever it opened.
   */
  check?(config: C, context: CheckContext): Promise<EndpointCheck>;
}
