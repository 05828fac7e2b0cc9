/**
 * `jms-gateway check --connect FILE`: a dry run against the real brokers. The file is checked as
 * `validate` checks it, then every broker endpoint of every bridge (source, target, error
 * destination) is asked, through its connector's `check`, whether it can connect and whether
 * what it reads or writes exists or would be declared at connect. Nothing is created, nothing
 * is sent, and every check is bounded in time, so an unreachable broker is a line, not a hang.
 */
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import type { ConnectorEndpointConfig, EndpointConfig } from '../config/gateway-config.js';
import { isInternalEndpoint } from '../config/gateway-config.js';
import { formatProblems, type LoadedConfig } from '../config/load-config.js';
import type { Problem } from '../config/yaml-source.js';
import type { EndpointCheck } from '../spi/index.js';
import { checkConfigFile } from './config-file.js';
import { type GatewayLogger, silentGatewayLogger } from './logger.js';

/** How long one endpoint's check may take by default, ms: longer than any connector's connect timeout. */
export const DEFAULT_CHECK_TIMEOUT_MS = 15_000;

/** What `check --connect` found. */
export interface ConnectCheckReport {
  /** Every problem as `file:line:col: path: message`, in file order; none means the check passed. */
  readonly problems: readonly string[];
  /** What could not be checked, or will happen at connect (a topic created), placed like problems. */
  readonly notes: readonly string[];
}

/** Options of {@link checkConnections}. */
export interface ConnectCheckOptions {
  readonly registry: ConnectorRegistry;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Per endpoint, ms. Default {@link DEFAULT_CHECK_TIMEOUT_MS}. */
  readonly timeoutMs?: number;
  /** Where connectors log while they check (their client libraries' chatter). Default: nowhere. */
  readonly logger?: GatewayLogger;
}

/** A broker endpoint to check, with where it is in the file. */
interface Target {
  readonly path: string;
  readonly role: 'source' | 'sink';
  readonly bridge: string;
  readonly endpoint: ConnectorEndpointConfig;
}

/** Checks `file` and, if it is valid, every broker endpoint in it; never throws for a bad file. */
export async function checkConnections(
  file: string,
  options: ConnectCheckOptions,
): Promise<ConnectCheckReport> {
  const checked = await checkConfigFile(file, options.registry, options.env);
  if (!checked.ok) return { problems: checked.errors, notes: [] };
  return checkEndpoints(checked.loaded, options);
}

/** The broker endpoints of every bridge, in file order. */
function targetsOf(loaded: LoadedConfig): Target[] {
  const targets: Target[] = [];
  loaded.config.bridges.forEach((bridge, index) => {
    const add = (side: string, role: Target['role'], endpoint: EndpointConfig | undefined): void => {
      if (endpoint === undefined || isInternalEndpoint(endpoint)) return;
      targets.push({ path: `bridges[${index}].${side}`, role, bridge: bridge.name, endpoint });
    };
    add('source', 'source', bridge.source);
    add('target', 'sink', bridge.target);
    add('errorDestination', 'sink', bridge.errorDestination);
  });
  return targets;
}

/** Every endpoint's check, run side by side, turned into positioned problems and notes. */
async function checkEndpoints(
  loaded: LoadedConfig,
  options: ConnectCheckOptions,
): Promise<ConnectCheckReport> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS;
  const logger = options.logger ?? silentGatewayLogger;
  const targets = targetsOf(loaded);
  const results = await Promise.all(targets.map((target) => checkOne(target, timeoutMs, logger)));
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  results.forEach((result, index) => {
    const target = targets[index]!;
    for (const problem of result.problems)
      problems.push({ path: fieldPath(loaded, target, problem.field), message: problem.message });
    for (const note of result.notes) notes.push({ path: target.path, message: note });
  });
  return { problems: formatProblems(loaded.source, problems), notes: formatProblems(loaded.source, notes) };
}

async function checkOne(target: Target, timeoutMs: number, logger: GatewayLogger): Promise<EndpointCheck> {
  const { connector, config, type } = target.endpoint;
  if (connector.check === undefined)
    return { problems: [], notes: [`connector '${type}' has no connection check: not checked`] };
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut: EndpointCheck = {
    problems: [
      { field: '', message: `no answer from the ${type} broker within ${timeoutMs} ms (--timeout)` },
    ],
    notes: [],
  };
  try {
    const checking = connector.check(config, {
      name: `${target.bridge}-check`,
      logger: logger.child({ component: 'check', bridge: target.bridge, connector: type }),
      role: target.role,
      signal,
    });
    // A connector that does not stop when its signal aborts must not hold the whole check up.
    const expired = new Promise<EndpointCheck>((resolve) =>
      signal.addEventListener('abort', () => resolve(timedOut), { once: true }),
    );
    return await Promise.race([checking, expired]);
  } catch (error) {
    if (signal.aborted) return timedOut;
    return { problems: [{ field: '', message: `the check failed: ${(error as Error).message}` }], notes: [] };
  }
}

/**
 * Where a field's problem is shown: on the endpoint when the endpoint sets it, else on the named
 * connection it comes from (`connections.rabbit.url`), else on the endpoint.
 */
function fieldPath(loaded: LoadedConfig, target: Target, field: string): string {
  const onEndpoint = field === '' ? target.path : `${target.path}.${field}`;
  const connection = target.endpoint.connection;
  if (field === '' || connection === undefined || has(loaded.source.data, onEndpoint)) return onEndpoint;
  const onConnection = `connections.${connection}.${field}`;
  return has(loaded.source.data, onConnection) ? onConnection : onEndpoint;
}

/** Whether plain data has a value at a dotted path with `[index]` steps. */
function has(data: unknown, path: string): boolean {
  let current = data;
  for (const step of path.split(/\.|(?=\[)/)) {
    if (typeof current !== 'object' || current === null) return false;
    const index = /^\[(\d+)\]$/.exec(step);
    const key = index ? Number(index[1]) : step;
    if (!(key in current)) return false;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current !== undefined;
}
