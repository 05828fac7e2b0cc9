/**
 * Units of order (ORD-4): which property names a message's unit, and how its value is read. One
 * place, so a distributed queue routes a unit to the member whose backlog reads the same unit.
 */
import type { Message } from '../message/message.js';

/** The property that names a unit of order unless a destination names another. */
export const DEFAULT_UNIT_OF_ORDER_PROPERTY = 'JMSXGroupID';

/** The unit-of-order property a destination's `unitOfOrderProperty` setting means: null (off) for ''. */
export function unitOfOrderProperty(setting: string | undefined): string | null {
  if (setting === undefined) return DEFAULT_UNIT_OF_ORDER_PROPERTY;
  return setting === '' ? null : setting;
}

/** A message's unit of order: the property's value as text; null when it has none (or bytes). */
export function unitOfOrderOf(message: Message, property: string): string | null {
  const value = message.getTypedProperty(property)?.value;
  return value === undefined || value instanceof Uint8Array ? null : String(value);
}
