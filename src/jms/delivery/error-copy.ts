/**
 * The copy of an undeliverable message that goes to an error destination (DLV-3, DLV-9), in one
 * place for the engine's own error destinations, the bridges' and the admin replay: headers,
 * properties and body as they were, plus where it came from, why, after how many deliveries and
 * when, under the same property names, so a replay to the origin works the same for all.
 */
import type { Message } from '../message/message.js';

/**
 * Where the message came from: the destination it was taken from (`queue://orders`, or the topic
 * of a subscription), which a replay can send it back to; `bridge://<name>` when a bridge read it
 * from an external broker, which a replay cannot reach.
 */
export const ERROR_ORIGIN = 'JMS_ErrorOrigin';
/** The name of the bridge that gave the message up; absent when the engine did. */
export const ERROR_BRIDGE = 'JMS_ErrorBridge';
/** Why it was given up: the redelivery limit reached, `expired`, or the poison error. */
export const ERROR_REASON = 'JMS_ErrorReason';
/** Deliveries attempted before it was given up (JMSXDeliveryCount as it stood). */
export const ERROR_DELIVERY_COUNT = 'JMS_ErrorDeliveryCount';
/** When it was given up, ms since the epoch. */
export const ERROR_TIME = 'JMS_ErrorTime';

/** Every property an error-destination copy carries: what a replay removes again. */
export const ERROR_PROPERTIES: readonly string[] = [
  ERROR_ORIGIN,
  ERROR_REASON,
  ERROR_DELIVERY_COUNT,
  ERROR_BRIDGE,
  ERROR_TIME,
];

/** How the origin of a message a bridge read from an external broker starts. */
const EXTERNAL_ORIGIN_SCHEME = 'bridge://';

/** The origin recorded for a message from a bridge whose source is outside the gateway. */
export function externalOrigin(bridge: string): string {
  return `${EXTERNAL_ORIGIN_SCHEME}${bridge}`;
}

/** What an error-destination copy records of its failure. */
export interface ErrorCopyDetails {
  /** `queue://name` / `topic://name` of the destination it came from, else {@link externalOrigin}. */
  readonly origin: string;
  readonly reason: string;
  readonly deliveryCount: number;
  /** The time it was given up, ms since the epoch. */
  readonly now: number;
  /** The bridge that gave it up; absent when the engine did. */
  readonly bridge?: string;
}

/** A copy of `message` carrying the error-destination properties of `details`. */
export function errorDestinationCopy(message: Message, details: ErrorCopyDetails): Message {
  const moved = message.copy();
  moved.setProviderProperty(ERROR_ORIGIN, { type: 'string', value: details.origin });
  if (details.bridge !== undefined)
    moved.setProviderProperty(ERROR_BRIDGE, { type: 'string', value: details.bridge });
  moved.setProviderProperty(ERROR_REASON, { type: 'string', value: details.reason });
  moved.setProviderProperty(ERROR_DELIVERY_COUNT, { type: 'int', value: details.deliveryCount });
  moved.setProviderProperty(ERROR_TIME, { type: 'long', value: BigInt(details.now) });
  return moved;
}
