/**
 * How large a message body the AMQP sink may publish. RabbitMQ refuses a body over its
 * `max_message_size` by closing the channel (406 PRECONDITION_FAILED), failing every publish in
 * flight on it. The broker does not announce the setting, so the sink takes the default of the
 * RabbitMQ version it reports at connect, unless the endpoint's `maxMessageBytes` says otherwise.
 * (Properties and headers must fit in one frame of the negotiated `frame_max`; amqplib refuses
 * a header table beyond it when encoding, which the sink maps to poison as well.)
 */
import { MessageTooLargeError } from '../../src/spi/index.js';

/** The limit a body is checked against, and where it comes from (for the poison reason). */
export interface BodyLimit {
  readonly bytes: number;
  readonly source: string;
}

/** RabbitMQ 3.8 to 3.13: 128 MiB. */
const DEFAULT_3_8 = 134_217_728;
/** RabbitMQ 4.0 and later: 16 MiB. */
const DEFAULT_4_0 = 16_777_216;

/**
 * The body limit for a broker that reports `product` and `version` in connection.start:
 * `configured` when set, else RabbitMQ's default `max_message_size` for that version; none for
 * other brokers and for RabbitMQ before 3.8 (no such setting).
 */
export function bodyLimit(
  configured: number | undefined,
  product: string | undefined,
  version: string | undefined,
): BodyLimit | undefined {
  if (configured !== undefined) return { bytes: configured, source: "the amqp sink's maxMessageBytes" };
  if (product !== 'RabbitMQ' || version === undefined) return undefined;
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) return undefined;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  const source = `rabbitmq ${version} (its default max_message_size)`;
  if (major >= 4) return { bytes: DEFAULT_4_0, source };
  if (major === 3 && minor >= 8) return { bytes: DEFAULT_3_8, source };
  return undefined;
}

/** Throws {@link MessageTooLargeError} when a body of `size` bytes is over `limit`. */
export function checkBodySize(size: number, messageId: string | null, limit: BodyLimit | undefined): void {
  if (limit !== undefined && size > limit.bytes)
    throw new MessageTooLargeError(messageId, size, limit.bytes, limit.source);
}

/**
 * The poison error for RabbitMQ's channel close on a too-large message (`PRECONDITION_FAILED -
 * message size 134217729 is larger than configured max size 134217728`), or undefined when
 * `text` is not that answer.
 */
export function tooLargeAnswer(
  text: string,
  messageId: string | null,
  cause: unknown,
): MessageTooLargeError | undefined {
  const match = /message size (\d+) is larger than (?:configured )?max size (\d+)/i.exec(text);
  if (!match) return undefined;
  return new MessageTooLargeError(
    messageId,
    Number(match[1]),
    Number(match[2]),
    'the amqp broker (max_message_size)',
    { cause },
  );
}
