/**
 * The Log expiration policy (DLV-4): what is written when a message expires. The listed fields
 * name headers and properties; `%header%` stands for every header, `%properties%` for every
 * property. The JMSMessageID is always logged; bodies never are.
 */
import type { EngineLogger } from '../logger.js';
import type { Message } from '../message/message.js';

const HEADERS: Record<string, (message: Message) => unknown> = {
  JMSMessageID: (m) => m.getJMSMessageID(),
  JMSCorrelationID: (m) => m.getJMSCorrelationID(),
  JMSType: (m) => m.getJMSType(),
  JMSPriority: (m) => m.getJMSPriority(),
  JMSTimestamp: (m) => m.getJMSTimestamp(),
  JMSExpiration: (m) => m.getJMSExpiration(),
  JMSDeliveryMode: (m) => (m.getJMSDeliveryMode() === 2 ? 'PERSISTENT' : 'NON_PERSISTENT'),
  JMSDeliveryTime: (m) => m.getJMSDeliveryTime(),
  JMSRedelivered: (m) => m.getJMSRedelivered(),
  JMSReplyTo: (m) => m.getJMSReplyTo()?.toString() ?? null,
  JMSDestination: (m) => m.getJMSDestination()?.toString() ?? null,
};

export class ExpiryPolicies {
  constructor(private readonly logger: EngineLogger) {}

  /** The fields the Log policy writes for a message. */
  static fields(message: Message, fields: readonly string[] = []): Record<string, unknown> {
    const out: Record<string, unknown> = { JMSMessageID: message.getJMSMessageID() };
    for (const field of fields) {
      if (field === '%header%') {
        for (const [name, read] of Object.entries(HEADERS)) out[name] = read(message);
      } else if (field === '%properties%') {
        for (const name of message.getPropertyNames()) out[name] = printable(message.getObjectProperty(name));
      } else if (HEADERS[field]) {
        out[field] = HEADERS[field](message);
      } else {
        out[field] = printable(message.getObjectProperty(field));
      }
    }
    return out;
  }

  /** Writes the Log policy's line at info. */
  log(destination: string, message: Message, fields?: readonly string[]): void {
    this.logger.info({ destination, ...ExpiryPolicies.fields(message, fields) }, 'message expired');
  }
}

function printable(value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
