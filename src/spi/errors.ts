/**
 * Typed errors connectors use to tell the runtime what happened, instead of flags. A message
 * that must never be retried is a `PoisonMessageError` (from the engine), checked in one place:
 * `isPoison`.
 */
import { JMSError } from '../jms/errors.js';

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
