/**
 * Computes the published statistics (statistics.ts) from the engine's destination state: one
 * destination's now, and the engine's totals over all of them.
 */
import type { DestinationStatistics, EngineStatistics, PendingByCause } from '../statistics.js';
import type { Backlog } from './backlog.js';
import type { DestinationState } from './destination-state.js';

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
