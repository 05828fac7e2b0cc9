/** Which ordering unit a delivery belongs to (ORD-3, ORD-4). */
import type { Message } from '../jms/message/message.js';
import type { Delivery } from '../spi/connector.js';
import type { OrderingMode } from './bridge-config.js';

/** Returned for a delivery that belongs to no unit: it is ordered against nothing. */
export const UNORDERED = null;

/**
 * The ordering unit's key, or {@link UNORDERED}. `bridge`: one unit. `key`: the source's
 * `orderingKey` (a Kafka partition, an MQTT topic) wins, else the value of `property`
 * (JMSXGroupID by default); a message with neither is unordered.
 */
export function orderingUnitOf(
  mode: OrderingMode,
  property: string,
  delivery: Delivery,
  message: Message,
): string | typeof UNORDERED {
  switch (mode) {
    case 'none':
      return UNORDERED;
    case 'bridge':
      return 'bridge';
    case 'key': {
      if (delivery.orderingKey !== undefined) return `source:${delivery.orderingKey}`;
      const value = message.getTypedProperty(property);
      return value === undefined ? UNORDERED : `property:${String(value.value)}`;
    }
  }
}
