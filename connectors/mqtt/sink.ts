/**
 * Publishes every message to one topic with the configured QoS and retain flag. `send` resolves
 * when the broker acknowledged it: PUBACK for QoS 1, PUBCOMP for QoS 2 (BRG-2 at-least-once);
 * for QoS 0, once it is written to the socket (MQTT has nothing more to wait for).
 *
 * Failures, as the runtime sees them: an MQTT 5 PUBACK/PUBREC reason code of not authorized
 * (0x87) or topic name invalid (0x90) is an EndpointConfigurationError; payload format invalid
 * (0x99) or packet too large (0x95) a PoisonMessageError; quota exceeded (0x97) and other
 * failure codes a BackOffError; a lost connection fails every unacknowledged send with
 * NotConnectedError (the runtime sends them again after reconnecting: duplicates are possible,
 * as at-least-once allows). The sink uses a clean session.
 *
 * Size: a PUBLISH larger than the broker's Maximum Packet Size (MQTT 5 CONNACK) or the protocol
 * allows is refused before sending, as poison (`size-limit.ts`). A broker that disconnects with
 * reason 0x95 (packet too large) while one send is unacknowledged fails that send as poison; with
 * several it cannot tell which, so they fail as a lost connection and the runtime finds the
 * culprit by sending each alone.
 */
