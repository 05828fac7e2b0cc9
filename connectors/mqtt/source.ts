/**
 * Subscribes to an MQTT topic filter and holds the broker acknowledgement until the runtime has
 * settled the message (BRG-2 at-least-once):
 *
 * - QoS 1: a window of up to `receiveMaximum` messages received and not acknowledged. mqtt.js
 *   reads one packet at a time and would send the PUBACK when its `handleMessage(packet,
 *   callback)` hook calls back; the source calls back at once with an error, which makes mqtt.js
 *   read on without sending it (see `PUBACK_LATER`), and sends each PUBACK itself, through the
 *   method mqtt.js uses, once the message is settled and every earlier one has been acknowledged:
 *   PUBACKs go in the order the PUBLISHes came (MQTT 3.1.1 and 5, 4.6). A full window calls back
 *   only when a message leaves it, so mqtt.js reads nothing more meanwhile. With MQTT 5 the window
 *   is also the Receive Maximum sent in CONNECT, so the broker sends no more unacknowledged; an
 *   MQTT 3.1.1 broker keeps its own limit (Mosquitto's `max_inflight_messages`, default 20).
 * - QoS 2, MQTT 5: PUBREC is held through the `customHandleAcks` option (mqtt.js offers it for
 *   MQTT 5 only), so the broker still owns the message until settlement; PUBREL and PUBCOMP then
 *   follow at once. A held PUBREC holds the next packet back: QoS 2 goes one message at a time.
 * - QoS 2, MQTT 3.1.1: mqtt.js answers PUBREC itself on receipt and hands the message over at
 *   PUBREL; PUBCOMP is held until settlement, and the next packet with it. Between PUBREC and
 *   PUBCOMP the message is kept in this source's memory store (surviving reconnects, not a gateway
 *   crash): prefer QoS 1 or MQTT 5 when that matters.
 * - QoS 0 has no acknowledgement: the broker has forgotten the message once sent, so a message
 *   is at most once, whatever the bridge's quality of service. It takes room in the window until
 *   it is settled, which bounds what the source buffers.
 *
 * Messages are handed out in the order they came (ORD: the ordering key is the topic), and
 * `receiveBatch` hands over what the window holds. While the window is full (or a QoS 2 message
 * is held) the client reads no PINGRESP either: settling must then take less than 1.5 x
 * keepalive, or the client times out and the broker delivers the unacknowledged messages again.
 *
 * Outcomes: `ack` → acknowledge; `reject` → acknowledge too (the runtime parked the message; MQTT
 * has no negative acknowledgement); `retry` → not acknowledged (nor any later message: it keeps
 * its place in the window), and handed out again by the next `receive`, before the messages
 * waiting, with JMSRedelivered set. MQTT has no way to ask the broker for a redelivery: it
 * resends unacknowledged messages only when a persistent session reconnects (MQTT 5 4.4), which
 * is also what happens if the gateway stops before the retry succeeds. The runtime waits its
 * backoff before settling with `retry`.
 *
 * Losing the connection fails `receive` with NotConnectedError; settling a delivery of a lost
 * connection rejects with NotConnectedError, and no PUBACK goes for a message settled but still
 * waiting for an earlier one: with a persistent session the broker sends all of them again after
 * `connect`. `close` disconnects without acknowledging unsettled messages.
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

/** A QoS 0 or 1 message in the window: received, handed out, not yet acknowledged to the broker. */
interface Windowed {
  readonly packet: IPublishPacket;
  /** Acked or rejected by the runtime: its PUBACK goes once every earlier one has gone. */
  settled: boolean;
}

interface Session {
  readonly client: MqttClient;
  readonly deliveries: WaitingQueue<Delivery>;
  /** Packet ids of the messages handed out and not yet acknowledged. */
  readonly outstanding: Set<number>;
  /** QoS 0 and 1 messages received and not acknowledged, in the order received (a Set keeps it). */
  readonly window: Set<Windowed>;
  /** mqtt.js's callback for the message that filled the window: reading resumes when it is called. */
  resume: (() => void) | undefined;
  /** Resolves when the first message is held (see `connect`). */
  readonly firstHeld: Promise<void>;
  readonly resolveFirstHeld: () => void;
  lost: boolean;
}

