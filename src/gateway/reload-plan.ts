/**
 * What a reload changes, worked out before anything is touched: the bridges added, removed,
 * changed (with what changed) and unchanged, the destinations to create, and what a running
 * gateway cannot apply (warnings). It compares configurations and asks the running engine only
 * for the settings of the destinations it has.
 */
import type {
  BridgeSpec,
  DestinationConfig,
  DistributedDestinationConfig,
  EndpointConfig,
  GatewayConfig,
} from '../config/gateway-config.js';
import { isInternalEndpoint } from '../config/gateway-config.js';
import type { DestinationOptions } from '../jms/destination/destination-options.js';

/** A bridge whose configuration changed, and what changed in it. */
export interface BridgeChange {
  readonly spec: BridgeSpec;
  /** Fields of the bridge (`target`, `retry`), `connection 'name'`, or the gateway setting it takes. */
  readonly changes: readonly string[];
}

/** What a reload does, in the order it does it. */
export interface ReloadPlan {
  /** Queues and topics (`queue://name`) and distributed destinations to create. */
  readonly create: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly BridgeChange[];
  readonly added: readonly BridgeSpec[];
  readonly unchanged: readonly BridgeSpec[];
  /** What the new configuration asks for that a running gateway does not apply. */
  readonly warnings: readonly string[];
}

/** What runs now, as far as planning a reload needs to know. */
export interface RunningState {
  /** The configuration applied last: its bridges and destinations run. */
  readonly current: GatewayConfig;
  /** The configuration the process started with: the settings no reload applies come from it. */
  readonly started: GatewayConfig;
  /** The settings of a queue or topic that exists now (`queue://name`), or undefined. */
  destinationOptions(destination: string): DestinationOptions | undefined;
}

/** Sections a reload cannot apply: they shape the store, the engine, the admin API or the logger at start. */
const RESTART_SECTIONS = ['store', 'admin', 'log', 'engine', 'connectionFactory', 'security'] as const;

/** Compares the running state with `next` and says what a reload does. */
export function planReload(running: RunningState, next: GatewayConfig): ReloadPlan {
  const destinations = planDestinations(running, next);
  const bridges = planBridges(running.current, next);
  const warnings = [...destinations.warnings];
  for (const section of RESTART_SECTIONS) {
    const changed = differingKeys(running.started[section], next[section]);
    if (changed.length > 0)
      warnings.push(
        `'${section}' changed (${changed.join(', ')}): restart the gateway to apply it; a reload does not`,
      );
  }
  return { create: destinations.create, ...bridges, warnings };
}

function planBridges(
  current: GatewayConfig,
  next: GatewayConfig,
): Pick<ReloadPlan, 'removed' | 'changed' | 'added' | 'unchanged'> {
  const before = new Map(current.bridges.map((spec) => [spec.name, spec]));
  const names = new Set(next.bridges.map((spec) => spec.name));
  const changed: BridgeChange[] = [];
  const added: BridgeSpec[] = [];
  const unchanged: BridgeSpec[] = [];
  for (const spec of next.bridges) {
    const old = before.get(spec.name);
    if (old === undefined) {
      added.push(spec);
      continue;
    }
    const changes = differingKeys(bridgeParts(old, current), bridgeParts(spec, next));
    if (changes.length === 0) unchanged.push(spec);
    else changed.push({ spec, changes });
  }
  const removed = current.bridges.map((spec) => spec.name).filter((name) => !names.has(name));
  return { removed, changed, added, unchanged };
}

/**
 * Everything a bridge is built from, by part: its own fields (not `autoStart`, which only decides
 * whether it starts with the gateway, nor `readiness`, which only `/ready` reads), the gateway settings it takes when it does not set them,
 * and the connections its endpoints name (a change there restarts it even where the endpoint
 * overrides the changed field: the connection is the operator's unit of change).
 */
