/**
 * Statistics per destination and for the whole engine (DST-9), with pending broken down by cause
 * so an operator can answer "why are messages pending?" with numbers (`003`).
 */
import type { Backlog } from './destination/backlog.js';
import type { DestinationState } from './destination/destination-state.js';

/** Pending messages and bytes by cause. */
export interface PendingByCause {
  /** Sent in a transaction not yet committed. */
  uncommitted: number;
  /** Waiting for their delivery time. */
  scheduled: number;
  /** Waiting out a redelivery delay. */
  redeliveryDelay: number;
  /** Delivered to a consumer and not yet acknowledged or committed. */
  unacknowledged: number;
  /** Undeliverable, held for room in a full error destination; no consumer gets them (DLV-3). */
  errorDestinationFull: number;
}

/** Statistics of one destination. For a topic, its subscriptions' backlogs are summed. */
export interface DestinationStatistics {
  destination: string;
  kind: 'queue' | 'topic';
  messagesCurrent: number;
  messagesPending: number;
  bytesCurrent: number;
  bytesPending: number;
  pendingMessagesByCause: PendingByCause;
  pendingBytesByCause: PendingByCause;
  /**
   * Most messages held at once (current + pending), since the gateway started; a topic's
   * subscriptions counted together at each moment, the gateway's totals likewise.
   */
  messagesHighWater: number;
  /** Most bytes held at once, counted as `messagesHighWater`. */
  bytesHighWater: number;
  /** Messages that entered (a topic: published to it). */
  messagesReceived: number;
  /** Messages acknowledged by consumers. */
  messagesAcknowledged: number;
  messagesExpired: number;
  consumersCurrent: number;
  /** Topics only: subscriptions now. */
  subscriptions?: number;
}

/** Totals over every destination. */
export interface EngineStatistics {
  destinations: DestinationStatistics[];
  totals: Omit<DestinationStatistics, 'destination' | 'kind' | 'subscriptions'>;
}

function emptyCauses(): PendingByCause {
  return { uncommitted: 0, scheduled: 0, redeliveryDelay: 0, unacknowledged: 0, errorDestinationFull: 0 };
}

/** Computes a destination's statistics now. */
export function destinationStatistics(state: DestinationState): DestinationStatistics {
  const backlogs: Backlog[] =
    state.kind === 'queue' ? [state.backlog] : [...state.subscriptions()].map((s) => s.backlog);
  const stats: DestinationStatistics = {
    destination: state.handle.toString(),
    kind: state.kind,
    messagesCurrent: 0,
    messagesPending: 0,
    bytesCurrent: 0,
    bytesPending: 0,
    pendingMessagesByCause: emptyCauses(),
    pendingBytesByCause: emptyCauses(),
    messagesHighWater: state.tally.messagesHighWater,
    bytesHighWater: state.tally.bytesHighWater,
    messagesReceived: state.kind === 'topic' ? state.messagesPublished : 0,
    messagesAcknowledged: 0,
    messagesExpired: 0,
    consumersCurrent: 0,
  };
  for (const backlog of backlogs) addBacklog(stats, backlog, state.kind === 'queue');
  stats.messagesExpired += state.messagesExpiredAtSend;
  if (state.kind === 'topic') stats.subscriptions = backlogs.length;
  return stats;
}

function addBacklog(stats: DestinationStatistics, backlog: Backlog, countReceived: boolean): void {
  const s = backlog.stats;
  const byState = s.byState;
  stats.messagesCurrent += byState.available.messages;
  stats.bytesCurrent += byState.available.bytes;
  const causes: [keyof PendingByCause, keyof typeof byState][] = [
    ['uncommitted', 'uncommitted'],
    ['scheduled', 'scheduled'],
    ['redeliveryDelay', 'delayed'],
    ['unacknowledged', 'delivered'],
    ['errorDestinationFull', 'parked'],
  ];
  for (const [cause, state] of causes) {
    stats.pendingMessagesByCause[cause] += byState[state].messages;
    stats.pendingBytesByCause[cause] += byState[state].bytes;
    stats.messagesPending += byState[state].messages;
    stats.bytesPending += byState[state].bytes;
  }
  if (countReceived) stats.messagesReceived += s.messagesReceived;
  stats.messagesAcknowledged += s.messagesAcknowledged;
  stats.messagesExpired += s.messagesExpired;
  stats.consumersCurrent += backlog.consumerCount;
}

/** Sums destination statistics into engine totals; the high-water marks are the gateway's own, not a sum. */
export function totalStatistics(
  all: readonly DestinationStatistics[],
  gateway: { readonly messagesHighWater: number; readonly bytesHighWater: number },
): EngineStatistics['totals'] {
  const totals: EngineStatistics['totals'] = {
    messagesCurrent: 0,
    messagesPending: 0,
    bytesCurrent: 0,
    bytesPending: 0,
    pendingMessagesByCause: emptyCauses(),
    pendingBytesByCause: emptyCauses(),
    messagesHighWater: gateway.messagesHighWater,
    bytesHighWater: gateway.bytesHighWater,
    messagesReceived: 0,
    messagesAcknowledged: 0,
    messagesExpired: 0,
    consumersCurrent: 0,
  };
  for (const stats of all) {
    for (const key of [
      'messagesCurrent',
      'messagesPending',
      'bytesCurrent',
      'bytesPending',
      'messagesReceived',
      'messagesAcknowledged',
      'messagesExpired',
      'consumersCurrent',
    ] as const) {
      totals[key] += stats[key];
    }
    for (const cause of Object.keys(totals.pendingMessagesByCause) as (keyof PendingByCause)[]) {
      totals.pendingMessagesByCause[cause] += stats.pendingMessagesByCause[cause];
      totals.pendingBytesByCause[cause] += stats.pendingBytesByCause[cause];
    }
  }
  return totals;
}

/** A durable subscription that exists now (DST-9), as the admin API lists it. */
export interface DurableSubscriptionInfo {
  clientId: string | null;
  name: string;
  topic: string;
  selector: string | null;
  /** Whether it has a subscriber now. */
  active: boolean;
  /** Messages it holds. */
  messages: number;
}
