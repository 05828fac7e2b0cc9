import type { JmsEngine } from '../engine.js';
import { internalsOf } from '../engine/internals.js';
import { InvalidArgumentError } from '../errors.js';
import type { AcknowledgePolicy } from './acknowledge-mode.js';
import { Connection } from './connection.js';
import { nonNegativeMs, positiveInteger } from './setting-checks.js';

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

/** Creates connections to an engine (SES-1). */
export class ConnectionFactory {
  readonly options: ResolvedFactoryOptions;

  constructor(
    readonly engine: JmsEngine,
    options: ConnectionFactoryOptions = {},
  ) {
    this.options = {
      clientId: options.clientId,
      messagesMaximum: positiveInteger(options.messagesMaximum ?? 10, 'messagesMaximum'),
      redeliveryDelay: nonNegativeMs(options.redeliveryDelay ?? 0, 'redeliveryDelay'),
      acknowledgePolicy: checkPolicy(options.acknowledgePolicy ?? 'all'),
      sendTimeout: nonNegativeMs(options.sendTimeout ?? 10_000, 'sendTimeout'),
      applicationId: checkApplicationId(options.applicationId),
    };
  }

  /**
   * A new connection, created stopped: call `start()` to begin delivery. With a user, the
   * connection authenticates as that user (checked against the engine's `users` when it has a
   * list: a wrong user or password throws a JMSSecurityError) and its sends carry it as
   * JMSXUserID (MSG-2). Without one it is anonymous.
   */
  createConnection(user?: string | null, password?: string | null): Connection {
    const authenticated = internalsOf(this.engine).users.authenticate(user, password);
    return new Connection(this.engine, this.options, authenticated);
  }
}

function checkApplicationId(id: string | undefined): string | undefined {
  if (id !== undefined && (typeof id !== 'string' || id === ''))
    throw new InvalidArgumentError('applicationId must be a non-empty string');
  return id;
}

function checkPolicy(policy: string): AcknowledgePolicy {
  if (policy !== 'all' && policy !== 'previous') {
    throw new InvalidArgumentError(
      `acknowledge policy '${policy}' is not valid (expected 'all' or 'previous')`,
    );
  }
  return policy;
}
