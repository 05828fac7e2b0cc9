/** The admin API's answers, as far as the console reads them. */

// The shapes the gateway's own code answers with: named, not copied, so they cannot drift apart
// (type-only imports: nothing of the gateway is bundled into the page).
export type { DestinationStatistics, EngineStatistics, PendingByCause } from '../../src/jms/statistics.js';
export type { BridgeView } from '../../src/admin/bridge-control.js';
export type { Explanation } from '../../src/jms/selector/index.js';
export type { SelectorAnswer } from '../../src/admin/selector-route.js';
export type { ReloadResult } from '../../src/admin/routes.js';

export type ValueJson = boolean | number | string | { type: string; value: boolean | number | string };

export interface MessageJson {
  type: 'text' | 'xml' | 'bytes' | 'map' | 'stream' | 'empty';
  headers: Record<string, string | number | boolean | null>;
  properties: Record<string, ValueJson>;
  body?: unknown;
}
