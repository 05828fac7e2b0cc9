/**
 * The copy of an undeliverable message that goes to a bridge's error destination (DLV-3, DLV-9):
 * headers, properties and body as the source gave them, plus where it came from and why, under
 * the same property names the engine's own error destinations use.
 */
import type { Message } from '../jms/message/message.js';

/** `bridge://<name>`: the bridge the message came through. */
export const ERROR_ORIGIN = 'JMS_ErrorOrigin';
/** Why it was given up: the retry limit and the last error, or the poison error. */
export const ERROR_REASON = 'JMS_ErrorReason';
/** Deliveries to the target the bridge attempted (JMSXDeliveryCount as the runtime kept it). */
export const ERROR_DELIVERY_COUNT = 'JMS_ErrorDeliveryCount';
/** When it was given up, ms since the epoch. */
export const ERROR_TIME = 'JMS_ErrorTime';

export function errorDestinationCopy(
  message: Message,
  bridge: string,
  reason: string,
  deliveryCount: number,
  now: number,
): Message {
  const moved = message.copy();
  moved.setProviderProperty(ERROR_ORIGIN, { type: 'string', value: `bridge://${bridge}` });
  moved.setProviderProperty(ERROR_REASON, { type: 'string', value: reason });
  moved.setProviderProperty(ERROR_DELIVERY_COUNT, { type: 'int', value: deliveryCount });
  moved.setProviderProperty(ERROR_TIME, { type: 'long', value: BigInt(now) });
  moved.deliveryCount = deliveryCount;
  return moved;
}
