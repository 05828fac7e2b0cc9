/**
 * The connector SPI: everything a connector may import from the gateway. Connectors import
 * nothing else of `src/` (enforced by lint).
 */
export type {
  Outcome,
  Delivery,
  Source,
  Sink,
  SendResult,
  ConnectorContext,
  ConnectorDefinition,
  ForwardedIdsQuery,
  ForwardedIdSeen,
  CheckContext,
  EndpointCheck,
  EndpointProblem,
} from './connector.js';
export { ConnectorRegistry, INTERNAL_ENDPOINT_TYPE } from './connector-registry.js';
export { type XPathEvaluator, createXPathEvaluator } from './xpath-evaluator.js';
export {
  NotConnectedError,
  BackOffError,
  EndpointConfigurationError,
  PoisonMessageError,
  MessageTooLargeError,
  isPoison,
} from './errors.js';
export {
  type FieldSpec,
  type ConfigSchema,
  defineSchema,
  rangeProblems,
  resolveConfig,
  ConfigValidationError,
} from './config-schema.js';
export { Message, DeliveryMode, type BodyType, type DeliveryModeValue } from '../jms/message/message.js';
export { TextMessage } from '../jms/message/text-message.js';
export { XMLMessage } from '../jms/message/xml-message.js';
export { BytesMessage } from '../jms/message/bytes-message.js';
export { MapMessage } from '../jms/message/map-message.js';
export { StreamMessage } from '../jms/message/stream-message.js';
export { Queue, Topic, type Destination, parseDestination } from '../jms/destination/destination.js';
export type { TypedValue, ValueType } from '../jms/message/typed-value.js';
export { MessageFormatError } from '../jms/errors.js';
export {
  VALUE_TYPES,
  isValueType,
  typedToString,
  typedFromString,
  type JsonTypedValue,
  typedToJson,
  typedFromJson,
  type JsonValue,
  typedToJsonValue,
  typedFromJsonValue,
} from '../jms/message/typed-value-codec.js';
export {
  encodeTypeTags,
  decodeTypeTags,
  carriedProperties,
  setCarriedProperty,
  CARRIED_HEADERS,
  type CarriedHeader,
  type DeliveryModeName,
  type JmsHeaders,
  readHeaders,
  writeHeaders,
  headersToStrings,
  headersFromStrings,
  BODY_CONTENT_TYPES,
  contentTypeOf,
  bodyTypeOfContentType,
  mapBodyToJson,
  streamBodyToJson,
  encodeBody,
  decodeBody,
  ENVELOPE_VERSION,
  type Envelope,
  encodeEnvelope,
  isEnvelope,
  decodeEnvelope,
  messageSnapshot,
} from './message-codec.js';
export type { EngineLogger } from '../jms/logger.js';
export { untilAborted } from './abort.js';
export { WaitingQueue } from './waiting-queue.js';
export {
  OrderedBatches,
  BehindFailureError,
  type BatchTurn,
  type BatchLane,
  type Written,
  writeBatchInTurn,
} from './ordered-batches.js';