import type { IConnackPacket, IDisconnectPacket, MqttClient } from 'mqtt';
import {
  BackOffError,
  ConfigValidationError,
  EndpointConfigurationError,
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
import { closeClient, openClient, reasonCode } from './connection.js';
import { toMqtt311, toMqtt5, type Mqtt5Properties } from './mapping.js';
import { type PacketLimit, checkPublishSize, packetLimit, publishSize } from './size-limit.js';
import type { MqttConfig } from './spec.js';

interface Session {
  readonly client: MqttClient;
  /**
   * Rejecters of sends waiting for their acknowledgement, with their message ids; failed together
   * when the connection drops.
   */
  readonly pending: Map<(error: Error) => void, string | null>;
  /** The largest PUBLISH the broker and the protocol take. */
  limit: PacketLimit;
  /** The reason code of a DISCONNECT the broker sent, if it sent one. */
  disconnectReason?: number | undefined;
  /** QoS 1/2 publishes `sendBatch` keeps unacknowledged at once (see {@link DEFAULT_WINDOW}). */
  window: number;
  /** Outcomes of the publishes `sendBatch` sent and the broker has not answered, oldest first. */
  readonly unacked: Array<Promise<unknown>>;
  /** Resolves when the batch before has been written: batches are written one after the other. */
  writing: Promise<void>;
  /** Applies the batch ordering rule to this connection's batches. */
  readonly ordered: OrderedBatches;
  lost: boolean;
}

/**
 * Publishes `sendBatch` keeps in flight when the broker does not say (MQTT 3.1.1, or an MQTT 5
 * CONNACK without Receive Maximum). Mosquitto's default `max_inflight_messages` is 20, and it
 * drops QoS 2 publishes beyond its window without a word on 3.1.1, so 20 is safe; an MQTT 5
 * broker's Receive Maximum replaces it.
 */
export const DEFAULT_WINDOW = 20;

/**
 * Batches `sendBatch` takes at once: one connection acknowledges QoS 1/2 publishes in the order
 * they were sent (MQTT 4.6), so batches in flight keep their order.
 */
const BATCHES_IN_FLIGHT = 2;

/** A message's PUBLISH payload and MQTT 5 properties. */
interface Encoded {
  readonly payload: Buffer;
  readonly properties: Mqtt5Properties | undefined;
}

/** MQTT 5 DISCONNECT reason: packet too large. */
const PACKET_TOO_LARGE = 0x95;

const CONFIGURATION_CODES = new Set([0x87, 0x90]);
const POISON_CODES = new Set([0x95, 0x99]);

/** An MQTT 3.1.1 / 5 sink: see the module comment for what each failure means. */
export class MqttSink implements Sink {
  readonly #config: MqttConfig;
  readonly #context: ConnectorContext;
  #session: Session | undefined;

  constructor(config: MqttConfig, context: ConnectorContext) {
    if (config.topic === '' || /[+#]/.test(config.topic)) {
      throw new ConfigValidationError(
        'topic',
        "must be a topic name without wildcards ('+', '#') for an mqtt sink",
      );
    }
    this.#config = config;
    this.#context = context;
  }

  async connect(signal: AbortSignal): Promise<void> {
    await this.close();
    let session: Session | undefined;
    const log = { bridge: this.#context.name, topic: this.#config.topic };
    await openClient(
      this.#config,
      this.#context,
      { clientId: this.#config.clientId ?? `jms-gateway-${this.#context.name}-sink`, clean: true },
      (client) => {
        const current: Session = {
          client,
          pending: new Map(),
          limit: packetLimit(this.#config.maxMessageBytes, undefined),
          window: DEFAULT_WINDOW,
          unacked: [],
          writing: Promise.resolve(),
          ordered: new OrderedBatches(),
          lost: false,
        };
        session = current;
        client.once('connect', (connack: IConnackPacket) => {
          current.limit = packetLimit(this.#config.maxMessageBytes, connack.properties?.maximumPacketSize);
          const receiveMaximum = connack.properties?.receiveMaximum;
          if (receiveMaximum !== undefined && receiveMaximum > 0) current.window = receiveMaximum;
        });
        client.on('disconnect', (packet: IDisconnectPacket) => {
          current.disconnectReason = packet.reasonCode;
        });
        client.on('error', (error) =>
          this.#context.logger.warn({ ...log, error: error.message }, 'mqtt client error'),
        );
        client.on('close', () => this.#lose(current));
      },
      signal,
    );
    this.#session = session;
    this.#context.logger.info(log, 'mqtt sink connected');
  }

  async send(message: Message, signal: AbortSignal): Promise<void> {
    const session = this.#session;
    if (session === undefined || session.lost) throw new NotConnectedError('the mqtt sink is not connected');
    if (signal.aborted) throw signal.reason;
    const { payload, properties } = this.#encode(session, message);
    await untilAborted(this.#publish(session, message, payload, properties), signal);
  }

  readonly maxBatchesInFlight = BATCHES_IN_FLIGHT;

  /**
   * Publishes the batch keeping up to the window of publishes unacknowledged (the broker's
   * Receive Maximum, else {@link DEFAULT_WINDOW}); QoS 0 publishes count until written. A message
   * over the size limit fails alone (poison) and is not published; a lost connection fails every
   * unacknowledged and unsent message with NotConnectedError. Batches are written one after the
   * other and settled by the ordering rule ({@link writeBatchInTurn}).
   */
  async sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly SendResult[]> {
    const session = this.#session;
    if (session === undefined || session.lost) throw new NotConnectedError('the mqtt sink is not connected');
    if (signal.aborted) throw signal.reason;
    return writeBatchInTurn(session, batch, async (message) => {
      // The window spans batches: the oldest unanswered publish of any batch frees a place.
      while (session.unacked.length >= session.window) await session.unacked.shift();
      if (session.lost || signal.aborted) {
        const error = new NotConnectedError(
          signal.aborted
            ? 'the send was aborted before the message was published'
            : `the connection to the MQTT broker was lost before message '${message.getJMSMessageID()}' was published`,
        );
        return { result: { ok: false, error } };
      }
      let encoded: Encoded;
      try {
        encoded = this.#encode(session, message);
      } catch (error) {
        return { result: { ok: false, error: error as Error } };
      }
      const outcome = this.#publish(session, message, encoded.payload, encoded.properties).then(
        (): SendResult => ({ ok: true }),
        (error: unknown): SendResult => ({ ok: false, error: error as Error }),
      );
      session.unacked.push(outcome);
      void outcome.then(() => {
        const index = session.unacked.indexOf(outcome);
        if (index >= 0) void session.unacked.splice(index, 1);
      });
      return { result: outcome };
    });
  }

  /** The message's MQTT form, checked against the size limit (throws MessageTooLargeError). */
  #encode(session: Session, message: Message): Encoded {
    let payload: Buffer;
    let properties: Mqtt5Properties | undefined;
    if (this.#config.protocolVersion === 5) {
      ({ payload, properties } = toMqtt5(message, { ttl: this.#config.ttl, now: Date.now() }));
    } else {
      payload = toMqtt311(message, this.#config.mqtt311Format);
    }
    const size = publishSize(
      this.#config.topic,
      payload.length,
      this.#config.qos,
      properties,
      this.#config.protocolVersion,
    );
    checkPublishSize(size, message.getJMSMessageID(), session.limit);
    return { payload, properties };
  }

  #publish(
    session: Session,
    message: Message,
    payload: Buffer,
    properties: Mqtt5Properties | undefined,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const fail = (error: Error): void => {
        session.pending.delete(fail);
        reject(error);
      };
      session.pending.set(fail, message.getJMSMessageID());
      session.client.publish(
        this.#config.topic,
        payload,
        { qos: this.#config.qos, retain: this.#config.retain, ...(properties && { properties }) },
        (error) => {
          if (!session.pending.has(fail)) return;
          session.pending.delete(fail);
          if (error) reject(this.#failure(session, message, error));
          else resolve();
        },
      );
    });
  }

  #failure(session: Session, message: Message, error: Error): Error {
    const id = message.getJMSMessageID();
    const code = reasonCode(error);
    if (code !== undefined && CONFIGURATION_CODES.has(code))
      return new EndpointConfigurationError(
        `the broker refused topic '${this.#config.topic}': ${error.message}`,
        {
          cause: error,
        },
      );
    if (code !== undefined && POISON_CODES.has(code))
      return new PoisonMessageError(`the broker refused message '${id}': ${error.message}`, { cause: error });
    if (code !== undefined && code >= 0x80)
      return new BackOffError(`the broker refused message '${id}' for now: ${error.message}`, undefined, {
        cause: error,
      });
    if (session.lost)
      return new NotConnectedError(`the connection was lost before message '${id}' was acknowledged`);
    return new NotConnectedError(`publishing message '${id}' failed: ${error.message}`, { cause: error });
  }

  #lose(session: Session): void {
    if (session.lost) return;
    session.lost = true;
    const tooLarge = session.disconnectReason === PACKET_TOO_LARGE;
    const error = new NotConnectedError(
      tooLarge
        ? 'the MQTT broker disconnected (reason 0x95, packet too large) before the message was acknowledged'
        : 'the connection to the MQTT broker was lost before the message was acknowledged',
    );
    const pending = [...session.pending];
    const only = pending.length === 1 ? pending[0] : undefined;
    if (tooLarge && only !== undefined) {
      const [fail, id] = only;
      fail(
        new PoisonMessageError(
          `the MQTT broker disconnected (reason 0x95, packet too large) while message '${id}' was being sent`,
        ),
      );
    } else {
      for (const [fail] of pending) fail(error);
    }
    if (this.#session === session) {
      this.#context.logger.warn(
        { bridge: this.#context.name, topic: this.#config.topic },
        'mqtt sink lost its connection',
      );
      session.client.end(true);
    }
  }

  async close(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    await closeClient(session.client);
    this.#lose(session);
  }
}
