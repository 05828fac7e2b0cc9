import type { JmsEngine } from '../engine.js';
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
}

/** Resolved factory settings, as connections and sessions read them. */
export type ResolvedFactoryOptions = Required<Omit<ConnectionFactoryOptions, 'clientId'>> & {
  clientId: string | undefined;
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
    };
  }

  /** A new connection, created stopped: call `start()` to begin delivery. */
  createConnection(): Connection {
    return new Connection(this.engine, this.options);
  }
}

function checkPolicy(policy: string): AcknowledgePolicy {
  if (policy !== 'all' && policy !== 'previous') {
    throw new InvalidArgumentError(
      `acknowledge policy '${policy}' is not valid (expected 'all' or 'previous')`,
    );
  }
  return policy;
}
