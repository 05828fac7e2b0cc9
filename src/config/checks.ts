/**
 * The checks that span fields, run on validated data: names are unique, references resolve,
 * selectors, schedules and XPath expressions parse, endpoints can play their role, and each
 * connector accepts its endpoint (its constructor runs; nothing connects). Together with the
 * schema they catch what starting the gateway would refuse.
 */
import { isLoopback } from '../admin/loopback.js';
import { tokenWeakness, weakTokenMessage } from '../admin/token-strength.js';
import { deliveryTimeOverrideOf } from '../jms/destination/destination-options.js';
import { parseDestination } from '../jms/destination/destination.js';
import { parseSchedule } from '../jms/schedule.js';
import { parseSelector } from '../jms/selector/index.js';
import { CompiledXPath } from '../jms/selector/xpath/compiled-xpath.js';
import { ConfigValidationError, type ConnectorContext } from '../spi/index.js';
import type { InternalEndpointConfig } from './gateway-config.js';
import type { ResolvedConnectorEndpoint } from './validate.js';
import type { Problem } from './yaml-source.js';

type Plain = Record<string, unknown>;
type InternalEndpoint = Partial<InternalEndpointConfig> & { type: 'jms' };
type Endpoint = InternalEndpoint | ResolvedConnectorEndpoint;

const isInternal = (endpoint: Endpoint | undefined): endpoint is InternalEndpoint => endpoint?.type === 'jms';
type Role = 'source' | 'target' | 'errorDestination';

const silent = { error() {}, warn() {}, info() {}, debug() {} };

/** The environment variable the admin token comes from. */
export const ADMIN_TOKEN_ENV = 'JMS_GATEWAY_ADMIN_TOKEN';

/** Problems in validated `data` (which may have holes where validation failed). */
export function checkConfig(data: Plain, env: Readonly<Record<string, string | undefined>>): Problem[] {
  const problems: Problem[] = [];
  const report = (path: string, message: string) => problems.push({ path, message });
  const engine = (data.engine ?? {}) as Plain;
  const autoCreate = engine.autoCreateDestinations !== false;
  const declared = checkDestinations((data.destinations ?? {}) as Plain, report);
  const references = (path: string, destination: unknown) => {
    if (typeof destination !== 'string' || declared.all.has(destination)) return;
    // The engine never auto-creates a `distributed/member` name: it must name a declared member.
    if (namesMember(destination)) {
      report(
        path,
        `destination '${destination}' names a member of a distributed destination ('distributed/member') that is not declared: declare the distributed destination with that member, or name a destination without '/'`,
      );
      return;
    }
    if (autoCreate) return;
    report(
      path,
      `destination '${destination}' is not declared under destinations: declare it, or set engine.autoCreateDestinations: true`,
    );
  };
  checkErrorDestinations((data.destinations ?? {}) as Plain, declared, report);
  checkBridges((data.bridges ?? []) as unknown[], references, declared.distributed, report);
  checkUsers(((data.security ?? {}) as Plain).users, report);
  checkHighAvailability(data, report);
  checkStore((data.store ?? {}) as Plain, report);
  const admin = (data.admin ?? {}) as Plain;
  const token = env[ADMIN_TOKEN_ENV];
  const weakness = admin.enabled !== false && token ? tokenWeakness(token) : undefined;
  if (weakness !== undefined) report('admin', weakTokenMessage(ADMIN_TOKEN_ENV, weakness));
  if (
    admin.enabled !== false &&
    typeof admin.host === 'string' &&
    !isLoopback(admin.host) &&
    !env[ADMIN_TOKEN_ENV]
  )
    report(
      'admin.host',
      `'${admin.host}' is not loopback, so the admin API needs a token: set the environment variable ${ADMIN_TOKEN_ENV}, or listen on 127.0.0.1`,
    );
  return problems;
}

/**
 * A PostgreSQL store needs its URL; the other stores take none (a URL there would be ignored),
 * and only the file store has body files.
 */
