/**
 * Configuration of an MQTT 3.1.1 or 5 endpoint. A source subscribes to a topic filter
 * (optionally as a shared subscription); a sink publishes to one topic.
 */
import { defineSchema } from '../../src/spi/index.js';
import type { Mqtt311Format, PlainBodyType } from './mapping.js';

/** A validated MQTT endpoint configuration. */
export interface MqttConfig {
  /** Broker URL: `mqtt://user:pass@host:1883`, `mqtts://...`, `ws://...` (secret). */
  readonly url: string;
  /** Source: the topic filter to subscribe to (wildcards allowed). Sink: the topic to publish to. */
  readonly topic: string;
  /** QoS of the subscription (source) or of every publish (sink). */
  readonly qos: 0 | 1 | 2;
  /** 4 = MQTT 3.1.1, 5 = MQTT 5. */
  readonly protocolVersion: 4 | 5;
  /** Client id; defaults to `jms-gateway-<bridge>-source` / `-sink`. */
  readonly clientId?: string;
  /** Start a clean session (true) or resume the persistent one (false). */
  readonly clean: boolean;
  /** MQTT 5: how long the broker keeps the session after a disconnect, in seconds. */
  readonly sessionExpiryInterval: number;
  /** Source: subscribe as a member of this shared subscription group (`$share/<group>/<topic>`). */
  readonly shareGroup?: string;
  /** Sink: publish with the retain flag. */
  readonly retain: boolean;
  /** MQTT 3.1.1: write the JSON envelope (lossless) or the body alone. */
  readonly mqtt311Format: Mqtt311Format;
  /** Source: the body type of a payload that does not say what it is. */
  readonly plainBodyType: PlainBodyType;
  /** Sink, MQTT 5: set `messageExpiryInterval` from JMSExpiration. */
  readonly ttl: boolean;
  /** Source: the most QoS 0/1 messages received and not yet acknowledged (MQTT 5: Receive Maximum). */
  readonly receiveMaximum: number;
  /** Keepalive in seconds. */
  readonly keepalive: number;
  /** How long to wait for the broker's CONNACK, in ms. */
  readonly connectTimeout: number;
  /** Sink: the largest PUBLISH packet sent, in bytes; default: the broker's Maximum Packet Size, else the protocol's. */
  readonly maxMessageBytes?: number;
}

