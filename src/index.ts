/**
 * jms-gateway's public API: the JMS engine, usable embedded in a Node program, with names that
 * mirror Jakarta Messaging in camelCase. Every export is named.
 */
export { JmsEngine, type EngineOptions } from './jms/engine.js';
export { type Clock, systemClock } from './jms/clock.js';
export { type EngineLogger, silentLogger } from './jms/logger.js';
export { ConnectionFactory, type ConnectionFactoryOptions } from './jms/client/connection-factory.js';
export { Connection, type ExceptionListener } from './jms/client/connection.js';
export { type EngineUser } from './jms/client/user-directory.js';
export { Session } from './jms/client/session.js';
export { MessageProducer, type SendOptions } from './jms/client/producer.js';
export { MessageConsumer, type MessageListener } from './jms/client/consumer.js';
export { QueueBrowser } from './jms/client/queue-browser.js';
export { Requestor } from './jms/client/requestor.js';
export {
  AcknowledgeMode,
  type AcknowledgeModeValue,
  type AcknowledgePolicy,
} from './jms/client/acknowledge-mode.js';
export {
  Destination,
  Queue,
  Topic,
  TemporaryQueue,
  TemporaryTopic,
  parseDestination,
  type DestinationKind,
} from './jms/destination/destination.js';
export {
  type DestinationOptions,
  type ExpirationPolicy,
  type RedeliveryBackoff,
} from './jms/destination/destination-options.js';
export { type DestinationKey } from './jms/destination/destination-key.js';
export { type LoadBalancing } from './jms/destination/load-balancing.js';
export { type FlowThresholds, type Quota, type ThrottlingOptions } from './jms/delivery/flow-control.js';
export {
  Message,
  DeliveryMode,
  DEFAULT_PRIORITY,
  type DeliveryModeValue,
  type BodyType,
} from './jms/message/message.js';
export { TextMessage } from './jms/message/text-message.js';
export { XMLMessage } from './jms/message/xml-message.js';
export { BytesMessage } from './jms/message/bytes-message.js';
export { MapMessage } from './jms/message/map-message.js';
export { StreamMessage } from './jms/message/stream-message.js';
export { type TypedValue, type ValueType, type ObjectValue } from './jms/message/typed-value.js';
export {
  type DestinationStatistics,
  type DurableSubscriptionInfo,
  type EngineStatistics,
  type PendingByCause,
} from './jms/statistics.js';
export {
  parseSchedule,
  nextScheduledTime,
  nextScheduledTimeRelative,
  ScheduleSyntaxError,
  type Schedule,
} from './jms/schedule.js';
export { parseSelector, type MessageSelector } from './jms/selector/message-selector.js';
export { type Truth } from './jms/selector/truth.js';
export { type Explanation, type XPathExplanation } from './jms/selector/explanation.js';
export {
  DEFAULT_XPATH_LIMITS,
  setXPathLimitListener,
  setXPathLimits,
  xpathLimitCounts,
  xpathLimits,
  type XPathLimitListener,
  type XPathLimitName,
  type XPathLimits,
} from './jms/selector/xpath/xpath-limits.js';
export {
  JMSError,
  IllegalStateError,
  InvalidSelectorError,
  InvalidDestinationError,
  InvalidClientIDError,
  JMSSecurityError,
  ResourceAllocationError,
  MessageFormatError,
  MessageNotWriteableError,
  MessageEOFError,
  TransactionRolledBackError,
  InvalidArgumentError,
  PoisonMessageError,
  isPoison,
} from './jms/errors.js';
export { type MessageStore, type StoreOperation, type RecoveredState } from './jms/store-port.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory-store.js';
export { FileStore, type FileStoreOptions } from './store/file-store.js';
export { PostgresStore, type PostgresStoreOptions } from './store/postgres-store.js';
export { StoreError } from './store/store-error.js';
export { type StoreUsage } from './store/store-usage.js';
export { type CommitStats } from './store/commit-stats.js';
export { type Lease, type LeaseHolder, type WriteFence, FencedError } from './store/lease.js';
export { PostgresLease, type PostgresLeaseOptions } from './store/postgres-lease.js';
