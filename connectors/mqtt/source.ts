/**
 * Subscribes to an MQTT topic filter and holds the broker acknowledgement until the runtime has
 * settled the message (BRG-2 at-least-once):
 *
 * - QoS 1: the PUBACK is sent from mqtt.js's `handleMessage(packet, callback)` hook, which calls
 *   back only when the delivery is settled.
 * - QoS 2, MQTT 5: PUBREC is held the same way through the `customHandleAcks` option (mqtt.js
 *   offers it for MQTT 5 only), so the broker still owns the message until settlement; PUBREL and
 *   PUBCOMP then follow at once.
 * - QoS 2, MQTT 3.1.1: mqtt.js answers PUBREC itself on receipt and hands the message over at
 *   PUBREL; PUBCOMP is held until settlement. Between PUBREC and PUBCOMP the message is kept in
 *   this source's memory store (surviving reconnects, not a gateway crash): prefer QoS 1 or
 *   MQTT 5 when that matters.
 * - QoS 0 has no acknowledgement: the broker has forgotten the message once sent, so a message
 *   is at most once, whatever the bridge's quality of service.
 *
 * mqtt.js reads incoming packets one at a time, and a held callback holds the next packet back:
 * this source hands out one message at a time, and the next after the current one is settled
 * (ORD: order per topic is kept), so `receiveBatch` mostly hands over one message (more only when
 * retried ones wait in line). For parallelism use several sources on a shared subscription
 * (`shareGroup`). While a message waits, the client reads no PINGRESP either: settling must take
 * less than 1.5 x keepalive, or the client times out and the broker delivers the message again.
 *
 * Outcomes: `ack` → acknowledge; `reject` → acknowledge too (the runtime parked the message; MQTT
 * has no negative acknowledgement); `retry` → not acknowledged, and handed out again by the next
 * `receive` with JMSRedelivered set. MQTT has no way to ask the broker for a redelivery: it
 * resends unacknowledged messages only when a persistent session reconnects (MQTT 5 4.4), which
 * is also what happens if the gateway stops before the retry succeeds. The runtime waits its
 * backoff before settling with `retry`.
 *
 * Losing the connection fails `receive` with NotConnectedError; settling a delivery of a lost
 * connection rejects with NotConnectedError (with a persistent session the broker sends it again
 * after `connect`). `close` disconnects without acknowledging unsettled messages.
 */
