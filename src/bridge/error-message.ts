/**
 * The copy of an undeliverable message that goes to a bridge's error destination (DLV-3, DLV-9):
 * headers, properties and body as the source gave them, plus where it came from and why, under
 * the same property names the engine's own error destinations use, so replaying to the origin
 * works the same for both.
 */
import type { Message } from '../jms/message/message.js';

/**
 * Where the message came from: the bridge's internal source destination (`queue://orders`, or
 * the topic of a durable subscription), which a replay can send it back to; `bridge://<name>`
 * when the source is an external broker, which a replay cannot reach.
 */
export const ERROR_ORIGIN = 'JMS_ErrorOrigin';
/** The name of the bridge that gave the message up. */
export const ERROR_BRIDGE = 'JMS_ErrorBridge';
/** Why it was given up: the retry limit and the last error, or the poison error. */
export const ERROR_REASON = 'JMS_ErrorReason';
/** Deliveries to the target the bridge attempted (JMSXDeliveryCount as the runtime kept it). */
export const ERROR_DELIVERY_COUNT = 'JMS_ErrorDeliveryCount';
/** When it was given up, ms since the epoch. */
export const ERROR_TIME = 'JMS_ErrorTime';

/** The origin recorded for a message from a bridge whose source is outside the gateway. */
export function externalOrigin(bridge: string): string {
  return `bridge://${bridge}`;
}

export interface ErrorCopyDetails {
  /** The bridge's name. */
  readonly bridge: string;
  /** `queue://name` / `topic://name` for an internal source, else {@link externalOrigin}. */
  readonly origin: string;
  readonly reason: string;
  readonly deliveryCount: number;
  readonly now: number;
}

export function errorDestinationCopy(message: Message, details: ErrorCopyDetails): Message {
  const moved = message.copy();
  moved.setProviderProperty(ERROR_ORIGIN, { type: 'string', value: details.origin });
  moved.setProviderProperty(ERROR_BRIDGE, { type: 'string', value: details.bridge });
  moved.setProviderProperty(ERROR_REASON, { type: 'string', value: details.reason });
  moved.setProviderProperty(ERROR_DELIVERY_COUNT, { type: 'int', value: details.deliveryCount });
  moved.setProviderProperty(ERROR_TIME, { type: 'long', value: BigInt(details.now) });
  moved.deliveryCount = details.deliveryCount;
  return moved;
}
