/**
 * The message headers a selector can name (SEL-3) and how each reads. Every other identifier is a
 * property lookup, JMSX properties included.
 */
import { DeliveryMode, type Message } from '../message/message.js';

/** What a header reads as in a selector. */
export interface HeaderField {
  /** The static kind, so the parser can reject `JMSPriority LIKE 'x'` when the selector is created. */
  readonly kind: 'number' | 'string' | 'boolean';
  /** The value as selectors see it; number headers are Java ints and longs. */
  readonly read: (message: Message) => string | number | boolean | null;
}

function numberHeader(read: (message: Message) => number): HeaderField {
  return { kind: 'number', read };
}

function stringHeader(read: (message: Message) => string | null): HeaderField {
  return { kind: 'string', read };
}

/**
 * The selectable headers. JMSDeliveryMode reads as 'PERSISTENT' or 'NON_PERSISTENT' (JMS);
 * JMSRedelivered, JMSExpiration and JMSDeliveryTime are selectable as in WebLogic. JMSDestination
 * and JMSReplyTo are not selectable (JMS does not list them); naming them is a property lookup.
 */
export const HEADER_FIELDS: ReadonlyMap<string, HeaderField> = new Map<string, HeaderField>([
  [
    'JMSDeliveryMode',
    stringHeader((m) =>
      m.getJMSDeliveryMode() === DeliveryMode.PERSISTENT ? 'PERSISTENT' : 'NON_PERSISTENT',
    ),
  ],
  ['JMSPriority', numberHeader((m) => m.getJMSPriority())],
  ['JMSMessageID', stringHeader((m) => m.getJMSMessageID())],
  ['JMSTimestamp', numberHeader((m) => m.getJMSTimestamp())],
  ['JMSCorrelationID', stringHeader((m) => m.getJMSCorrelationID())],
  ['JMSType', stringHeader((m) => m.getJMSType())],
  ['JMSRedelivered', { kind: 'boolean', read: (m) => m.getJMSRedelivered() }],
  ['JMSExpiration', numberHeader((m) => m.getJMSExpiration())],
  ['JMSDeliveryTime', numberHeader((m) => m.getJMSDeliveryTime())],
]);

/** True when `name` is a selectable header rather than a property. */
export function isHeaderName(name: string): boolean {
  return HEADER_FIELDS.has(name);
}
