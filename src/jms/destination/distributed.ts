/**
 * Distributed destinations (DST-8): one name over several member destinations with weights. A
 * producer picks a member per send; a consumer is pinned to one member when created. A
 * distributed topic delivers every message to all members.
 */
import type { Destination } from './destination.js';
import type { DestinationState } from './destination-state.js';

/** How producers spread messages over members. */
export type LoadBalancing = 'round-robin' | 'random';

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

export class DistributedState {
  readonly kind = 'distributed' as const;
  readonly #order: number[];
  #next = 0;

  constructor(
    readonly handle: Destination,
    readonly members: readonly Member[],
    readonly loadBalancing: LoadBalancing,
    private readonly random: () => number,
    private readonly consumersOf: (state: DestinationState) => number,
  ) {
    this.#order = weightedRoundRobin(members.map((m) => m.weight));
  }

  /** The member a send goes to. Members with no consumers are skipped unless none has any (DST-8). */
  pickForSend(): DestinationState {
    const live = this.members.filter((m) => !m.state.deleted);
    const withConsumers = live.filter((m) => this.consumersOf(m.state) > 0);
    const eligible = new Set((withConsumers.length > 0 ? withConsumers : live).map((m) => m.state));
    if (this.loadBalancing === 'random') return this.#pickRandom([...eligible]);
    for (let tries = 0; tries < this.#order.length; tries++) {
      const member = this.members[this.#order[this.#next]!]!;
      this.#next = (this.#next + 1) % this.#order.length;
      if (eligible.has(member.state)) return member.state;
    }
    return [...eligible][0]!;
  }

  /** The member a new consumer is pinned to: one without consumers first, else the next in turn. */
  pickForConsumer(): DestinationState {
    const live = this.members.filter((m) => !m.state.deleted);
    const idle = live.find((m) => this.consumersOf(m.state) === 0);
    if (idle) return idle.state;
    return this.pickForSend();
  }

  #pickRandom(states: DestinationState[]): DestinationState {
    const weighted = this.members.filter((m) => states.includes(m.state));
    const total = weighted.reduce((sum, m) => sum + m.weight, 0);
    let point = this.random() * total;
    for (const member of weighted) {
      point -= member.weight;
      if (point < 0) return member.state;
    }
    return weighted[weighted.length - 1]!.state;
  }
}
