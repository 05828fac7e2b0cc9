/**
 * The settings of a connection factory, in their own file because the factory and the
 * connections it makes both read them (a connection must not import its factory).
 */
import type { AcknowledgePolicy } from './acknowledge-mode.js';

/** Settings a connection factory gives its connections (WebLogic's connection factory settings). */
export interface ConnectionFactoryOptions {
  /** Client id given to each connection (unique: one connection at a time). Default: none. */
  clientId?: string;
  /** Messages in flight to an async consumer, the one being processed included (SES-6). Default 10; 1 = nothing beyond it. */
  messagesMaximum?: number;
  /** Delay in ms before a rolled-back or recovered message is available again (DLV-1). Default 0. */
  redeliveryDelay?: number;
  /** What `message.acknowledge()` covers in CLIENT_ACKNOWLEDGE mode (SES-2). Default 'all'. */
  acknowledgePolicy?: AcknowledgePolicy;
  /** Default ms a send blocked by a full destination, or paused by throttling, waits before failing (DLV-7, DLV-8). Default 10,000. */
  sendTimeout?: number;
  /**
   * The name of the application sending through this factory's connections: every send sets it
   * as JMSXAppID (MSG-2). Default: none, so JMSXAppID is not set (a value the message carries,
   * forwarded from a broker, is kept).
   */
  applicationId?: string;
}

/** Resolved factory settings, as connections and sessions read them. */
export type ResolvedFactoryOptions = Required<
  Omit<ConnectionFactoryOptions, 'clientId' | 'applicationId'>
> & {
  clientId: string | undefined;
  applicationId: string | undefined;
};
