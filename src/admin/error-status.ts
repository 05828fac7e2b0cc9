/**
 * The one place that says which HTTP status each error answers with. A request that is wrong is
 * a 4xx; a condition of the server (a full store or quota, a store that cannot write, a commit
 * rolled back by it) is a 503 with the same clear message, so clients retry later instead of
 * "fixing" a request that was right; anything unforeseen is a 500, logged, its details withheld.
 */
import { JMSError } from '../jms/errors.js';
import { StoreError } from '../store/store-error.js';
import { HttpError } from './http-util.js';

/** Status by error class name, for the engine's errors (JMSError subclasses). */
const STATUS_BY_CLASS: Readonly<Record<string, number>> = {
  /** A selector (SQL-92 or XPath) that does not parse. */
  InvalidSelectorError: 400,
  /** A schedule (timeToDeliverOverride) that does not parse. */
  ScheduleSyntaxError: 400,
  /** A message body, header or property of the wrong type or form. */
  MessageFormatError: 400,
  /** A value outside what the API allows (priority 10, negative time to live). */
  InvalidArgumentError: 400,
  InvalidClientIDError: 400,
  /** A message that can never be processed. */
  PoisonMessageError: 400,
  /** A destination, subscription or origin that does not exist is a 404; a bad name a 400. */
  InvalidDestinationError: 400,
  /** Not allowed in the current state: a topic with subscribers, a reload already running. */
  IllegalStateError: 409,
  /** A full destination or gateway quota, or a blocked send that timed out. */
  ResourceAllocationError: 503,
  /** The store refused the commit: the transaction was rolled back by the server. */
  TransactionRolledBackError: 503,
};

const NOT_FOUND = /does not exist|no durable subscription|there is no|no longer exists/;

/** The status `error` answers with. */
export function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  // Full disk, I/O error, damaged or closed store: nothing the client did wrong.
  if (error instanceof StoreError) return 503;
  if (!(error instanceof JMSError)) return 500;
  const status = STATUS_BY_CLASS[error.name];
  if (status === undefined) return 500;
  if (error.name === 'InvalidDestinationError' && NOT_FOUND.test(error.message)) return 404;
  return status;
}