function bridgeParts(spec: BridgeSpec, config: GatewayConfig): Record<string, unknown> {
  const { autoStart: _autoStart, readiness: _readiness, ...fields } = spec;
  const parts: Record<string, unknown> = { ...fields };
  if (spec.stopTimeoutMs === undefined) parts['shutdown.deadlineMs'] = config.shutdown.deadlineMs;
  const endpoints = [spec.source, spec.target, spec.errorDestination].filter(
    (endpoint): endpoint is EndpointConfig => endpoint !== undefined,
  );
  const sinks = [spec.target, spec.errorDestination];
  if (sinks.some((e) => e !== undefined && isInternalEndpoint(e) && e.sendTimeoutMs === undefined))
    parts['connectionFactory.sendTimeout'] = config.connectionFactory.sendTimeout;
  for (const endpoint of endpoints) {
    if (isInternalEndpoint(endpoint) || endpoint.connection === undefined) continue;
    parts[`connection '${endpoint.connection}'`] = config.connections[endpoint.connection];
  }
  return parts;
}

interface Definition {
  readonly id: string;
  readonly settings: unknown;
}

function planDestinations(
  running: RunningState,
  next: GatewayConfig,
): { create: string[]; warnings: string[] } {
  const create: string[] = [];
  const warnings: string[] = [];
  const configured = plainDefinitions(next);
  for (const { id, settings } of configured) {
    const runs = running.destinationOptions(id);
    if (runs === undefined) {
      create.push(id);
      continue;
    }
    const changed = differingKeys(runs, settings);
    if (changed.length > 0)
      warnings.push(
        `destination '${id}' is configured with settings it does not run with (${changed.join(', ')}): a destination keeps the settings it was created with, also across restarts; to apply them, move its messages elsewhere, delete it through the admin API and reload`,
      );
  }
  const kept = new Set(configured.map(({ id }) => id));
  for (const { id } of plainDefinitions(running.current))
    if (!kept.has(id) && running.destinationOptions(id) !== undefined)
      warnings.push(
        `destination '${id}' is no longer configured: it keeps running with its messages; delete it through the admin API if it is not needed`,
      );

  const before = new Map(distributedDefinitions(running.current).map((d) => [d.id, d.settings]));
  const after = distributedDefinitions(next);
  for (const { id, settings } of after) {
    if (!before.has(id)) {
      create.push(id);
      continue;
    }
    const changed = differingKeys(before.get(id), settings);
    if (changed.length > 0)
      warnings.push(
        `distributed destination '${id}' changed (${changed.join(', ')}): a distributed destination keeps its definition while the gateway runs, and the store keeps it across restarts`,
      );
  }
  const still = new Set(after.map(({ id }) => id));
  for (const id of before.keys())
    if (!still.has(id))
      warnings.push(
        `distributed destination '${id}' is no longer configured: it keeps running while the gateway runs`,
      );
  return { create, warnings };
}

function plainDefinitions(config: GatewayConfig): Definition[] {
  const of = (kind: string, list: readonly DestinationConfig[]) =>
    list.map(({ name, options }) => ({ id: `${kind}://${name}`, settings: options }));
  return [...of('queue', config.destinations.queues), ...of('topic', config.destinations.topics)];
}

function distributedDefinitions(config: GatewayConfig): Definition[] {
  const of = (kind: string, list: readonly DistributedDestinationConfig[]) =>
    list.map(({ name, ...settings }) => ({ id: `${kind}://${name}`, settings }));
  return [
    ...of('queue', config.destinations.distributedQueues),
    ...of('topic', config.destinations.distributedTopics),
  ];
}

/** The top-level keys whose values differ (deeply, whatever the key order), sorted. */
export function differingKeys(a: unknown, b: unknown): string[] {
  const left = (a ?? {}) as Record<string, unknown>;
  const right = (b ?? {}) as Record<string, unknown>;
  return [...new Set([...Object.keys(left), ...Object.keys(right)])]
    .filter((key) => canonical(left[key]) !== canonical(right[key]))
    .sort();
}

/**
 * JSON with sorted keys, to compare settings whatever their order. A connector definition stands
 * for its type: two loads of a file share the registry, and its schema is not configuration.
 */
export function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (key, item: unknown) => {
      if (key === 'connector' && typeof item === 'object' && item !== null && 'type' in item)
        return item.type;
      if (typeof item === 'bigint') return `${item.toString()}n`;
      return typeof item === 'object' && item !== null && !Array.isArray(item)
        ? Object.fromEntries(Object.entries(item).sort(([x], [y]) => x.localeCompare(y)))
        : item;
    }) ?? 'undefined'
  );
}
