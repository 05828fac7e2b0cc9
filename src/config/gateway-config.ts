/**
 * The validated gateway configuration: what `loadConfig` returns and `Gateway.start` builds
 * from. Defaults are filled in; broker endpoints carry their connector definition and its
 * resolved configuration, so the gateway needs no registry of its own.
 */
import type { RetryDelay, ReconnectPolicy } from '../bridge/index.js';
import type { OrderingMode, QualityOfService } from '../bridge/index.js';
import type { ConnectionFactoryOptions } from '../jms/client/connection-factory.js';
import type { EngineUser } from '../jms/client/user-directory.js';
import type { DestinationOptions } from '../jms/destination/destination-options.js';
import type { XPathLimits } from '../jms/selector/xpath/xpath-limits.js';
import type { ConnectorDefinition } from '../spi/index.js';

/** Log levels, most verbose first; `silent` logs nothing. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];
/** `json` lines, `pretty` lines for a person, or `auto`: pretty on a terminal outside production. */
export type LogFormat = 'json' | 'pretty' | 'auto';

/** A queue or topic to create at start. */
export interface DestinationConfig {
  readonly name: string;
  readonly options: DestinationOptions;
}

/** A distributed queue or topic (DST-8). */
export interface DistributedDestinationConfig {
  readonly name: string;
  readonly members: readonly { readonly name: string; readonly weight: number }[];
  readonly loadBalancing: 'round-robin' | 'random';
  readonly memberOptions: DestinationOptions;
}

/** One of the gateway's own queues or topics as a bridge endpoint. */
export interface InternalEndpointConfig {
  readonly type: 'jms';
  /** `queue://name` or `topic://name`. */
  readonly destination: string;
  readonly durable?: { readonly clientId: string; readonly name: string };
  readonly selector?: string;
  readonly session?: 'client' | 'transacted';
  readonly transactionSize?: number;
  readonly sendTimeoutMs?: number;
}

/** A broker endpoint: its connector and the connector's resolved configuration. */
export interface ConnectorEndpointConfig {
  readonly type: string;
  readonly connector: ConnectorDefinition;
  readonly connection?: string;
  readonly config: unknown;
}

export type EndpointConfig = InternalEndpointConfig | ConnectorEndpointConfig;

/** One bridge (field names as in docs/bridges.md; `target` is the runtime's `sink`). */
export interface BridgeSpec {
  readonly name: string;
  readonly autoStart: boolean;
  /** Whether `/ready` answers 503 while this bridge is failed (`required`) or not (`ignored`). */
  readonly readiness: 'required' | 'ignored';
  readonly source: EndpointConfig;
  readonly target: EndpointConfig;
  readonly errorDestination?: EndpointConfig;
  readonly qos: QualityOfService;
  readonly selector?: string;
  readonly ordering: OrderingMode;
  readonly orderingProperty: string;
  readonly retry: { readonly delay?: RetryDelay; readonly limit: number; readonly onLimit: 'stall' | 'drop' };
  readonly batchSize: number;
  readonly batchIntervalMs: number;
  readonly sendBatch: { readonly maxMessages: number; readonly maxBytes: number; readonly lingerMs: number };
  readonly reconnect: ReconnectPolicy;
  readonly concurrency: number;
  readonly maxInFlight: number;
  readonly maxInFlightPerUnit?: number;
  readonly stopTimeoutMs?: number;
  readonly duplicateWindow: { readonly maxEntries: number; readonly maxAgeMs?: number };
}

