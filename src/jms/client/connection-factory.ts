import type { JmsEngine } from '../engine.js';
import { internalsOf } from '../engine/internals.js';
import { InvalidArgumentError } from '../errors.js';
import type { AcknowledgePolicy } from './acknowledge-mode.js';
import { Connection } from './connection.js';
import type { ConnectionFactoryOptions, ResolvedFactoryOptions } from './factory-options.js';
import { nonNegativeMs, positiveInteger } from './setting-checks.js';

export type { ConnectionFactoryOptions, ResolvedFactoryOptions } from './factory-options.js';

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
    return Connection.create(this.engine, this.options, authenticated);
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