/**
 * Passed to mqtt.js's `handleMessage` callback for a QoS 1 message: mqtt.js then reads the next
 * packet without sending the PUBACK (publish.js: `if (err) return done(err)`, and the packet loop
 * ignores the error), so the source sends it itself once the message is settled.
 */
const PUBACK_LATER = new Error('the PUBACK is sent once the message is settled');

/** The method mqtt.js sends its own PUBACK with (private, so checked for at connect). */
interface PacketWriter {
  _sendPacket(packet: { cmd: 'puback'; messageId: number; reasonCode: number }): void;
}

function packetWriter(client: MqttClient): PacketWriter {
  const writer = client as unknown as Partial<PacketWriter>;
  if (typeof writer._sendPacket !== 'function')
    throw new Error('this mqtt.js version has no _sendPacket: the source cannot send its own PUBACKs');
  return writer as PacketWriter;
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
    window: new Set(),
    resume: undefined,
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
        properties: {
          sessionExpiryInterval: this.#config.clean ? 0 : this.#config.sessionExpiryInterval,
          // The broker sends no more unacknowledged QoS 1/2 messages than the window holds.
          receiveMaximum: this.#config.receiveMaximum,
        },
        customHandleAcks: (
          _topic: string,
          _payload: Buffer,
          packet: IPublishPacket,
          done: (code: number) => void,
        ) => {
          // QoS 1: windowed in handleMessage. QoS 2: hold PUBREC until the delivery is settled.
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
        packetWriter(created);
        created.handleMessage = (packet, callback) => {
          // MQTT 5 QoS 2 was handed out (and settled) at PUBLISH; this is its PUBREL: complete it.
          if (v5 && packet.qos === 2) callback();
          // MQTT 3.1.1 QoS 2 (at PUBREL): PUBCOMP waits for the settlement, and so does reading.
          else if (packet.qos === 2) this.#hold(current, packet, () => callback());
          else this.#admit(current, packet, () => callback(packet.qos === 1 ? PUBACK_LATER : undefined));
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
    // new ones first), and a full window (or a held QoS 2 message) holds the SUBACK back: a
    // received message proves the subscription works as well. A refusal that comes later fails the session.
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
   * The messages received and not handed out yet (retried ones waiting to go again included); not
   * those still at the broker or in the socket. While it is 0 the runtime acknowledges at once
   * rather than waiting for its acknowledgement batch to fill: a full window reads nothing more
   * until messages are settled.
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

  /**
   * Takes a QoS 0 or 1 message into the window and hands it out. `next` lets mqtt.js read on (and,
   * QoS 1, not send the PUBACK): at once while the window has room, else when a message leaves it.
   */
  #admit(session: Session, packet: IPublishPacket, next: () => void): void {
    if (session.lost) return;
    const entry: Windowed = { packet, settled: false };
    session.window.add(entry);
    this.#hold(session, packet, () => {
      entry.settled = true;
      // QoS 0 has nothing to acknowledge and nothing to keep in order.
      if (packet.qos === 0) session.window.delete(entry);
      this.#acknowledgeInOrder(session);
    });
    if (session.window.size < this.#config.receiveMaximum) next();
    else session.resume = next;
  }

  /**
   * Sends the PUBACKs of the settled messages at the head of the window, in the order their
   * PUBLISHes came (MQTT 3.1.1 and 5, 4.6): a settled message waits for every earlier one. Then
   * reading resumes if it waited for room.
   */
  #acknowledgeInOrder(session: Session): void {
    // A connection going down: the broker resends what is unacknowledged to the next one.
    if (session.lost || !session.client.connected) return;
    for (const entry of session.window) {
      if (!entry.settled) break;
      session.window.delete(entry);
      const id = entry.packet.messageId;
      if (entry.packet.qos === 1 && id !== undefined)
        packetWriter(session.client)._sendPacket({ cmd: 'puback', messageId: id, reasonCode: 0 });
    }
    const resume = session.resume;
    if (resume !== undefined && session.window.size < this.#config.receiveMaximum) {
      session.resume = undefined;
      resume();
    }
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
