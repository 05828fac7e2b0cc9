/**
 * Prometheus metrics of the gateway, with prom-client: per destination (current, pending by
 * cause, bytes, consumers, totals), per bridge (counters, status, send and end-to-end latency
 * histograms), build info, and the Node process and event loop. The values are read from the
 * engine and the bridges at each scrape, so nothing here keeps state of its own.
 */
import { readFileSync } from 'node:fs';
import { Counter, Gauge, type Metric, Registry, collectDefaultMetrics } from 'prom-client';
import type { LatencySnapshot } from '../bridge/index.js';
import type { HaRoleName } from './readiness.js';
import type { JmsEngine } from '../jms/engine.js';
import type { DestinationStatistics, PendingByCause } from '../jms/statistics.js';
import type { BridgeView } from './bridge-control.js';
import type { StoreUsage } from '../store/store-usage.js';

const PREFIX = 'jms_gateway';

/** What each bridge counter means, for its HELP text (docs/bridges.md has the details). */
const BRIDGE_COUNTER_HELP: Readonly<Record<string, string>> = {
  in: 'Deliveries the bridge read from its source.',
  out: 'Messages the target confirmed.',
  filtered: 'Messages the bridge selector did not match: acknowledged, not sent.',
  retried: 'Retries of a failed send that counted toward the retry limit.',
  deadLettered: "Messages moved to the bridge's error destination (retry limit reached, or poison).",
  discarded: 'Undeliverable messages given up with onLimit: drop and no error destination (configured loss).',
  dropped: 'At-most-once messages acknowledged at the source that never reached the target.',
  duplicates: 'Exactly-once messages dropped because their JMSMessageID was in the duplicate window.',
  possibleDuplicates: 'Messages sent again that may already have been at the target (an upper bound).',
  reconnects: 'Connections re-established after a loss, either side.',
  inFlight: 'Deliveries read from the source and not yet finished.',
  lag: 'How far the bridge is behind its source: in flight plus what the source says waits there.',
};
/** Counters that are levels now, not counts since start. */
const BRIDGE_GAUGES = new Set(['inFlight', 'lag']);

const finite = (value: number) => (Number.isFinite(value) ? value : 0);

type Stats = readonly DestinationStatistics[];

export class GatewayMetrics {
  readonly #registry = new Registry();
  readonly #engine: JmsEngine;
  readonly #bridges: () => readonly BridgeView[];
  readonly #runtime: boolean;
  /** The engine's statistics of the scrape under way: read once, used by every destination metric. */
  #stats: Stats = [];
  #views: readonly BridgeView[] = [];
  readonly #bridgeCounters = new Set<string>();

