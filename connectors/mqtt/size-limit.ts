/**
 * How large a PUBLISH the MQTT sink may send. An MQTT 5 broker states its Maximum Packet Size in
 * CONNACK and disconnects a client that sends a larger packet (reason 0x95, packet too large);
 * MQTT 3.1.1 allows at most 268,435,455 bytes of remaining length. The sink computes the packet
 * exactly as mqtt.js encodes it and refuses a larger one before sending, as poison (DLV-9).
 */
import { MessageTooLargeError } from '../../src/spi/index.js';
import type { Mqtt5Properties } from './mapping.js';

/** The most a remaining length can say (four bytes of variable byte integer). */
export const MAX_REMAINING_LENGTH = 268_435_455;

/** The sizes of one PUBLISH packet. */
export interface PublishSize {
  /** The whole packet: fixed header, remaining length, and what it counts. */
  readonly packet: number;
  /** What the remaining length field says. */
  readonly remaining: number;
}

/** The limit a PUBLISH is checked against, which of its sizes it bounds, and where it comes from. */
export interface PacketLimit {
  readonly bytes: number;
  readonly counts: keyof PublishSize;
  readonly source: string;
}

/**
 * The limit: `configured` (the endpoint's `maxMessageBytes`, on the whole packet) when set, else
 * the broker's Maximum Packet Size from an MQTT 5 CONNACK, else the protocol's remaining length.
 */
export function packetLimit(configured: number | undefined, brokerMaximum: number | undefined): PacketLimit {
  if (configured !== undefined)
    return { bytes: configured, counts: 'packet', source: "the mqtt sink's maxMessageBytes" };
  if (brokerMaximum !== undefined && brokerMaximum > 0)
    return {
      bytes: brokerMaximum,
      counts: 'packet',
      source: 'the mqtt broker (the maximum packet size in its CONNACK)',
    };
  return { bytes: MAX_REMAINING_LENGTH, counts: 'remaining', source: 'mqtt (the largest remaining length)' };
}

/** The sizes of a PUBLISH of `payloadBytes` to `topic`; `properties` for MQTT 5, undefined for 3.1.1. */
export function publishSize(
  topic: string,
  payloadBytes: number,
  qos: number,
  properties: Mqtt5Properties | undefined,
  protocolVersion: 4 | 5,
): PublishSize {
  let remaining = 2 + Buffer.byteLength(topic) + payloadBytes + (qos > 0 ? 2 : 0);
  if (protocolVersion === 5) {
    const length = propertiesBytes(properties ?? {});
    remaining += variableByteIntegerBytes(length) + length;
  }
  return { packet: 1 + variableByteIntegerBytes(remaining) + remaining, remaining };
}

/** Throws {@link MessageTooLargeError} when `size` is over `limit`. */
export function checkPublishSize(size: PublishSize, messageId: string | null, limit: PacketLimit): void {
  const bytes = size[limit.counts];
  if (bytes > limit.bytes) throw new MessageTooLargeError(messageId, bytes, limit.bytes, limit.source);
}

/** Bytes of the MQTT 5 properties the mapping sets (identifier byte, then the value). */
function propertiesBytes(properties: Mqtt5Properties): number {
  let bytes = 0;
  if (properties.payloadFormatIndicator !== undefined) bytes += 1 + 1;
  if (properties.messageExpiryInterval !== undefined) bytes += 1 + 4;
  if (properties.contentType !== undefined) bytes += 1 + 2 + Buffer.byteLength(properties.contentType);
  if (properties.responseTopic !== undefined) bytes += 1 + 2 + Buffer.byteLength(properties.responseTopic);
  if (properties.correlationData !== undefined) bytes += 1 + 2 + properties.correlationData.length;
  for (const [name, value] of Object.entries(properties.userProperties ?? {}))
    for (const one of Array.isArray(value) ? value : [value])
      bytes += 1 + 2 + Buffer.byteLength(name) + 2 + Buffer.byteLength(one);
  return bytes;
}

function variableByteIntegerBytes(value: number): number {
  if (value < 128) return 1;
  if (value < 16_384) return 2;
  if (value < 2_097_152) return 3;
  return 4;
}
