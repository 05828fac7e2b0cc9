/**
 * Typed errors connectors use to tell the runtime what happened, instead of flags. A message
 * that must never be retried is a `PoisonMessageError` (from the engine), checked in one place:
 * `isPoison`.
 */
import { JMSError, PoisonMessageError } from '../jms/errors.js';

export { PoisonMessageError, isPoison } from '../jms/errors.js';

/** The broker connection is down or not yet up: the runtime reconnects with backoff. */
export class NotConnectedError extends JMSError {}

/** The broker asked to slow down (flow control, quota): retry the same message after a delay. */
export class BackOffError extends JMSError {
  constructor(
    message: string,
    /** How long the broker asked to wait, if it said. */
    readonly delayMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** An endpoint's configuration is wrong in a way only the broker could tell (no such queue, access refused). */
export class EndpointConfigurationError extends JMSError {}

/**
 * A message larger than the target takes: poison (DLV-9), since sending it again can never help.
 * Sinks raise it before sending when they know the limit, and for the broker's own "too large"
 * answers; the message names both sizes so the error destination's `JMS_ErrorReason` says why.
 */
export class MessageTooLargeError extends PoisonMessageError {
  constructor(
    /** The message's JMSMessageID, or null. */
    readonly messageId: string | null,
    /** Its size as the target counts it, in bytes. */
    readonly size: number,
    /** The most the target takes, in bytes. */
    readonly limit: number,
    /** Where the limit comes from, e.g. `kafka topic 'orders' (max.message.bytes)`. */
    readonly limitSource: string,
    options?: ErrorOptions,
  ) {
    super(
      `message ${messageId === null ? '(no id)' : `'${messageId}'`} is too large: ${size} bytes, over the limit of ${limit} bytes of ${limitSource}`,
      options,
    );
  }
}