/** The schema of {@link MqttConfig}: every field described, defaults declared. */
export const mqttConfigSchema = defineSchema<MqttConfig>({
  url: {
    type: 'string',
    required: true,
    secret: true,
    pattern: '^(mqtts?|wss?|tcp|ssl)://',
    description:
      'Broker URL, `mqtt://user:pass@host:1883` (or `mqtts://`, `ws://`, `wss://`). Put credentials in an environment variable: `url: ${MQTT_URL}`; it is never logged.',
  },
  topic: {
    type: 'string',
    required: true,
    description:
      'Source: the topic filter to subscribe to; `+` and `#` wildcards allowed. Sink: the topic every message is published to (no wildcards).',
  },
  qos: {
    type: 'integer',
    minimum: 0,
    maximum: 2,
    default: 1,
    description:
      'Source: the subscription QoS (the most the broker delivers with); sink: the QoS of every publish. 0 = at most once (no acknowledgement: nothing to hold back until the bridge settles), 1 = at least once (PUBACK), 2 = exactly once between client and broker (PUBREC/PUBREL/PUBCOMP). Default 1.',
  },
  protocolVersion: {
    type: 'integer',
    minimum: 4,
    maximum: 5,
    default: 5,
    description:
      'MQTT protocol level: 5 (the default) carries headers and typed properties as MQTT 5 properties; 4 is MQTT 3.1.1, which has none (see `mqtt311Format`).',
  },
  clientId: {
    type: 'string',
    description:
      'MQTT client id. A persistent session (`clean: false`) belongs to it, so keep it stable. Default `jms-gateway-<bridge name>-source` or `-sink`; two bridges must not share one.',
  },
  clean: {
    type: 'boolean',
    default: false,
    description:
      'Source: true starts a clean session each time (messages published while the bridge is away, and unacknowledged ones, are lost); false (the default) resumes the persistent session, so the broker keeps QoS 1/2 messages for the bridge and sends unacknowledged ones again after a reconnect. The sink always uses a clean session.',
  },
  sessionExpiryInterval: {
    type: 'integer',
    minimum: 0,
    maximum: 4294967295,
    default: 86_400,
    description:
      'MQTT 5 with `clean: false`: how long, in seconds, the broker keeps the session (its subscription and queued messages) after the bridge disconnects. Default 86400 (a day); 4294967295 means never expire. MQTT 3.1.1 sessions expire as the broker decides.',
  },
  shareGroup: {
    type: 'string',
    pattern: '^[^/+#]+$',
    description:
      'Source: subscribe as a member of this shared subscription (`$share/<group>/<topic>`): the broker spreads messages over the members, so several bridges (or gateways) consume one topic in parallel. Default none.',
  },
  retain: {
    type: 'boolean',
    default: false,
    description:
      'Sink: publish with the retain flag, so the broker keeps the last message for new subscribers. Default false.',
  },
  mqtt311Format: {
    type: 'enum',
    values: ['envelope', 'body'],
    default: 'envelope',
    description:
      "MQTT 3.1.1 only. 'envelope' (the default) sends one JSON document with headers, typed properties, body type and body, so a message comes back identical; 'body' sends the body alone (text as UTF-8, bytes as they are, map and stream as typed JSON) for consumers that expect a plain payload, dropping headers and properties. A source in 'envelope' format reads any payload that is not an envelope as in 'body' format.",
  },
  plainBodyType: {
    type: 'enum',
    values: ['bytes', 'text'],
    default: 'bytes',
    description:
      "Source: the body type of a message whose payload does not say what it is (MQTT 3.1.1 bodies, MQTT 5 messages without content type or UTF-8 payload indicator). Default 'bytes'; 'text' reads the payload as UTF-8 text.",
  },
  ttl: {
    type: 'boolean',
    default: true,
    description:
      'Sink, MQTT 5: set `messageExpiryInterval` (seconds) from JMSExpiration, so the broker drops a message once it expires. The exact JMSExpiration travels as a user property either way. Default true.',
  },
  receiveMaximum: {
    type: 'integer',
    minimum: 1,
    maximum: 65535,
    default: 100,
    description:
      "Source: how many QoS 0 and 1 messages the source holds received and not yet acknowledged, so the bridge can read and batch many while each one's PUBACK waits for its settlement (PUBACKs still go in the order the messages came). With MQTT 5 it is sent as the Receive Maximum, so the broker sends no more unacknowledged QoS 1/2 messages; an MQTT 3.1.1 broker keeps its own limit (Mosquitto: `max_inflight_messages`, default 20). A full window reads nothing more until a message is settled. QoS 2 messages go one at a time. Default 100.",
  },
  keepalive: {
    type: 'integer',
    minimum: 1,
    maximum: 65535,
    default: 60,
    description:
      'Keepalive in seconds. A source whose window is full (`receiveMaximum`), or that holds a QoS 2 message, reads no other packet until a message is settled; that must take less than 1.5 x keepalive or the client times out, reconnects and the broker delivers the unacknowledged messages again. Default 60.',
  },
  connectTimeout: {
    type: 'integer',
    minimum: 1,
    default: 10_000,
    description: "How long to wait for the broker's CONNACK, in ms. Default 10000.",
  },
  maxMessageBytes: {
    type: 'integer',
    minimum: 1,
    description:
      "Sink: the largest PUBLISH packet the sink sends, in bytes (topic, properties and payload included); a larger message is poison and goes to the bridge's error destination with a reason naming both sizes. Default: the Maximum Packet Size the broker states in its MQTT 5 CONNACK, else the protocol's largest remaining length of 268435455 bytes (MQTT 3.1.1, or a broker that states none).",
  },
});
