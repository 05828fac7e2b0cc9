/**
 * Distributed destinations (DST-8): one name over several member destinations with weights. A
 * producer picks a member per send; a consumer is pinned to one member when created. A
 * distributed topic delivers every message to all members.
 */
import type { Message } from '../message/message.js';
import type { Destination } from './destination.js';
import type { DestinationState } from './destination-state.js';
import type { LoadBalancing } from './load-balancing.js';
import { unitOfOrderOf, unitOfOrderProperty } from './unit-of-order.js';

/** One member and its weight. */
export interface Member {
  readonly state: DestinationState;
  readonly weight: number;
}

/**
 * The weighted round-robin order of `000`: in round r, every member whose weight is at least r
 * takes a turn, so weights 2, 5, 3 give A,B,C,A,B,C,B,C,B,B.
 */
export function weightedRoundRobin(weights: readonly number[]): number[] {
  const order: number[] = [];
  const rounds = Math.max(0, ...weights);
  for (let round = 1; round <= rounds; round++) {
    weights.forEach((weight, index) => {
      if (weight >= round) order.push(index);
    });
  }
  return order;
}

/**
 * Transaction affinity (`000`): the member each distributed queue's sends went to in one open
 * transaction, so that the transaction's other sends there go to the same member.
 */
export type TransactionAffinity = Map<DistributedState, DestinationState>;

/** Where one kind of choice (sends, or consumers) is in the round-robin order. */
interface Turn {
  next: number;
}

export class DistributedState {
  readonly kind = 'distributed' as const;
  /**
   * The property naming a message's unit of order (ORD-4), as the first member reads it
   * (`JMSXGroupID` unless its `unitOfOrderProperty` says otherwise); null when units are off.
   */
  readonly unitOfOrderProperty: string | null;
  readonly #order: number[];
  readonly #totalWeight: number;
  /** Producers and consumers take turns separately: creating consumers does not shift the sends. */
  readonly #sends: Turn = { next: 0 };
  readonly #consumers: Turn = { next: 0 };

  constructor(
    readonly handle: Destination,
    readonly members: readonly Member[],
    readonly loadBalancing: LoadBalancing,
    private readonly random: () => number,
    private readonly consumersOf: (state: DestinationState) => number,
  ) {
    this.#order = weightedRoundRobin(members.map((m) => m.weight));
    this.#totalWeight = members.reduce((sum, m) => sum + m.weight, 0);
    this.unitOfOrderProperty = unitOfOrderProperty(members[0]?.state.options.unitOfOrderProperty);
  }

  /**
   * The member a message sent to this distributed queue goes to: a unit of order always goes to
   * the same member (ORD-4), so its messages are never out on two members' consumers at once; any
   * other message goes where its transaction's other sends went (transaction affinity, `000`), or
   * by load balancing. A unit's member does not set the affinity: it may have no consumers.
   */
  pickForMessage(message: Message, affinity: TransactionAffinity | undefined): DestinationState {
    const unit = this.unitOf(message);
    if (unit !== null) return this.memberForUnit(unit);
    const pinned = affinity?.get(this);
    if (pinned && !pinned.deleted) return pinned;
    const member = this.pickForSend();
    affinity?.set(this, member);
    return member;
  }

  /** The member a send goes to. Members with no consumers are skipped unless none has any (DST-8). */
  pickForSend(): DestinationState {
    return this.#pick(this.members.some(this.#withConsumers) ? this.#withConsumers : isLive, this.#sends);
  }

  /**
   * The member a new consumer is pinned to: while some members have no consumers, those alone
   * are balanced over (`000`, queues with zero consumers); then all of them.
   */
  pickForConsumer(): DestinationState {
    return this.#pick(this.members.some(this.#idle) ? this.#idle : isLive, this.#consumers);
  }

  /** A message's unit of order, read as the members' backlogs read it; null when it has none. */
  unitOf(message: Message): string | null {
    return this.unitOfOrderProperty === null ? null : unitOfOrderOf(message, this.unitOfOrderProperty);
  }

  /**
   * The member every message of a unit of order goes to (ORD-4): a stable hash of the unit over
   * the members' weights. Consumers and load do not enter into it, so the unit stays on one
   * member, where its backlog hands out one message of the unit at a time.
   */
  memberForUnit(unit: string): DestinationState {
    let point = hashOf(unit) % this.#totalWeight;
    for (const member of this.members) {
      point -= member.weight;
      if (point < 0) return member.state.deleted ? this.pickForSend() : member.state;
    }
    return this.pickForSend();
  }

  // Eligibility is a test rather than a list: a send picks its member without building arrays.
  readonly #withConsumers = (m: Member): boolean => !m.state.deleted && this.consumersOf(m.state) > 0;
  readonly #idle = (m: Member): boolean => !m.state.deleted && this.consumersOf(m.state) === 0;

  #pick(eligible: (member: Member) => boolean, turn: Turn): DestinationState {
    if (this.loadBalancing === 'random') return this.#pickRandom(this.members.filter(eligible));
    for (let tries = 0; tries < this.#order.length; tries++) {
      const member = this.members[this.#order[turn.next]!]!;
      turn.next = (turn.next + 1) % this.#order.length;
      if (eligible(member)) return member.state;
    }
    return this.members.find(eligible)!.state;
  }

  #pickRandom(eligible: readonly Member[]): DestinationState {
    const total = eligible.reduce((sum, m) => sum + m.weight, 0);
    let point = this.random() * total;
    for (const member of eligible) {
      point -= member.weight;
      if (point < 0) return member.state;
    }
    return eligible[eligible.length - 1]!.state;
  }
}

const isLive = (m: Member): boolean => !m.state.deleted;

/** 32-bit FNV-1a of a string's UTF-16 code units: stable across runs and restarts. */
function hashOf(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
