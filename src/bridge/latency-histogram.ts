/**
 * Latency histograms a bridge keeps of its own sends: how long the target took to confirm a
 * send, and how long a message took from its JMSTimestamp to that confirmation. Fixed buckets,
 * counted since the bridge was created, as its counters are; the admin API's /metrics exports
 * them as Prometheus histograms.
 */

/** Upper bounds of the buckets, seconds: from a local send (1 ms) to a slow remote broker (60 s). */
export const LATENCY_BOUNDS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/** A histogram's state: observations per bucket (the last is above every bound) and their sum. */
export interface LatencySnapshot {
  /** Upper bounds of the buckets, seconds. */
  readonly bounds: readonly number[];
  /** Observations in each bucket, not cumulative; one more than `bounds`. */
  readonly counts: readonly number[];
  /** Sum of the observations, seconds. */
  readonly sum: number;
}

/** Send and end-to-end latency of one bridge. */
export interface BridgeLatency {
  /** From handing a message to the target to the target confirming it. */
  readonly send: LatencySnapshot;
  /** From the message's JMSTimestamp to the target confirming it (messages with a timestamp). */
  readonly endToEnd: LatencySnapshot;
}

export class LatencyHistogram {
  readonly #counts = new Array<number>(LATENCY_BOUNDS_SECONDS.length + 1).fill(0);
  #sum = 0;

  /** Records one observation, in milliseconds; a negative one (clocks apart) counts as 0. */
  observe(ms: number): void {
    const seconds = Math.max(0, ms) / 1000;
    if (!Number.isFinite(seconds)) return;
    let bucket = LATENCY_BOUNDS_SECONDS.findIndex((bound) => seconds <= bound);
    if (bucket === -1) bucket = LATENCY_BOUNDS_SECONDS.length;
    this.#counts[bucket]!++;
    this.#sum += seconds;
  }

  snapshot(): LatencySnapshot {
    return { bounds: LATENCY_BOUNDS_SECONDS, counts: [...this.#counts], sum: this.#sum };
  }
}