import { Store, type DoneCallback, type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt';
import {
  ConfigValidationError,
  EndpointConfigurationError,
  NotConnectedError,
  type ConnectorContext,
  type Delivery,
  type Outcome,
  type Source,
  untilAborted,
  WaitingQueue,
} from '../../src/spi/index.js';
import { brokerAddress, classify, closeClient, openClient, reasonCode } from './connection.js';
import { fromMqtt311, fromMqtt5, type MqttDecoded } from './mapping.js';
import type { MqttConfig } from './spec.js';

interface Session {
  readonly client: MqttClient;
  readonly deliveries: WaitingQueue<Delivery>;
  /** Packet ids of the messages handed out and not yet acknowledged. */
  readonly outstanding: Set<number>;
  /** Resolves when the first message is held (see `connect`). */
  readonly firstHeld: Promise<void>;
  readonly resolveFirstHeld: () => void;
  lost: boolean;
}

/**
 * An in-memory store that outlives the clients using it: mqtt.js closes (empties) its incoming
 * store when a client ends, but a QoS 2 message between PUBREC and PUBREL must survive the
 * reconnect, when the broker sends the PUBREL to the next client.
 */
class LastingStore extends Store {
  override close(callback: DoneCallback): void {
    callback();
  }
}

function newSession(client: MqttClient): Session {
  let resolveFirstHeld = (): void => {};
  const firstHeld = new Promise<void>((resolve) => (resolveFirstHeld = resolve));
  return {
    client,
    deliveries: new WaitingQueue<Delivery>(),
    outstanding: new Set(),
    firstHeld,
    resolveFirstHeld,
    lost: false,
  };
}

/** An MQTT 3.1.1 / 5 source: see the module comment for acknowledgements and outcomes. */
export class MqttSource implements Source {
  readonly #config: MqttConfig;
  readonly #context: ConnectorContext;
  readonly #filter: string;
  /** Kept across reconnects: QoS 2 messages between PUBREC and PUBCOMP (MQTT 3.1.1) live here. */
  readonly #incomingStore = new LastingStore();
  /**
   * Packet ids of messages handed out but unsettled when their connection was lost. An MQTT 3.1.1
   * QoS 2 message comes back from the store at the broker's resent PUBREL without the DUP flag;
   * this marks it redelivered.
   */
  readonly #unsettledIds = new Set<number>();
  #session: Session | undefined;

  constructor(config: MqttConfig, context: ConnectorContext) {
    if (config.topic === '')
      throw new ConfigValidationError('topic', 'is required: the topic filter to subscribe to');
    this.#config = config;
    this.#context = context;
    this.#filter =
      config.shareGroup === undefined ? config.topic : `$share/${config.shareGroup}/${config.topic}`;
  }

  get #log(): Record<string, unknown> {
    return { bridge: this.#context.name, topic: this.#filter };
  }

  async connect(signal: AbortSignal): Promise<void> {
    await this.close();
    const v5 = this.#config.protocolVersion === 5;
    let session: Session | undefined;
    const options: IClientOptions = {
      clientId: this.#config.clientId ?? `jms-gateway-${this.#context.name}-source`,
      clean: this.#config.clean,
      incomingStore: this.#incomingStore,
      ...(v5 && {
        properties: { sessionExpiryInterval: this.#config.clean ? 0 : this.#config.sessionExpiryInterval },
        customHandleAcks: (
          _topic: string,
          _payload: Buffer,
          packet: IPublishPacket,
          done: (code: number) => void,
        ) => {
          // QoS 1: PUBACK waits in handleMessage. QoS 2: hold PUBREC until the delivery is settled.
          if (packet.qos === 2 && session) this.#hold(session, packet, () => done(0));
          else done(0);
        },
      }),
    };
    const client = await openClient(
      this.#config,
      this.#context,
      options,
      (created) => {
        const current = newSession(created);
        session = current;
        created.handleMessage = (packet, callback) => {
          // MQTT 5 QoS 2 was handed out (and settled) at PUBLISH; this is its PUBREL: complete it.
          if (v5 && packet.qos === 2) callback();
          else this.#hold(current, packet, () => callback());
        };
        created.on('error', (error) =>
          this.#context.logger.warn({ ...this.#log, error: error.message }, 'mqtt client error'),
        );
        created.on('close', () => this.#lose(current, `the connection to the MQTT broker was lost`));
      },
      signal,
    );
    const current = session!;
    // A resumed session's queued messages may come before the SUBACK (the broker may even send
    // new ones first), and a held message holds the SUBACK back: a held message proves the
    // subscription works as well. A refusal that comes later fails the session.
    const subscribed = client.subscribeAsync(this.#filter, { qos: this.#config.qos }).then((granted) => {
      const refused = granted.find((grant) => grant.qos >= 0x80);
      if (refused !== undefined)
        throw Object.assign(new Error('subscription refused'), { code: refused.qos });
    });
    subscribed.catch((error: unknown) => {
      if (this.#session === current) this.#lose(current, this.#subscribeFailure(error));
    });
    try {
      await untilAborted(Promise.race([subscribed, current.firstHeld]), signal);
    } catch (error) {
      current.lost = true;
      client.end(true);
      throw signal.aborted ? error : this.#subscribeFailure(error);
    }
    this.#session = session;
    this.#context.logger.info(this.#log, 'mqtt source connected');
  }

  #subscribeFailure(error: unknown): Error {
    return reasonCode(error) === 0x80
      ? new EndpointConfigurationError(
          `the MQTT broker at ${brokerAddress(this.#config.url)} refused the subscription to '${this.#filter}' (not authorized, or an invalid filter)`,
          { cause: error },
        )
      : classify(error, `cannot subscribe to '${this.#filter}'`);
  }

  receive(signal: AbortSignal): Promise<Delivery> {
    const session = this.#session;
    if (session === undefined)
      return Promise.reject(new NotConnectedError('the mqtt source is not connected'));
    return session.deliveries.take(signal);
  }

  /** Up to `max` deliveries: waits for the first, then takes what is already buffered. */
  receiveBatch(max: number, signal: AbortSignal): Promise<readonly Delivery[]> {
    const session = this.#session;
    if (session === undefined)
      return Promise.reject(new NotConnectedError('the mqtt source is not connected'));
    return session.deliveries.takeUpTo(max, signal);
  }

  /**
   * The messages received and not handed out yet. mqtt.js reads the next packet only once the
   * last is settled, so while the runtime waits for more this is 0 and it acknowledges at once
   * rather than waiting for its acknowledgement batch to fill.
   */
  backlog(): number | undefined {
    return this.#session?.deliveries.size;
  }

  async close(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    this.#lose(session, 'the mqtt source was closed');
    await closeClient(session.client);
  }

  #lose(session: Session, reason: string | Error): void {
    if (session.lost) return;
    session.lost = true;
    const error = typeof reason === 'string' ? new NotConnectedError(reason) : reason;
    for (const id of session.outstanding) this.#unsettledIds.add(id);
    session.deliveries.fail(error);
    if (this.#session === session) {
      this.#context.logger.warn({ ...this.#log, error: error.message }, 'mqtt source lost its connection');
      session.client.end(true);
    }
  }

  #decode(packet: IPublishPacket, redelivered: boolean): MqttDecoded {
    const incoming = {
      payload: packet.payload,
      qos: packet.qos,
      dup: packet.dup || redelivered,
      properties: packet.properties,
    };
    return this.#config.protocolVersion === 5
      ? fromMqtt5(incoming, Date.now(), this.#config.plainBodyType)
      : fromMqtt311(incoming, this.#config.mqtt311Format, this.#config.plainBodyType);
  }

  /** Hands a message out; `acknowledge` (sending PUBACK, PUBREC or PUBCOMP) runs once it is acked or rejected. */
  #hold(session: Session, packet: IPublishPacket, acknowledge: () => void, redelivered = false): void {
    if (session.lost) return;
    session.resolveFirstHeld();
    const id = packet.messageId;
    if (id !== undefined) {
      if (this.#unsettledIds.delete(id)) redelivered = true;
      session.outstanding.add(id);
    }
    const { message, warnings } = this.#decode(packet, redelivered);
    if (warnings.length > 0) {
      this.#context.logger.warn(
        { ...this.#log, messageId: message.getJMSMessageID(), warnings },
        'mqtt message read with approximations',
      );
    }
    let settled = false;
    const settle = (outcome: Outcome): Promise<void> => {
      if (settled)
        return Promise.reject(
          new Error(`delivery of message '${message.getJMSMessageID()}' was already settled`),
        );
      settled = true;
      if (session.lost) {
        return Promise.reject(
          new NotConnectedError(
            'the connection this message came on is closed; with a persistent session the broker delivers it again',
          ),
        );
      }
      if (outcome.kind === 'retry') {
        // Still unacknowledged at the broker: hand the same message out again, first in line.
        this.#hold(session, packet, acknowledge, true);
      } else {
        if (id !== undefined) session.outstanding.delete(id);
        acknowledge();
      }
      return Promise.resolve();
    };
    const delivery: Delivery = { message, orderingKey: packet.topic, settle };
    if (redelivered) session.deliveries.pushFront(delivery);
    else session.deliveries.push(delivery);
  }
}
