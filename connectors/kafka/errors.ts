/**
 * Turns kafkajs errors into the SPI's typed errors, so the runtime decides what happens next:
 * `PoisonMessageError` (never retry, error destination at once), `EndpointConfigurationError`
 * (an operator must fix the endpoint), `NotConnectedError` (reconnect with backoff) or
 * `BackOffError` (retry the same message later).
 */
import {
  BackOffError,
  EndpointConfigurationError,
  NotConnectedError,
  PoisonMessageError,
} from '../../src/spi/index.js';

/** What a kafkajs error looks like where it matters here (duck-typed: kafkajs wraps errors in errors). */
interface KafkaJSErrorShape {
  readonly name?: unknown;
  readonly type?: unknown;
  readonly code?: unknown;
  readonly retriable?: unknown;
  readonly cause?: unknown;
  readonly originalError?: unknown;
  readonly errors?: unknown;
  readonly message?: unknown;
}

/** The broker will never take this record, however often it is sent (DLV-9). */
const POISON_TYPES = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'CORRUPT_MESSAGE',
]);

/** Only an operator can fix these: wrong topic, credentials or permissions. */
const CONFIGURATION_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'INVALID_TOPIC_EXCEPTION',
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'SASL_AUTHENTICATION_FAILED',
  'INVALID_REQUIRED_ACKS',
  'POLICY_VIOLATION',
]);
const CONFIGURATION_NAMES = new Set(['KafkaJSSASLAuthenticationError', 'KafkaJSServerDoesNotSupportApiKey']);

/** The producer's identity is gone (fenced, expired): only a new producer, i.e. a reconnect, helps. */
const FENCED_TYPES = new Set([
  'INVALID_PRODUCER_EPOCH',
  'OUT_OF_ORDER_SEQUENCE_NUMBER',
  'UNKNOWN_PRODUCER_ID',
  'INVALID_TXN_STATE',
  'TRANSACTION_COORDINATOR_FENCED',
  'FENCED_INSTANCE_ID',
]);
/** PRODUCER_FENCED, which kafkajs 2 does not name. */
const PRODUCER_FENCED_CODE = 90;

/** The connection is down, or kafkajs gave up reaching a broker. */
const CONNECTION_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSRequestTimeoutError',
]);
const CONNECTION_MESSAGES = ['The producer is disconnected', 'The producer is disconnecting'];

function shape(error: unknown): KafkaJSErrorShape {
  return typeof error === 'object' && error !== null ? error : {};
}

/** The error and every error it wraps (`cause`, kafkajs's `originalError`, aggregate `errors`). */
function chain(error: unknown): KafkaJSErrorShape[] {
  const seen = new Set<unknown>();
  const result: KafkaJSErrorShape[] = [];
  const visit = (current: unknown): void => {
    if (current === undefined || current === null || seen.has(current) || result.length > 16) return;
    seen.add(current);
    const s = shape(current);
    result.push(s);
    visit(s.cause);
    visit(s.originalError);
    if (Array.isArray(s.errors)) for (const inner of s.errors) visit(inner);
  };
  visit(error);
  return result;
}

function describe(error: unknown): string {
  const message = shape(error).message;
  return typeof message === 'string' ? message : String(error);
}

/** Already one of the SPI's typed errors: passed on as it is. */
function isTyped(error: unknown): error is Error {
  return (
    error instanceof PoisonMessageError ||
    error instanceof EndpointConfigurationError ||
    error instanceof NotConnectedError ||
    error instanceof BackOffError
  );
}

/** The SPI error for a failed send of one record to `topic`. */
export function classifySendError(error: unknown, topic: string): Error {
  if (isTyped(error)) return error;
  const errors = chain(error);
  const text = describe(error);
  const has = (types: ReadonlySet<string>): boolean =>
    errors.some((e) => typeof e.type === 'string' && types.has(e.type));
  if (has(POISON_TYPES))
    return new PoisonMessageError(`kafka topic '${topic}' refused the record: ${text}`, { cause: error });
  return classifyConnectionError(error, `sending to kafka topic '${topic}'`);
}

/**
 * The SPI error for a failed connect, commit or any other client call, `doing` says what for the
 * message: configuration problems, lost connections, and back-off for the rest.
 */
export function classifyConnectionError(error: unknown, doing: string): Error {
  if (isTyped(error)) return error;
  const errors = chain(error);
  const text = describe(error);
  const message = `${doing} failed: ${text}`;
  const typeIn = (types: ReadonlySet<string>): boolean =>
    errors.some((e) => typeof e.type === 'string' && types.has(e.type));
  const nameIn = (names: ReadonlySet<string>): boolean =>
    errors.some((e) => typeof e.name === 'string' && names.has(e.name));
  if (typeIn(CONFIGURATION_TYPES) || nameIn(CONFIGURATION_NAMES))
    return new EndpointConfigurationError(message, { cause: error });
  if (typeIn(FENCED_TYPES) || errors.some((e) => e.code === PRODUCER_FENCED_CODE))
    return new NotConnectedError(message, { cause: error });
  if (
    nameIn(CONNECTION_NAMES) ||
    errors.some((e) => {
      const text = e.message;
      return typeof text === 'string' && CONNECTION_MESSAGES.some((m) => text.startsWith(m));
    })
  )
    return new NotConnectedError(message, { cause: error });
  return new BackOffError(message, undefined, { cause: error });
}

/**
 * What a broker answers for a few seconds after it started (a freshly formatted KRaft broker
 * most of all) or right after a topic was made, before the controller's news reached every
 * broker: the topic or its leaders not known yet, the controller moved, a request that timed out.
 * A topic creation that meets one of these is tried again; anywhere else
 * `UNKNOWN_TOPIC_OR_PARTITION` still means a wrong topic.
 */
const SETTLING_TYPES = new Set([
  'UNKNOWN_TOPIC_OR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_CONTROLLER',
  'REQUEST_TIMED_OUT',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'GROUP_LOAD_IN_PROGRESS',
  'PREFERRED_LEADER_NOT_AVAILABLE',
]);
/** kafkajs's own names for the same: metadata not loaded yet, the wait for leaders ran out. */
const SETTLING_NAMES = new Set([
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
  'KafkaJSTimeout',
]);

/**
 * Whether a failed topic creation (`admin.createTopics`, with its wait for leaders) is worth
 * trying again after a pause: it met one of the answers of a broker that is still settling, and
 * nothing that only an operator can fix (a refused name, policy or permission, which wins).
 */
export function isSettlingTopicError(error: unknown): boolean {
  if (isTyped(error)) return false;
  const errors = chain(error);
  const permanent = errors.some(
    (e) =>
      (typeof e.type === 'string' &&
        e.type !== 'UNKNOWN_TOPIC_OR_PARTITION' &&
        CONFIGURATION_TYPES.has(e.type)) ||
      (typeof e.name === 'string' && CONFIGURATION_NAMES.has(e.name)),
  );
  if (permanent) return false;
  return errors.some(
    (e) =>
      (typeof e.type === 'string' && SETTLING_TYPES.has(e.type)) ||
      (typeof e.name === 'string' && SETTLING_NAMES.has(e.name)),
  );
}
