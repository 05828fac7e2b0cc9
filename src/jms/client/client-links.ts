/**
 * What the client objects need of the one that made them: a session of its connection; a
 * consumer, producer and browser of their session. Each parent creates its children, so a child
 * names one of these interfaces instead of its parent's class, and the files form no import cycle.
 * The parents implement them as they are (structurally); the members are `@internal` there.
 */
import type { Backlog } from '../destination/backlog.js';
import type { TemporaryQueue, TemporaryTopic } from '../destination/destination.js';
import type { TransactionAffinity } from '../destination/distributed.js';
import type { Entry, StoredMessage } from '../destination/entry.js';
import type { JmsEngine } from '../engine.js';
import type { Routed } from '../engine/store-link.js';
import type { Message } from '../message/message.js';
import type { ResolvedFactoryOptions } from './factory-options.js';

/** What a session, and through it its consumers and producers, needs of its connection. */
export interface ConnectionLink {
  readonly engine: JmsEngine;
  readonly factoryOptions: ResolvedFactoryOptions;
  readonly id: string;
  /** The user the connection authenticated as (JMSXUserID of its sends); undefined when anonymous. */
  readonly userName: string | undefined;
  readonly started: boolean;
  readonly closed: boolean;
  getClientID(): string | null;
  reportError(thrown: unknown): void;
  sessionClosed(session: unknown): void;
  createTemporaryQueue(): TemporaryQueue;
  createTemporaryTopic(): TemporaryTopic;
}

/**
 * What a consumer, producer or browser needs of its session. The `unknown` parameters are the
 * child itself (a MessageConsumer, MessageProducer or QueueBrowser), which this file cannot name.
 */
export interface SessionLink {
  readonly connection: ConnectionLink;
  readonly transacted: boolean;
  readonly closing: boolean;
  readonly transactionAffinity: TransactionAffinity | undefined;
  checkOpen(): void;
  deliver(consumer: unknown, entry: Entry, backlog: Backlog): Message;
  deliverToReceive(consumer: unknown, entry: Entry, backlog: Backlog): Message | Promise<Message>;
  autoAcknowledge(entry: Entry): Promise<void> | undefined;
  listenerFailed(entry: Entry, error: unknown): boolean;
  calledFromOwnListener(): boolean;
  holdUncommitted(stored: StoredMessage, routed: Routed[]): void;
  consumerClosed(consumer: unknown): void;
  producerClosed(producer: unknown): void;
  browserClosed(browser: unknown): void;
}
