/**
 * Distributed destinations (DST-8) as the engine defines them: one name over member queues or
 * topics, created with their members and stored, deleted without them; the members of a
 * distributed topic forward to each other. Choosing a member is `distributed.ts`'s job.
 */
import { Queue, Topic } from './destination.js';
import { checkDestinationName } from './destination-name.js';
import type { DestinationOptions } from './destination-options.js';
import type { DestinationState } from './destination-state.js';
import { DistributedState, type Member } from './distributed.js';
import type { LoadBalancing } from './load-balancing.js';
import { type DestinationRegistry, MEMBER_SEPARATOR } from './registry.js';
import type { StoreLink } from '../engine/store-link.js';
import { InvalidArgumentError, InvalidDestinationError } from '../errors.js';

/** What distributed destinations need of the engine. */
export interface DistributedContext {
  readonly registry: DestinationRegistry;
  readonly storeLink: StoreLink;
  readonly random: () => number;
  /** Creates (or finds) a member queue or topic. */
  createMember(
    kind: 'queue' | 'topic',
    name: string,
    options: DestinationOptions | undefined,
  ): Promise<Queue | Topic>;
}

/** A distributed destination to create. */
export interface DistributedDefinition {
  readonly kind: 'queue' | 'topic';
  readonly name: string;
  readonly members: readonly { name: string; weight?: number }[];
  readonly loadBalancing?: LoadBalancing;
  readonly memberOptions?: DestinationOptions;
}

export class DistributedDestinations {
  readonly #context: DistributedContext;

  constructor(context: DistributedContext) {
    this.#context = context;
  }

  /**
   * Creates a distributed queue or topic over member destinations (DST-8); members are created
   * if they do not exist. `checked` false takes a definition a previous run stored as it was:
   * refusing one then would keep the gateway from starting.
   */
  async create(definition: DistributedDefinition, checked = true): Promise<Queue | Topic> {
    const { registry } = this.#context;
    const { kind, name, members } = definition;
    const handle =
      kind === 'queue' ? new Queue(checkDestinationName(name)) : new Topic(checkDestinationName(name));
    if (registry.distributed(handle.toString()) || registry.find(handle)) {
      throw new InvalidDestinationError(`destination '${handle.toString()}' already exists`);
    }
    if (members.length === 0)
      throw new InvalidArgumentError(`distributed destination '${name}' needs at least one member`);
    if (checked) this.#checkNotAnErrorDestination(handle, definition.memberOptions);
    const resolved: Member[] = [];
    for (const member of members) {
      const weight = member.weight ?? 1;
      if (!Number.isInteger(weight) || weight < 1) {
        throw new InvalidArgumentError(
          `member '${member.name}' of '${name}': weight ${String(weight)} is not valid (expected an integer >= 1)`,
        );
      }
      const memberHandle = await this.#context.createMember(kind, member.name, definition.memberOptions);
      resolved.push({ state: registry.find(memberHandle)!, weight });
    }
    registry.undelete(handle.toString());
    const state = new DistributedState(
      handle,
      resolved,
      definition.loadBalancing ?? 'round-robin',
      this.#context.random,
      (member) => registry.consumerCount(member),
    );
    registry.addDistributed(state);
    if (kind === 'topic') this.#linkTopicMembers();
    const stored = {
      distributedMembers: members.map((m) => ({ name: m.name, weight: m.weight ?? 1 })),
      loadBalancing: state.loadBalancing,
    };
    await this.#context.storeLink.write([
      { op: 'putDestination', destination: { kind, name, options: stored } },
    ]);
    return handle;
  }

  /** Deletes a distributed destination, not its members; false when `handle` names none. */
  async delete(handle: Queue | Topic): Promise<boolean> {
    const { registry } = this.#context;
    const distributed = registry.distributed(handle.toString());
    if (!distributed) return false;
    registry.removeDistributed(distributed);
    // Like any deleted destination, its name is not auto-created again, not even as a plain one.
    registry.markDeleted(handle.toString());
    if (handle.kind === 'topic') this.#linkTopicMembers(distributed.members);
    await this.#context.storeLink.write([{ op: 'removeDestination', kind: handle.kind, name: handle.name }]);
    return true;
  }

  /**
   * Points each member of a distributed topic at the other members, which get what is published
   * to it directly (DST-8); `unlinked` are the members of one just deleted.
   */
  #linkTopicMembers(unlinked: readonly Member[] = []): void {
    const others = new Map<DestinationState, Set<DestinationState>>();
    for (const member of unlinked) others.set(member.state, new Set());
    for (const distributed of this.#context.registry.allDistributed()) {
      if (distributed.handle.kind !== 'topic') continue;
      for (const { state } of distributed.members) {
        const set = others.get(state) ?? new Set<DestinationState>();
        for (const other of distributed.members) if (other.state !== state) set.add(other.state);
        others.set(state, set);
      }
    }
    for (const [state, set] of others) state.forwardTo = [...set];
  }

  /**
   * A distributed destination (or a `name/member` alias of it) cannot be an error destination
   * (DLV-3): a move goes to one queue or topic. Checked here too, for destinations created first.
   */
  #checkNotAnErrorDestination(handle: Queue | Topic, memberOptions: DestinationOptions | undefined): void {
    const key = handle.toString();
    const names = (errorDestination: string | undefined) =>
      errorDestination === key || errorDestination?.startsWith(`${key}${MEMBER_SEPARATOR}`) === true;
    const referrer = [...this.#context.registry.states()].find((state) =>
      names(state.options.errorDestination),
    );
    const by = names(memberOptions?.errorDestination) ? 'its own members' : referrer && `'${referrer.label}'`;
    if (by === undefined) return;
    throw new InvalidDestinationError(
      `distributed destination '${key}' cannot be created: it would be the error destination of ${by}, and an error destination must be a queue or topic`,
    );
  }
}
