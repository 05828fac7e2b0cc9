/**
 * The copy of an undeliverable message that goes to a bridge's error destination (DLV-3, DLV-9):
 * the engine's error-destination copy ({@link errorDestinationCopy}), naming the bridge, with the
 * delivery count the runtime kept.
 */
import {
  type ErrorCopyDetails,
  errorDestinationCopy as engineErrorCopy,
} from '../jms/delivery/error-copy.js';
import type { Message } from '../jms/message/message.js';

export {
  ERROR_BRIDGE,
  ERROR_DELIVERY_COUNT,
  ERROR_ORIGIN,
  ERROR_PROPERTIES,
  ERROR_REASON,
  ERROR_TIME,
  externalOrigin,
} from '../jms/delivery/error-copy.js';

/** What a bridge's error-destination copy records: always the bridge's name. */
export interface BridgeErrorCopyDetails extends ErrorCopyDetails {
  /** The bridge's name. */
  readonly bridge: string;
}

export function errorDestinationCopy(message: Message, details: BridgeErrorCopyDetails): Message {
  const moved = engineErrorCopy(message, details);
  moved.deliveryCount = details.deliveryCount;
  return moved;
}