function checkStore(store: Plain, report: (path: string, message: string) => void): void {
  if (store.type === 'postgres') {
    if (typeof store.url !== 'string' || store.url === '')
      report(
        'store.url',
        "type 'postgres' needs a url: url: ${PG_URL} (postgres://user:password@host:5432/database)",
      );
    else if (!/^postgres(ql)?:\/\//.test(store.url))
      report('store.url', 'the url must start with postgres:// or postgresql://');
    if (store.memory === true)
      report('store.memory', "memory: true and type: 'postgres' contradict each other: keep one");
  } else if (store.url !== undefined) {
    report('store.url', "url is for type: 'postgres': set type: postgres, or remove url");
  }
  const fileStore = store.type !== 'postgres' && store.type !== 'memory' && store.memory !== true;
  if (fileStore) return;
  for (const key of ['largeBodyBytes', 'maxBytes'] as const) {
    if (store[key] !== undefined)
      report(`store.${key}`, `${key} is for the file store: remove it, or drop the other store type`);
  }
}

/** User names are unique: a second entry would leave it unclear which password counts. */
function checkUsers(users: unknown, report: (path: string, message: string) => void): void {
  if (!Array.isArray(users)) return;
  const seen = new Set<string>();
  users.forEach((user: unknown, index) => {
    const name = isPlain(user) ? user.name : undefined;
    if (typeof name !== 'string') return;
    if (seen.has(name))
      report(`security.users[${index}].name`, `user '${name}' is listed twice: keep one entry per user`);
    seen.add(name);
  });
}

/** Whether a `queue://x` or `topic://x` names a member of a distributed destination, as `distributed/member`. */
const namesMember = (uri: string): boolean => parseDestination(uri).name.includes('/');

const isPlain = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function forEachDestination(
  destinations: Plain,
  fn: (entry: Plain, path: string, kind: string) => void,
): void {
  for (const kind of ['queues', 'topics', 'distributedQueues', 'distributedTopics']) {
    const list = destinations[kind];
    if (!Array.isArray(list)) continue;
    list.forEach((entry, index) => {
      if (isPlain(entry)) fn(entry, `destinations.${kind}[${index}]`, kind);
    });
  }
}

/** The destinations a configuration declares, as `queue://x`. */
interface Declared {
  /** Every name a bridge may use: queues, topics, distributed destinations, members and their `name/member` aliases. */
  all: Set<string>;
  /** Distributed destinations, with their members' own names. */
  distributed: Map<string, string[]>;
  /** `name/member` aliases, with the member's own name. */
  aliases: Map<string, string>;
}

/** Checks names, schedules and options; returns what is declared. */
function checkDestinations(destinations: Plain, report: (path: string, message: string) => void): Declared {
  const declared: Declared = { all: new Set(), distributed: new Map(), aliases: new Map() };
  const first = new Map<string, string>();
  forEachDestination(destinations, (entry, path, kind) => {
    const scheme = kind.toLowerCase().includes('queue') ? 'queue' : 'topic';
    const name = entry.name;
    if (typeof name !== 'string') return;
    const uri = `${scheme}://${name}`;
    const distributed = kind.startsWith('distributed');
    const earlier = first.get(uri);
    if (earlier !== undefined) report(`${path}.name`, `'${uri}' is declared twice (first at ${earlier})`);
    else first.set(uri, path);
    declared.all.add(uri);
    checkDestinationOptions(entry, path, report);
    if (!distributed) return;
    if (isPlain(entry.memberOptions))
      checkDestinationOptions(entry.memberOptions, `${path}.memberOptions`, report);
    const members = Array.isArray(entry.members) ? entry.members : [];
    const seen = new Set<string>();
    const memberUris: string[] = [];
    declared.distributed.set(uri, memberUris);
    members.forEach((member, index) => {
      if (!isPlain(member) || typeof member.name !== 'string') return;
      if (member.name === name)
        report(`${path}.members[${index}].name`, `a member cannot have the distributed ${scheme}'s own name`);
      if (seen.has(member.name))
        report(`${path}.members[${index}].name`, `member '${member.name}' is listed twice`);
      seen.add(member.name);
      const memberUri = `${scheme}://${member.name}`;
      memberUris.push(memberUri);
      declared.all.add(memberUri);
      declared.all.add(`${uri}/${member.name}`);
      declared.aliases.set(`${uri}/${member.name}`, memberUri);
    });
    if (members.length === 0 && Array.isArray(entry.members))
      report(`${path}.members`, 'expected at least one member');
  });
  return declared;
}

/**
 * A destination's error destination (DLV-3) must be a declared queue or topic other than itself,
 * whatever `autoCreateDestinations` says: auto-creation is for the names clients use at run time,
 * and an error destination nobody declared is most likely a typo, whose messages would go to a
 * destination nobody watches (or, with nothing created, be deleted).
 */
function checkErrorDestinations(
  destinations: Plain,
  declared: Declared,
  report: (path: string, message: string) => void,
): void {
  forEachDestination(destinations, (entry, path, kind) => {
    const scheme = kind.toLowerCase().includes('queue') ? 'queue' : 'topic';
    const uri = `${scheme}://${String(entry.name)}`;
    // A distributed destination's memberOptions give every member the same error destination.
    const members = declared.distributed.get(uri);
    const check = (at: string, errorDestination: unknown) => {
      if (typeof errorDestination !== 'string') return;
      const problem =
        selfReference(errorDestination, uri, members) ?? errorDestinationProblem(errorDestination, declared);
      if (problem !== undefined) report(at, problem);
    };
    check(`${path}.errorDestination`, entry.errorDestination);
    if (isPlain(entry.memberOptions))
      check(`${path}.memberOptions.errorDestination`, entry.memberOptions.errorDestination);
  });
}

/** An error destination that is the destination itself or, in memberOptions, one of the members. */
function selfReference(
  name: string,
  uri: string,
  members: readonly string[] | undefined,
): string | undefined {
  const loop = 'its undeliverable messages would come straight back to it; name another queue or topic';
  if (members === undefined) return name === uri ? `is the destination itself: ${loop}` : undefined;
  return members.includes(name)
    ? `'${name}' is a member of this distributed destination: ${loop}`
    : undefined;
}

/** What is wrong with naming `name` as an error destination, whichever destination names it. */
function errorDestinationProblem(name: string, declared: Declared): string | undefined {
  const members = declared.distributed.get(name);
  if (members)
    return `'${name}' is a distributed destination: an error destination must be a queue or topic (name one of its members, e.g. '${members[0] ?? 'queue://member'}')`;
  const member = declared.aliases.get(name);
  if (member) return `'${name}' is a member's alias: name the member itself, '${member}'`;
  if (namesMember(name))
    return `'${name}' names a member of a distributed destination ('distributed/member'), and no such member is declared: name a declared queue or topic by its own name`;
  if (!declared.all.has(name))
    return `destination '${name}' is not declared under destinations: an error destination is never created on first use, so declare it (under destinations.${name.startsWith('topic://') ? 'topics' : 'queues'})`;
  return undefined;
}

/** The checks of one destination's options that span fields: a configured destination's, or one created through the admin API. */
export function checkDestinationOptions(
  options: Plain,
  path: string,
  report: (path: string, message: string) => void,
): void {
  if (typeof options.timeToDeliverOverride === 'string') {
    const override = deliveryTimeOverrideOf(options.timeToDeliverOverride);
    if (override.kind === 'schedule') {
      try {
        parseSchedule(override.schedule);
      } catch (error) {
        report(`${path}.timeToDeliverOverride`, `not a valid schedule: ${messageOf(error)}`);
      }
    } else if (override.kind === 'relative' && override.ms < 0) {
      report(
        `${path}.timeToDeliverOverride`,
        `${override.ms} ms: expected -1 (no override), ms >= 0 or a schedule`,
      );
    }
  }
  const policy = options.expirationPolicy;
  if (isPlain(policy) && policy.fields !== undefined && policy.policy !== 'log')
    report(`${path}.expirationPolicy.fields`, "only applies with policy: 'log'");
  // Pairs within one mapping are the schema's (`atLeast`); these span two.
  const thresholds = options.thresholds;
  if (isPlain(thresholds))
    for (const unit of ['messages', 'bytes']) {
      const high = thresholds[`${unit}High`];
      const maximum = options[`${unit}Maximum`];
      if (typeof high === 'number' && typeof maximum === 'number' && high >= maximum)
        report(
          `${path}.thresholds.${unit}High`,
          `expected less than ${unit}Maximum (${maximum}): flow control would never start, the quota refuses sends first`,
        );
    }
  const backoff = options.redeliveryBackoff;
  const delay = options.redeliveryDelayOverride;
  if (isPlain(backoff) && typeof backoff.maximumMs === 'number' && typeof delay === 'number')
    if (delay > backoff.maximumMs)
      report(
        `${path}.redeliveryBackoff.maximumMs`,
        `expected at least redeliveryDelayOverride (${delay}): the cap would be below the first delay`,
      );
}

function checkBridges(
  bridges: unknown[],
  references: (path: string, destination: unknown) => void,
  distributed: ReadonlyMap<string, readonly string[]>,
  report: (path: string, message: string) => void,
): void {
  const names = new Map<string, string>();
  const clientIds = new Map<string, string>();
  bridges.forEach((entry, index) => {
    if (!isPlain(entry)) return;
    const path = `bridges[${index}]`;
    if (typeof entry.name === 'string') {
      const earlier = names.get(entry.name);
      if (earlier !== undefined)
        report(`${path}.name`, `bridge '${entry.name}' is declared twice (first at ${earlier})`);
      else names.set(entry.name, path);
    }
    const source = entry.source as Endpoint | undefined;
    const target = entry.target as Endpoint | undefined;
    const errorDestination = entry.errorDestination as Endpoint | undefined;
    const context: ConnectorContext = {
      name: typeof entry.name === 'string' ? entry.name : `bridge-${index}`,
      logger: silent,
    };
    for (const [role, endpoint] of [
      ['source', source],
      ['target', target],
      ['errorDestination', errorDestination],
    ] as const) {
      if (endpoint === undefined) continue;
      const at = `${path}.${role}`;
      if (isInternal(endpoint)) references(`${at}.destination`, endpoint.destination);
      else {
        const name = role === 'errorDestination' ? `${context.name}-errors` : context.name;
        checkConnectorEndpoint(endpoint, role, at, { ...context, name }, report);
      }
    }
    const selector = entry.selector;
    if (isInternal(source)) {
      if (typeof selector === 'string' && typeof source.selector === 'string')
        report(
          `${path}.selector`,
          'the source has a selector too: keep one (for a jms source they mean the same)',
        );
      checkSelector(source.selector, `${path}.source.selector`, report);
      if (source.durable !== undefined) {
        if (typeof source.destination === 'string' && !source.destination.startsWith('topic://'))
          report(`${path}.source.durable`, 'a durable subscription needs a topic source (topic://name)');
        else if (typeof source.destination === 'string' && distributed.has(source.destination))
          report(
            `${path}.source.durable`,
            `a durable subscription cannot be made on distributed topic '${source.destination}': make it on one of its members ('${source.destination}/member')`,
          );
        const clientId = source.durable.clientId;
        const earlier = clientIds.get(clientId);
        if (earlier !== undefined)
          report(
            `${path}.source.durable.clientId`,
            `client id '${clientId}' is already used by ${earlier}: a client id belongs to one connection at a time`,
          );
        else clientIds.set(clientId, path);
      }
      if (
        isInternal(target) &&
        typeof source.destination === 'string' &&
        source.destination === target.destination
      )
        report(`${path}.target.destination`, 'is the source destination too: the bridge would loop');
    }
    checkSelector(selector, `${path}.selector`, report);
  });
}

function checkSelector(
  selector: unknown,
  path: string,
  report: (path: string, message: string) => void,
): void {
  if (typeof selector !== 'string') return;
  try {
    parseSelector(selector);
  } catch (error) {
    report(path, `not a valid selector: ${messageOf(error)}`);
  }
}

/**
 * The connector must play the role, and accept the configuration: its source or sink is
 * constructed (connectors check fields that depend on each other there) and closed unused.
 */
function checkConnectorEndpoint(
  endpoint: ResolvedConnectorEndpoint,
  role: Role,
  path: string,
  context: ConnectorContext,
  report: (path: string, message: string) => void,
): void {
  const { connector } = endpoint;
  if (typeof connector[role === 'source' ? 'createSource' : 'createSink'] !== 'function') {
    report(
      `${path}.type`,
      `connector '${connector.type}' cannot be a ${role === 'source' ? 'source' : 'target'}`,
    );
    return;
  }
  if (endpoint.config === undefined) return;
  const key = (endpoint.config as Plain).key;
  // The Kafka sink keys records by an XPath the gateway evaluates (connectors/kafka spec): compile it now.
  if (role !== 'source' && isPlain(key) && key.from === 'xpath' && typeof key.expression === 'string') {
    try {
      new CompiledXPath(key.expression);
    } catch (error) {
      report(`${path}.key.expression`, messageOf(error));
    }
  }
  try {
    const made =
      role === 'source'
        ? connector.createSource!(endpoint.config, context)
        : connector.createSink!(endpoint.config, context);
    void made.close().catch(() => undefined);
  } catch (error) {
    if (error instanceof ConfigValidationError) report(`${path}.${error.path}`, error.expected);
    else report(path, messageOf(error));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** High availability needs a shared store, and a lease renewed more often than it lasts. */
function checkHighAvailability(data: Plain, report: (path: string, message: string) => void): void {
  const ha = (data.ha ?? {}) as Plain;
  if (ha.enabled !== true) return;
  const store = (data.store ?? {}) as Plain;
  if (store.type !== 'postgres')
    report(
      'ha.enabled',
      'high availability needs a store the instances share: set store.type: postgres (the file store belongs to one process)',
    );
  const leaseMs = typeof ha.leaseMs === 'number' ? ha.leaseMs : 6_000;
  const renewEveryMs = typeof ha.renewEveryMs === 'number' ? ha.renewEveryMs : 2_000;
  if (renewEveryMs >= leaseMs)
    report(
      'ha.renewEveryMs',
      `the lease is renewed every ${renewEveryMs} ms but lasts ${leaseMs} ms: renew more often than it lasts (a third of ha.leaseMs is usual)`,
    );
}
