/** What the admin API needs of the running bridges; the gateway supplies it, tests fake it. */
import type { BridgeLatency } from '../bridge/index.js';

export interface BridgeView {
  name: string;
  /** connected, reconnecting, paused, retrying, failed, stopped, ... */
  status: string;
  /** in, out, retried, deadLettered, dropped, reconnects, inFlight, ... */
  counters: Readonly<Record<string, number>>;
  lastError?: string | undefined;
  /** Send and end-to-end latency histograms, exported by /metrics. */
  latency?: BridgeLatency;
}

export interface BridgeControl {
  list(): BridgeView[];
  pause(name: string): Promise<void>;
  resume(name: string): Promise<void>;
  restart(name: string): Promise<void>;
}

/** No bridges: for a gateway that runs none. */
export const noBridges: BridgeControl = {
  list: () => [],
  pause: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
  resume: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
  restart: (name) => Promise.reject(new Error(`there is no bridge '${name}'`)),
};