  /**
   * `runtime`: also the Node process and event-loop metrics and build info (one set per process).
   * `storeUsage`: the room the store takes (the file store's), for the store metrics.
   */
  constructor(
    engine: JmsEngine,
    bridges: () => readonly BridgeView[],
    options: { runtime: boolean; haRole?: () => HaRoleName; storeUsage?: () => StoreUsage },
  ) {
    this.#engine = engine;
    this.#bridges = bridges;
    this.#runtime = options.runtime;
    if (options.haRole !== undefined) this.#haRole(options.haRole);
    if (options.storeUsage !== undefined) this.#storeUsage(options.storeUsage);
    this.#destinationMetrics();
    this.#engineMetrics();
    for (const counter of Object.keys(BRIDGE_COUNTER_HELP)) this.#bridgeCounter(counter);
    this.#bridgeStatus();
    this.#latency(
      'bridge_send_latency_seconds',
      'Time from handing a message to the target to the target confirming it.',
      (v) => v.latency?.send,
    );
    this.#latency(
      'bridge_end_to_end_latency_seconds',
      "Time from a message's JMSTimestamp (when it was first sent) to the target confirming it.",
      (v) => v.latency?.endToEnd,
    );
  }

  get contentType(): string {
    return this.#registry.contentType;
  }

  /** The exposition text of every metric now. */
  async render(): Promise<string> {
    this.#stats = this.#engine.statistics().destinations;
    this.#views = this.#bridges();
    // A counter a bridge reports that this version has no text for still shows.
    for (const view of this.#views)
      for (const counter of Object.keys(view.counters)) this.#bridgeCounter(counter);
    const registries = this.#runtime ? [runtimeRegistry(), this.#registry] : [this.#registry];
    return Registry.merge(registries).metrics();
  }

  #destinationMetrics(): void {
    const labelNames = ['destination', 'kind'] as const;
    const each = (
      name: string,
      type: 'gauge' | 'counter',
      help: string,
      value: (s: DestinationStatistics) => number,
    ) => {
      const stats = () => this.#stats;
      const config = { name: `${PREFIX}_${name}`, help, labelNames, registers: [this.#registry] };
      if (type === 'gauge')
        new Gauge({
          ...config,
          collect() {
            this.reset();
            for (const s of stats()) this.set({ destination: s.destination, kind: s.kind }, finite(value(s)));
          },
        });
      else
        new Counter({
          ...config,
          collect() {
            this.reset();
            for (const s of stats()) this.inc({ destination: s.destination, kind: s.kind }, finite(value(s)));
          },
        });
    };
    each(
      'destination_messages_current',
      'gauge',
      'Messages available to consumers now.',
      (s) => s.messagesCurrent,
    );
    each(
      'destination_messages_pending',
      'gauge',
      'Messages held but not available to consumers (all causes).',
      (s) => s.messagesPending,
    );
    this.#byCause('destination_messages_pending_by_cause', 'messages', (s) => s.pendingMessagesByCause);
    each('destination_bytes_current', 'gauge', 'Bytes of the messages available now.', (s) => s.bytesCurrent);
    each(
      'destination_bytes_pending',
      'gauge',
      'Bytes of the pending messages (all causes).',
      (s) => s.bytesPending,
    );
    this.#byCause('destination_bytes_pending_by_cause', 'bytes', (s) => s.pendingBytesByCause);
    each('destination_consumers', 'gauge', 'Consumers attached now.', (s) => s.consumersCurrent);
    each(
      'destination_messages_high_water',
      'gauge',
      'Most messages held at once since the gateway started (a topic: its subscriptions together).',
      (s) => s.messagesHighWater,
    );
    each(
      'destination_messages_received_total',
      'counter',
      'Messages sent to the destination (a topic: published to it).',
      (s) => s.messagesReceived,
    );
    each(
      'destination_messages_acknowledged_total',
      'counter',
      'Messages acknowledged by consumers.',
      (s) => s.messagesAcknowledged,
    );
    each(
      'destination_messages_expired_total',
      'counter',
      'Messages that expired before they were consumed.',
      (s) => s.messagesExpired,
    );
  }

  /**
   * One sample per destination and pending cause. The causes are whatever the statistics report,
   * so a new cause shows up here (and in the help text) without a change.
   */
  #byCause(
    name: string,
    what: 'messages' | 'bytes',
    causes: (s: DestinationStatistics) => PendingByCause,
  ): void {
    const names = Object.keys(this.#engine.statistics().totals.pendingMessagesByCause).join(', ');
    const stats = () => this.#stats;
    new Gauge({
      name: `${PREFIX}_${name}`,
      help: `Pending ${what} by cause (${names}): why they are not available.`,
      labelNames: ['destination', 'kind', 'cause'],
      registers: [this.#registry],
      collect() {
        this.reset();
        for (const s of stats())
          for (const [cause, value] of Object.entries(causes(s)) as [string, number][])
            this.set({ destination: s.destination, kind: s.kind, cause }, finite(value));
      },
    });
  }

  #engineMetrics(): void {
    const engine = this.#engine;
    const single = (name: string, type: 'gauge' | 'counter', help: string, value: () => number) => {
      const config = { name: `${PREFIX}_${name}`, help, registers: [this.#registry] };
      if (type === 'gauge')
        new Gauge({
          ...config,
          collect() {
            this.set(finite(value()));
          },
        });
      else
        new Counter({
          ...config,
          collect() {
            this.reset();
            this.inc(finite(value()));
          },
        });
    };
    single(
      'messages_moved_to_error_destination_total',
      'counter',
      'Messages moved to an error destination after their redelivery limit.',
      () => engine.messagesMovedToErrorDestinations,
    );
    single(
      'undeliverable_messages_deleted_total',
      'counter',
      'Undeliverable messages deleted for want of an error destination.',
      () => engine.messagesDiscarded,
    );
    single(
      'held_messages',
      'gauge',
      'Messages the whole gateway holds now, available and pending: what the gateway quota and the store count.',
      () => engine.held().messages,
    );
    single(
      'held_bytes',
      'gauge',
      'Bytes of the messages the whole gateway holds now: compare with the store size and the gateway quota.',
      () => engine.held().bytes,
    );
    const stats = () => this.#stats;
    new Gauge({
      name: `${PREFIX}_error_destination_messages`,
      help: 'Messages parked in each destination that is the error destination of another: above 0 needs an operator (browse, replay or delete).',
      labelNames: ['destination', 'kind'],
      registers: [this.#registry],
      collect() {
        this.reset();
        const all = stats();
        const errorDestinations = new Set(
          all.flatMap((s) => {
            const target = engine.destinationOptions(s.destination)?.errorDestination;
            return target === undefined ? [] : [target.includes('://') ? target : `queue://${target}`];
          }),
        );
        for (const s of all)
          if (errorDestinations.has(s.destination))
            this.set({ destination: s.destination, kind: s.kind }, finite(s.messagesCurrent));
      },
    });
    single(
      'blocked_sends',
      'gauge',
      'Sends waiting now for room in a full or throttled destination (blocked producers).',
      () => engine.blockedSends,
    );
  }

  /** `bridge_<counter>_total` (a counter) or `bridge_<counter>` (inFlight, lag: gauges), per bridge. */
  #bridgeCounter(counter: string): void {
    if (this.#bridgeCounters.has(counter)) return;
    this.#bridgeCounters.add(counter);
    const snake = `${PREFIX}_bridge_${counter.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;
    const help = BRIDGE_COUNTER_HELP[counter] ?? `The bridge counter '${counter}' (docs/bridges.md).`;
    const views = () => this.#views;
    const value = (view: BridgeView) => finite(view.counters[counter] ?? 0);
    const config = { help, labelNames: ['bridge'], registers: [this.#registry] };
    if (BRIDGE_GAUGES.has(counter))
      new Gauge({
        ...config,
        name: snake,
        collect() {
          this.reset();
          for (const view of views())
            if (counter in view.counters) this.set({ bridge: view.name }, value(view));
        },
      });
    else
      new Counter({
        ...config,
        name: `${snake}_total`,
        collect() {
          this.reset();
          for (const view of views())
            if (counter in view.counters) this.inc({ bridge: view.name }, value(view));
        },
      });
  }

  #bridgeStatus(): void {
    const views = () => this.#views;
    new Gauge({
      name: `${PREFIX}_bridge_status`,
      help: 'The bridge status (connected, reconnecting, paused, retrying, failed, ...) as a label; the value is 1.',
      labelNames: ['bridge', 'status'],
      registers: [this.#registry],
      collect() {
        this.reset();
        for (const view of views()) this.set({ bridge: view.name, status: view.status }, 1);
      },
    });
    new Gauge({
      name: `${PREFIX}_bridge_status_reason`,
      help: 'Why the bridge has its status (failed: misconfigured, unit-stalled or runtime-error; retrying: retry-delay, back-off or error-destination-unavailable; reconnecting: connection-lost) as labels; the value is 1. Only states with a reason appear.',
      labelNames: ['bridge', 'status', 'reason'],
      registers: [this.#registry],
      collect() {
        this.reset();
        for (const view of views()) {
          const reason = view.statusReport?.reason;
          if (reason !== undefined) this.set({ bridge: view.name, status: view.status, reason }, 1);
        }
      },
    });
  }

  /**
   * The room the store takes, as its `maxBytes` counts it, and that bound. A store that cannot
   * say (closing, as the gateway stops) leaves the samples out rather than failing the scrape.
   */
  #storeUsage(usage: () => StoreUsage): void {
    const read = (): StoreUsage | undefined => {
      try {
        return usage();
      } catch {
        return undefined;
      }
    };
    // Labelled by the store's kind: a gauge without labels always has a sample, 0 when unset.
    const gauge = (name: string, help: string, value: (usage: StoreUsage) => number | undefined) =>
      new Gauge({
        name: `${PREFIX}_${name}`,
        help,
        labelNames: ['store'],
        registers: [this.#registry],
        collect() {
          this.reset();
          const now = read();
          const sample = now && value(now);
          if (sample !== undefined) this.set({ store: 'file' }, sample);
        },
      });
    gauge(
      'store_bytes',
      "Bytes the file store's database and its large-body files take now, as store.maxBytes counts them.",
      (now) => now.bytes,
    );
    gauge(
      'store_max_bytes',
      "The file store's maxBytes, the bound on store_bytes; no sample without one.",
      (now) => now.maxBytes,
    );
  }

  #haRole(role: () => HaRoleName): void {
    new Gauge({
      name: `${PREFIX}_ha_role`,
      help: "This instance's role under active/standby high availability (active, standby, activating, stepping-down) as a label; the value is 1. One instance of a group is active.",
      labelNames: ['role'],
      registers: [this.#registry],
      collect() {
        this.reset();
        this.set({ role: role() }, 1);
      },
    });
  }

  #latency(name: string, help: string, of: (view: BridgeView) => LatencySnapshot | undefined): void {
    const views = () => this.#views;
    const fullName = `${PREFIX}_${name}`;
    // prom-client's Histogram only observes; the bridge keeps the buckets, so this family renders
    // them as they are, through the metric interface prom-client's registry reads.
    const family = {
      name: fullName,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: () =>
        Promise.resolve({
          name: fullName,
          help,
          type: 'histogram',
          aggregator: 'sum',
          values: views().flatMap((view) => {
            const snapshot = of(view);
            return snapshot ? histogramSamples(fullName, { bridge: view.name }, snapshot) : [];
          }),
        }),
      reset: () => undefined,
    };
    this.#registry.registerMetric(family as unknown as Metric);
  }
}

/** The `_bucket` (cumulative, with `le`), `_sum` and `_count` samples of one histogram. */
function histogramSamples(name: string, labels: Record<string, string>, snapshot: LatencySnapshot) {
  let cumulative = 0;
  const buckets = snapshot.counts.map((count, i) => {
    cumulative += count;
    const le = i < snapshot.bounds.length ? String(snapshot.bounds[i]) : '+Inf';
    return { metricName: `${name}_bucket`, labels: { ...labels, le }, value: cumulative };
  });
  return [
    ...buckets,
    { metricName: `${name}_sum`, labels, value: snapshot.sum },
    { metricName: `${name}_count`, labels, value: cumulative },
  ];
}

let runtime: Registry | undefined;

/**
 * Node process and event-loop metrics under their standard names (process_cpu_seconds_total,
 * nodejs_eventloop_lag_seconds, nodejs_heap_size_used_bytes, ...), so stock dashboards work,
 * and `jms_gateway_build_info`. One set per process, however many admin servers it runs.
 */
function runtimeRegistry(): Registry {
  if (runtime) return runtime;
  runtime = new Registry();
  collectDefaultMetrics({ register: runtime });
  new Gauge({
    name: `${PREFIX}_build_info`,
    help: 'The gateway version and the Node version it runs on, as labels; the value is 1.',
    labelNames: ['version', 'node'],
    registers: [runtime],
  }).set({ version: packageVersion(), node: process.version }, 1);
  return runtime;
}

/** The version in the nearest package.json named jms-gateway above this file (source, built or installed). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'jms-gateway' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not here: look one folder up
    }
    if (dir.pathname === '/') return 'unknown';
  }
}

/** The metrics page of an engine and its bridges (without the process metrics): for tests and embedding. */
export function renderMetrics(engine: JmsEngine, bridges: readonly BridgeView[]): Promise<string> {
  return new GatewayMetrics(engine, () => bridges, { runtime: false }).render();
}
