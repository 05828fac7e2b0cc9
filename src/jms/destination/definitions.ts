/**
 * Queues and topics defined by administration (PER-2, DST-6): created with checked settings and
 * stored, or deleted with what they hold, refused while another destination depends on them.
 */
import { type Destination, type Queue, type Topic } from './destination.js';
import { checkDestinationOptions, type DestinationOptions } from './destination-options.js';
import type { DestinationRegistry } from './registry.js';
import type { DeliveryTimes } from '../delivery/delivery-times.js';
import { checkErrorDestinationSetting } from '../delivery/error-destinations.js';
import type { StoreLink } from '../engine/store-link.js';
import { IllegalStateError, InvalidDestinationError } from '../errors.js';

/** What the definitions need of the engine. */
export interface DefinitionsContext {
  readonly registry: DestinationRegistry;
  readonly storeLink: StoreLink;
  readonly deliveryTimes: DeliveryTimes;
}

export class DestinationDefinitions {
  readonly #context: DefinitionsContext;

  constructor(context: DefinitionsContext) {
    this.#context = context;
  }

  /** Creates a queue or topic, or returns the existing one (its settings unchanged). Stored (PER-2). */
  async create(handle: Queue | Topic, options: DestinationOptions): Promise<Destination> {
    const { registry, storeLink } = this.#context;
    checkDestinationOptions(options);
    checkErrorDestinationSetting(registry, handle, options.errorDestination);
    // An invalid schedule is refused here, with its position, not at the first send (DLV-6).
    this.#context.deliveryTimes.check(options);
    const existing = registry.find(handle);
    if (existing) return existing.handle;
    if (registry.distributed(handle.toString()))
      throw new InvalidDestinationError(
        `destination '${handle.toString()}' already exists as a distributed destination`,
      );
    registry.undelete(handle.toString());
    registry.register(handle, options);
    await storeLink.write([
      {
        op: 'putDestination',
        destination: { kind: handle.kind, name: handle.name, options: { ...options } },
      },
    ]);
    return handle;
  }

  /**
   * Deletes a queue or topic (DST-6): refused while it is a member of a distributed destination
   * or another destination's error destination.
   */
  async delete(handle: Queue | Topic): Promise<void> {
    const { registry } = this.#context;
    const state = registry.get(handle);
    const key = state.handle.toString();
    for (const owner of registry.allDistributed()) {
      if (owner.members.some((m) => m.state === state)) {
        throw new IllegalStateError(
          `destination '${key}' is a member of distributed destination '${owner.handle.toString()}' and cannot be deleted`,
        );
      }
    }
    for (const other of registry.states()) {
      if (other !== state && other.options.errorDestination === key) {
        throw new IllegalStateError(
          `destination '${key}' is the error destination of '${other.handle.toString()}' and cannot be deleted`,
        );
      }
    }
    registry.delete(state);
    await this.#context.storeLink.flush();
  }
}
