/** The admin API's answers, as far as the console reads them. */

export interface PendingByCause {
  uncommitted: number;
  scheduled: number;
  redeliveryDelay: number;
  unacknowledged: number;
  errorDestinationFull: number;
}

export interface DestinationStatistics {
  destination: string;
  kind: 'queue' | 'topic';
  messagesCurrent: number;
  messagesPending: number;
  bytesCurrent: number;
  pendingMessagesByCause: PendingByCause;
  messagesReceived: number;
  messagesAcknowledged: number;
  messagesExpired: number;
  consumersCurrent: number;
  subscriptions?: number;
}

export interface EngineStatistics {
  destinations: DestinationStatistics[];
}

export interface BridgeView {
  name: string;
  status: string;
  counters: Record<string, number>;
  lastError?: string;
  /** Why the bridge is in its status, when the gateway says (a failed bridge). */
  reason?: string;
  source?: string;
  target?: string;
}

export type ValueJson = boolean | number | string | { type: string; value: boolean | number | string };

export interface MessageJson {
  type: 'text' | 'xml' | 'bytes' | 'map' | 'stream' | 'empty';
  headers: Record<string, string | number | boolean | null>;
  properties: Record<string, ValueJson>;
  body?: unknown;
}

export interface Explanation {
  text: string;
  value: string;
  condition: boolean;
  type?: string;
  xpath?: { expression: string; found?: string | null; body: string; limit?: string };
  children: Explanation[];
}

export type SelectorAnswer =
  | { valid: false; error: string; column: number }
  | { valid: true; empty: boolean; explanation?: Explanation; selected?: boolean };

export interface ReloadResult {
  reloaded: boolean;
  added: string[];
  removed: string[];
  restarted: string[];
  unchanged: string[];
  created: string[];
  changes: Record<string, string[]>;
  warnings: string[];
  errors: string[];
}
