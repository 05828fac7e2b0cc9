/**
 * Statistics per destination and for the whole engine (DST-9), with pending broken down by cause
 * so an operator can answer "why are messages pending?" with numbers (`003`). Types only: the
 * engine computes them in destination/statistics-snapshot.ts, whose inputs are not published.
 */

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