/** The whole configuration. */
export interface GatewayConfig {
  /** The file it came from, for logs. */
  readonly file: string;
  readonly store: {
    /** Absent: the file store (or the memory store with `memory`). */
    readonly type?: 'file' | 'memory' | 'postgres';
    readonly path: string;
    readonly memory: boolean;
    readonly synchronous: 'full' | 'normal';
    /** File store: bodies of this many bytes or more go to files of their own (absent: the store's default). */
    readonly largeBodyBytes?: number;
    /** File store: the most bytes its database and body files may take together (absent: no bound but the disk). */
    readonly maxBytes?: number;
    /** With `type: postgres`, as the next four; a secret. Absent ones take the store's defaults. */
    readonly url?: string;
    readonly schema?: string;
    readonly migrate?: boolean;
    readonly connectAttempts?: number;
  };
  readonly admin: { readonly enabled: boolean; readonly host: string; readonly port: number };
  /** Active/standby high availability (on the PostgreSQL store). */
  readonly ha: {
    readonly enabled: boolean;
    readonly group: string;
    readonly leaseMs: number;
    readonly renewEveryMs: number;
    readonly claimEveryMs: number;
  };
  readonly shutdown: { readonly deadlineMs: number };
  /** Logging: the level (`LOG_LEVEL` in the environment wins) and the line format. */
  readonly log: { readonly level: LogLevel; readonly format: LogFormat };
  readonly engine: {
    readonly autoCreateDestinations: boolean;
    readonly expirationScanIntervalMs: number;
    readonly quota: { readonly messagesMaximum?: number; readonly bytesMaximum?: number };
    readonly throttling: {
      readonly enabled: boolean;
      readonly serverThreshold: number;
      readonly destinationThreshold: number;
      readonly lag: number;
    };
    /** Bounds on XPath work per message; every field has its default filled in. */
    readonly xpath: XPathLimits;
  };
  readonly connectionFactory: Required<Omit<ConnectionFactoryOptions, 'clientId' | 'applicationId'>> & {
    readonly applicationId?: string;
  };
  /** Who connects to the engine: its users (passwords from the environment). */
  readonly security: { readonly users?: readonly EngineUser[] };
  readonly destinations: {
    readonly queues: readonly DestinationConfig[];
    readonly topics: readonly DestinationConfig[];
    readonly distributedQueues: readonly DistributedDestinationConfig[];
    readonly distributedTopics: readonly DistributedDestinationConfig[];
  };
  readonly bridges: readonly BridgeSpec[];
  /**
   * The named broker connections as written (their fields are already merged into the endpoints
   * that name them); a reload restarts every bridge whose connection changed.
   */
  readonly connections: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /**
   * Credentials: the values of fields declared secret, and the passwords of URLs among them
   * (`secretValues`). Logs and the admin API mask them; everything else (hosts, ports) stays visible.
   */
  readonly secrets: ReadonlySet<string>;
}

/** Whether an endpoint is one of the gateway's own destinations. */
export function isInternalEndpoint(endpoint: EndpointConfig): endpoint is InternalEndpointConfig {
  return endpoint.type === 'jms';
}

/** `queue://orders`, `amqp queue 'orders'`: an endpoint for logs and the admin API, without secrets. */
export function describeEndpoint(endpoint: EndpointConfig | undefined): string {
  if (endpoint === undefined) return 'none';
  if (isInternalEndpoint(endpoint))
    return endpoint.durable
      ? `${endpoint.destination} (durable ${endpoint.durable.clientId}/${endpoint.durable.name})`
      : endpoint.destination;
  const config = (endpoint.config ?? {}) as Record<string, unknown>;
  const where = ['queue', 'exchange', 'topic'].find(
    (key) => typeof config[key] === 'string' && config[key] !== '',
  );
  return where === undefined ? endpoint.type : `${endpoint.type} ${where} '${String(config[where])}'`;
}

type Plain = Record<string, unknown>;

/** Splits a destination entry into its name and its DestinationOptions. */
function toDestination(entry: Plain): DestinationConfig {
  const { name, ...options } = entry;
  return { name: name as string, options };
}

/**
 * The typed configuration from validated data. Items that failed validation are left out, so
 * the cross-field checks can look at what is left; only a configuration without problems is
 * handed to the gateway.
 */
export function toGatewayConfig(data: Plain, file: string, secrets: ReadonlySet<string>): GatewayConfig {
  const destinations = (data.destinations ?? {}) as Record<string, (Plain | undefined)[] | undefined>;
  const list = (key: string) => (destinations[key] ?? []).filter((item): item is Plain => item !== undefined);
  const bridges = ((data.bridges ?? []) as (Plain | undefined)[]).filter(
    (bridge): bridge is Plain => bridge !== undefined,
  );
  return {
    file,
    store: data.store as GatewayConfig['store'],
    admin: data.admin as GatewayConfig['admin'],
    ha: data.ha as GatewayConfig['ha'],
    shutdown: data.shutdown as GatewayConfig['shutdown'],
    log: data.log as GatewayConfig['log'],
    engine: data.engine as GatewayConfig['engine'],
    connectionFactory: data.connectionFactory as GatewayConfig['connectionFactory'],
    security: (data.security as GatewayConfig['security'] | undefined) ?? {},
    destinations: {
      queues: list('queues').map(toDestination),
      topics: list('topics').map(toDestination),
      distributedQueues: list('distributedQueues') as unknown as DistributedDestinationConfig[],
      distributedTopics: list('distributedTopics') as unknown as DistributedDestinationConfig[],
    },
    bridges: bridges as unknown as BridgeSpec[],
    connections: (data.connections ?? {}) as GatewayConfig['connections'],
    secrets,
  };
}
