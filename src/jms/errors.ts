/**
 * The gateway's error classes. Their names echo the JMS exceptions integration engineers know, so
 * an error in a log reads the same as it would in a Java client. Messages are lower-case and quote
 * identifiers: `destination 'orders' was deleted`.
 */

/** Base class of every error the engine raises on purpose. */
export class JMSError extends Error {
  /** A stable machine-readable code (the class name unless a subclass says otherwise). */
  readonly errorCode: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.errorCode = new.target.name;
  }
}

/** A method was called when the object's state does not allow it (a closed session, a listener and receive mixed). */
export class IllegalStateError extends JMSError {}

/** A message selector (SQL-92 or XPath) could not be parsed. */
export class InvalidSelectorError extends JMSError {
  /** 1-based column of the selector text where the problem was found. */
  readonly column: number;
  /** The selector text that was rejected. */
  readonly selector: string;

  constructor(message: string, selector: string, column: number, options?: ErrorOptions) {
    super(message, options);
    this.selector = selector;
    this.column = column;
  }
}

/** A destination is unknown, deleted, or not usable this way (another connection's temporary queue). */
export class InvalidDestinationError extends JMSError {}

/** A client id is malformed or already in use by another connection. */
export class InvalidClientIDError extends JMSError {}

/** A quota is exhausted (full destination, blocked send timed out) or a blocked send was cancelled. */
export class ResourceAllocationError extends JMSError {}

/**
 * A connection named a user the engine does not know, or the wrong password (JMS's
 * JMSSecurityException). The message names the user, never the password.
 */
export class JMSSecurityError extends JMSError {}

/** A value cannot be converted as asked (JMS conversion table), or a body or property is malformed. */
export class MessageFormatError extends JMSError {}

/** A received message's properties or body were written before they were cleared. */
export class MessageNotWriteableError extends JMSError {}

/** A read past the end of a stream or bytes message body. */
export class MessageEOFError extends JMSError {}

/** A commit could not complete and the transaction was rolled back instead. */
export class TransactionRolledBackError extends JMSError {}

/** An argument is out of the range the API allows (priority 10, a negative time to live). */
export class InvalidArgumentError extends JMSError {}

/**
 * A message that can never be processed (a poison message). Whoever sees it sends the message to
 * the error destination at once, without using up redeliveries (DLV-9). This is the one "never
 * retry" error, checked in one place: {@link isPoison}.
 */
export class PoisonMessageError extends JMSError {}

/** True when an error says the message must not be retried (DLV-9). */
export function isPoison(error: unknown): boolean {
  return error instanceof PoisonMessageError;
}
