/**
 * What the client objects (`client/`) need of the engine: its units, by name. They get it with
 * {@link internalsOf} from the public `JmsEngine` facade, whose published type shows none of it.
 * (Keyed by object rather than by `JmsEngine`, so this module does not import the facade back.)
 */
import type { Clock, TimerQueue } from '../clock.js';
import type { ClientIdClaims } from '../client/client-ids.js';
import type { UserDirectory } from '../client/user-directory.js';
import type { Redelivery } from '../delivery/redelivery.js';
import type { ErrorDestinations } from '../delivery/error-destinations.js';
import type { DestinationRegistry } from '../destination/registry.js';
import type { Subscriptions } from '../destination/subscriptions.js';
import type { EngineLogger } from '../logger.js';
import type { EngineIds } from './ids.js';
import type { SendPipeline } from './send-pipeline.js';
import type { StoreLink } from './store-link.js';

export interface EngineInternals {
  readonly clock: Clock;
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  readonly ids: EngineIds;
  /** Checks the user a connection names (`createConnection(user, password)`). */
  readonly users: UserDirectory;
  readonly clientIds: ClientIdClaims;
  readonly registry: DestinationRegistry;
  readonly subscriptions: Subscriptions;
  readonly sendPipeline: SendPipeline;
  readonly redelivery: Redelivery;
  readonly errorDestinations: ErrorDestinations;
  readonly storeLink: StoreLink;
}

const internals = new WeakMap<object, EngineInternals>();

/** Called by the facade's constructor: ties an engine to its units. */
export function bindInternals(engine: object, units: EngineInternals): void {
  internals.set(engine, units);
}

/** The units behind an engine (for client objects, once, when they are created). */
export function internalsOf(engine: object): EngineInternals {
  const units = internals.get(engine);
  if (!units) throw new Error('not an engine made by JmsEngine');
  return units;
}
