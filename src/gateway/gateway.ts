/**
 * The gateway: from a validated configuration, the store, the engine with its destinations, the
 * bridges between them and the brokers, and the admin API; started together, stopped in order
 * (bridges drain first, then the admin API, the engine and the store close). A reload applies a
 * new configuration's bridges and new destinations while it runs.
 */
import { mkdir } from 'node:fs/promises';
import { sep } from 'node:path';
import { type AdminServer, startAdminServer } from '../admin/server.js';
import { type BridgeControl, type BridgeView, statusView } from '../admin/bridge-control.js';
import type { FailedBridge, ReadinessReport } from '../admin/readiness.js';
import type { ReloadResult } from '../admin/routes.js';
import {
  BRIDGE_DEFAULTS,
  Bridge,
  type BridgeConfig,
  type DuplicateWindow,
  MemoryDuplicateWindow,
  StoreDuplicateWindow,
} from '../bridge/index.js';
import {
  type BridgeSpec,
  type DestinationConfig,
  type DistributedDestinationConfig,
  type GatewayConfig,
  describeEndpoint,
  isInternalEndpoint,
} from '../config/gateway-config.js';
import { ADMIN_TOKEN_ENV } from '../config/checks.js';
import { ConnectionFactory } from '../jms/client/connection-factory.js';
import { type Clock, systemClock } from '../jms/clock.js';
import { Queue, Topic } from '../jms/destination/destination.js';
import { JmsEngine } from '../jms/engine.js';
import { IllegalStateError, InvalidDestinationError } from '../jms/errors.js';
import { setXPathLimitListener, setXPathLimits } from '../jms/selector/xpath/xpath-limits.js';
import { type MessageStore, keepsForwardedIds } from '../jms/store-port.js';
import { FileStore } from '../store/file-store.js';
import { MemoryStore } from '../store/memory-store.js';
import type { WriteFence } from '../store/lease.js';
import { PostgresStore, type PostgresStoreOptions } from '../store/postgres-store.js';
import { failureOf } from './bridge-failures.js';
import type { HaAdmin } from '../admin/ha-routes.js';
import { type EndpointServices, createSink, createSource } from './endpoints.js';
import { type GatewayLogger, redactingLogger, silentGatewayLogger } from './logger.js';
import { SecretMask } from './secret-mask.js';
import { type ReloadPlan, canonical, planReload } from './reload-plan.js';
import { createXPathEvaluator } from '../spi/xpath-evaluator.js';

/** What `start` takes besides the configuration. */
export interface GatewayStartOptions {
  /** Overrides `admin.port` (`run --admin-port`; 0 picks a free port). */
  readonly adminPort?: number;
  /** The admin API's bearer token. Default: the environment variable JMS_GATEWAY_ADMIN_TOKEN. */
  readonly adminToken?: string;
  /** Time for the engine and the bridges; tests pass a fake clock. Default: the system clock. */
  readonly clock?: Clock;
  /**
   * The credentials to mask in logs and the admin API; the gateway adds the configuration's and
   * the admin token. The CLI passes the one its root logger masks with, so both agree. Default: a new one.
   */
  readonly mask?: SecretMask;
  /** Use this store instead of the configured one (tests, embedding). */
  readonly store?: MessageStore;
  /**
   * Reads and checks the configuration again (`checkConfigFile` on the file it came from), for
   * `reload()`, SIGHUP and `POST /reload`. Without it the gateway cannot reload.
   */
  readonly loadConfig?: () => Promise<ReloadSource>;
  /** One instance of an active/standby group: the admin API adds `/ha` and the role. */
  readonly ha?: HaAdmin;
}

/** A configuration to reload, or every problem found in it (`file:line:col: path: message`). */
export type ReloadSource =
  | { readonly ok: true; readonly config: GatewayConfig }
  | { readonly ok: false; readonly errors: readonly string[] };

/** A bridge as the admin API shows it. */
export interface GatewayBridgeView extends BridgeView {
  /** The source, e.g. `amqp queue 'orders'` or `queue://orders` (no secrets). */
  readonly source: string;
  readonly target: string;
}

/** The bridges as the admin API controls them, with their endpoints in the list. */
export interface GatewayBridgeControl extends BridgeControl {
  list(): GatewayBridgeView[];
}

/** A problem found while building from a configuration, with the path of the item it concerns. */
export interface BuildProblem {
  readonly path: string;
  readonly message: string;
}

interface BridgeEntry {
  readonly spec: BridgeSpec;
  readonly bridge: Bridge;
}

/** Time a stop keeps for closing the admin API, engine and store after the bridges drained. */
function closeReserveMs(deadlineMs: number): number {
  return Math.min(2_000, Math.floor(deadlineMs / 5));
}

/** A running gateway. */
export class Gateway {
  readonly engine: JmsEngine;
  /** A connection factory with the configured settings, for programs that embed the gateway. */
  readonly connectionFactory: ConnectionFactory;
  /** The configuration applied last: its bridges and destinations run. */
  #config: GatewayConfig;
  /** The configuration the process started with: store, engine and admin settings come from it. */
  readonly #started: GatewayConfig;
  /** Every secret of every configuration applied, masked in logs and views. */
  readonly #mask: SecretMask;
  readonly #logger: GatewayLogger;
  /** The root logger (redacting), for the bridges a reload builds. */
  readonly #rootLogger: GatewayLogger;
  readonly #clock: Clock;
  readonly #loadConfig: (() => Promise<ReloadSource>) | undefined;
  readonly #bridges: Map<string, BridgeEntry>;
  readonly #starts = new Set<Promise<void>>();
  /** Since when and why each failed bridge failed, for `/ready`. */
  #admin: AdminServer | undefined;
  #stopping: Promise<{ clean: boolean }> | undefined;
  #reloading: Promise<ReloadResult> | undefined;

  private constructor(
    config: GatewayConfig,
    engine: JmsEngine,
    bridges: Map<string, BridgeEntry>,
    services: {
      logger: GatewayLogger;
      mask: SecretMask;
      clock: Clock;
      loadConfig: (() => Promise<ReloadSource>) | undefined;
    },
  ) {
    this.#config = config;
    this.#started = config;
    this.engine = engine;
    this.#bridges = bridges;
    this.#rootLogger = services.logger;
    this.#logger = services.logger.child({ component: 'gateway' });
    this.#mask = services.mask;
    this.#clock = services.clock;
    this.#loadConfig = services.loadConfig;
    this.connectionFactory = new ConnectionFactory(engine, config.connectionFactory);
  }

  /**
   * Opens the store and the engine, creates the destinations, builds the bridges, starts the
   * admin API and then the bridges (which connect in the background, retrying with backoff).
   * Anything that fails before that closes what was opened and rejects.
   */
  static async start(
    config: GatewayConfig,
    logger: GatewayLogger,
    options: GatewayStartOptions = {},
  ): Promise<Gateway> {
    const mask = options.mask ?? new SecretMask();
    mask.add(config.secrets);
    // Not a configuration secret, but it must never reach a log either.
    const token = options.adminToken ?? process.env[ADMIN_TOKEN_ENV];
    if (token) mask.add([token]);
    logger = redactingLogger(logger, mask);
    const clock = options.clock ?? systemClock;
    const store = options.store ?? (await openStore(config, logger));
    let engine: JmsEngine;
    try {
      applyXPathLimits(config, logger.child({ component: 'selector' }));
      engine = await openEngine(config, store, clock, logger.child({ component: 'engine' }));
    } catch (error) {
      await store.close().catch(() => undefined);
      throw error;
    }
    let gateway: Gateway;
    try {
      await createDestinations(engine, config, logger.child({ component: 'gateway' }));
      const bridges = buildBridges(engine, config, clock, logger);
      gateway = new Gateway(config, engine, bridges, {
        logger,
        mask,
        clock,
        loadConfig: options.loadConfig,
      });
      if (config.admin.enabled)
        await gateway.#startAdmin(options, token, store, logger.child({ component: 'admin' }));
    } catch (error) {
      await engine.close().catch(() => undefined);
      throw error;
    }
    for (const { spec, bridge } of gateway.#bridges.values()) if (spec.autoStart) gateway.#start(bridge);
    return gateway;
  }

  async #startAdmin(
    options: GatewayStartOptions,
    token: string | undefined,
    store: MessageStore,
    logger: GatewayLogger,
  ): Promise<void> {
    this.#admin = await startAdminServer({
      engine: this.engine,
      host: this.#config.admin.host,
      port: options.adminPort ?? this.#config.admin.port,
      token,
      bridges: this.control,
      ...(this.#loadConfig ? { reload: () => this.reload(), previewReload: () => this.previewReload() } : {}),
      ready: () => this.readiness(),
      ...(options.ha ? { ha: options.ha } : {}),
      ...(store instanceof FileStore ? { storeUsage: () => store.usage() } : {}),
      logger,
    });
  }

  /**
   * Builds everything `start` would on an in-memory engine, without the store, the admin API or
   * any connection, and reports what fails with the path of its item (`validate`'s last check).
   */
  static async check(config: GatewayConfig): Promise<BuildProblem[]> {
    const problems: BuildProblem[] = [];
    const engine = await openEngine(config, new MemoryStore(), systemClock, silentGatewayLogger);
    try {
      await createDestinations(engine, config, silentGatewayLogger, (path, error) =>
        problems.push({ path, message: messageOf(error) }),
      );
      buildBridges(engine, config, systemClock, silentGatewayLogger, (path, error) =>
        problems.push({ path, message: messageOf(error) }),
      );
    } finally {
      await engine.close();
    }
    return problems;
  }

  /** Whether a reload is running now (another one is refused until it finished). */
  get reloading(): boolean {
    return this.#reloading !== undefined;
  }

  /** Resolves once no reload is running (at once when none is), whatever its outcome. */
  reloadFinished(): Promise<void> {
    return this.#reloading
      ? this.#reloading.then(
          () => undefined,
          () => undefined,
        )
      : Promise.resolve();
  }

  /** The shutdown deadline of the configuration applied last (a reload may change it). */
  get shutdownDeadlineMs(): number {
    return this.#config.shutdown.deadlineMs;
  }

  /**
   * Reads the configuration again and applies it. A configuration with problems changes nothing:
   * they are returned (and logged at error level). Otherwise new destinations are created,
   * removed bridges stop, changed ones restart one at a time (each drains its in-flight messages
   * as at shutdown, then starts with its new configuration), added ones start, and unchanged ones
   * are not touched. What a running gateway cannot apply is returned as warnings. Rejects with
   * an IllegalStateError while another reload runs, while stopping, or without `loadConfig`.
   */
  reload(): Promise<ReloadResult> {
    const load = this.#loadConfig;
    if (!load)
      return Promise.reject(
        new IllegalStateError('this gateway was started without a configuration file to reload'),
      );
    if (this.#stopping) return Promise.reject(new IllegalStateError('the gateway is stopping'));
    if (this.#reloading)
      return Promise.reject(
        new IllegalStateError('a reload is running already: try again once it has finished'),
      );
    const reloading = this.#reload(load).finally(() => {
      this.#reloading = undefined;
    });
    this.#reloading = reloading;
    return reloading;
  }

  /**
   * What a reload would do now, without doing it (`GET /reload`, the console's preview): the
   * file's problems, or the bridges it would add, remove and restart and what changed in them.
   * Problems found only while building the bridges show when the reload is applied.
   */
  async previewReload(): Promise<ReloadResult> {
    const load = this.#loadConfig;
    if (!load) throw new IllegalStateError('this gateway was started without a configuration file to reload');
    let source: ReloadSource;
    try {
      source = await load();
    } catch (error) {
      source = { ok: false, errors: [`cannot read the configuration: ${messageOf(error)}`] };
    }
    if (!source.ok) return notReloaded(source.errors);
    this.#mask.add(source.config.secrets);
    const plan = planReload(
      {
        current: this.#config,
        started: this.#started,
        destinationOptions: (id) => this.engine.destinationOptions(id),
      },
      source.config,
    );
    return {
      reloaded: false,
      added: plan.added.map((spec) => spec.name),
      removed: [...plan.removed],
      restarted: plan.changed.map(({ spec }) => spec.name),
      unchanged: plan.unchanged.map((spec) => spec.name),
      created: [...plan.create],
      changes: Object.fromEntries(plan.changed.map(({ spec, changes }) => [spec.name, [...changes]])),
      warnings: [...plan.warnings],
      errors: [],
    };
  }

  async #reload(load: () => Promise<ReloadSource>): Promise<ReloadResult> {
    this.#logger.info({ config: this.#config.file }, 'reloading configuration');
    let source: ReloadSource;
    try {
      source = await load();
    } catch (error) {
      source = { ok: false, errors: [`cannot read the configuration: ${messageOf(error)}`] };
    }
    if (!source.ok) return this.#refuse(source.errors, 'the new configuration has problems');
    const next = source.config;
    this.#mask.add(next.secrets);
    const plan = planReload(
      {
        current: this.#config,
        started: this.#started,
        destinationOptions: (id) => this.engine.destinationOptions(id),
      },
      next,
    );
    // Everything that can fail is done before any bridge is touched: the old bridges keep running.
    const problems: string[] = [];
    const collect: OnProblem = (path, error) => problems.push(`${next.file}: ${path}: ${messageOf(error)}`);
    await createDestinations(this.engine, next, this.#logger, collect, new Set(plan.create));
    const built = buildBridges(
      this.engine,
      next,
      this.#clock,
      this.#rootLogger,
      collect,
      new Set([...plan.changed.map(({ spec }) => spec.name), ...plan.added.map((spec) => spec.name)]),
    );
    if (problems.length > 0) return this.#refuse(problems, 'the new configuration cannot be applied');
    const result = await this.#apply(plan, built);
    if (this.#stopping) {
      result.errors.push('the gateway began stopping during the reload: what was not done yet was left');
      return { ...result, reloaded: false };
    }
    this.#config = next;
    const order = new Map(this.#bridges);
    this.#bridges.clear();
    for (const spec of next.bridges) {
      const entry = order.get(spec.name);
      if (entry) this.#bridges.set(spec.name, entry);
    }
    const { added, removed, restarted, unchanged, created } = result;
    this.#logger.info({ added, removed, restarted, unchanged, created }, 'configuration reloaded');
    for (const warning of result.warnings) this.#logger.warn({ warning }, 'reload did not apply a change');
    return result;
  }

  /** Stops, restarts and starts bridges as planned; stops early when the gateway stops. */
  async #apply(plan: ReloadPlan, built: Map<string, BridgeEntry>): Promise<ReloadResult> {
    const result: ReloadResult = {
      reloaded: true,
      added: [],
      removed: [],
      restarted: [],
      unchanged: plan.unchanged.map((spec) => spec.name),
      created: [...plan.create],
      changes: {},
      warnings: [...plan.warnings],
      errors: [],
    };
    for (const spec of plan.unchanged) {
      const entry = this.#bridges.get(spec.name);
      // autoStart may differ: it only decides at start, so the running bridge stays as it is.
      if (entry) this.#bridges.set(spec.name, { spec, bridge: entry.bridge });
    }
    for (const name of plan.removed) {
      const entry = this.#bridges.get(name);
      if (this.#stopping || !entry) continue;
      this.#logger.info({ bridge: name }, 'stopping bridge: it is no longer configured');
      await entry.bridge.stop();
      if (this.#stopping) return result;
      if (this.#bridges.get(name) === entry) this.#bridges.delete(name);
      result.removed.push(name);
    }
    for (const { spec, changes } of plan.changed) {
      const old = this.#bridges.get(spec.name);
      const replacement = built.get(spec.name)!;
      if (this.#stopping) return result;
      const status = old?.bridge.status ?? 'stopped';
      this.#logger.info({ bridge: spec.name, changes }, 'restarting bridge with its new configuration');
      await old?.bridge.stop();
      if (this.#stopping) return result;
      this.#bridges.set(spec.name, replacement);
      // It runs as the old one did: a paused bridge stays paused, one never started stays stopped.
      if (status !== 'stopped' || spec.autoStart) {
        this.#start(replacement.bridge);
        if (status === 'paused') await replacement.bridge.pause();
      }
      result.restarted.push(spec.name);
      result.changes[spec.name] = [...changes];
    }
    for (const spec of plan.added) {
      if (this.#stopping) return result;
      const entry = built.get(spec.name)!;
      this.#bridges.set(spec.name, entry);
      if (spec.autoStart) this.#start(entry.bridge);
      result.added.push(spec.name);
    }
    return result;
  }

  #refuse(errors: readonly string[], why: string): ReloadResult {
    this.#logger.error(
      { config: this.#config.file, problems: errors },
      `configuration not reloaded: ${why}; the running configuration is kept`,
    );
    return notReloaded(errors);
  }

  /**
   * Whether the gateway serves (`GET /ready`): not while stopping, nor while a bridge whose
   * `readiness` is `required` is failed. Every failed bridge is listed with its reason and since
   * when, so an operator (or an orchestrator's probe log) sees what to fix.
   */
  readiness(): ReadinessReport {
    if (this.#stopping) return { ready: false, reason: 'the gateway is stopping', failed: [] };
    const failed: FailedBridge[] = [];
    for (const { spec, bridge } of this.#bridges.values()) {
      const failure = failureOf(bridge);
      if (failure === undefined) continue;
      failed.push({
        bridge: bridge.name,
        status: 'failed',
        statusReason: failure.kind,
        reason: this.#mask.mask(failure.reason),
        since: new Date(failure.since).toISOString(),
        readiness: spec.readiness,
      });
    }
    return { ready: failed.every((bridge) => bridge.readiness === 'ignored'), failed };
  }

  /** The admin API's address (`http://127.0.0.1:8161`), when it runs. */
  get adminUrl(): string | undefined {
    return this.#admin?.url;
  }

  /** Bridge names, in configuration order. */
  get bridgeNames(): string[] {
    return [...this.#bridges.keys()];
  }

  /** A bridge by name (status, counters, listeners), for tests and embedding programs. */
  bridge(name: string): Bridge | undefined {
    return this.#bridges.get(name)?.bridge;
  }

  /** The bridges as the admin API controls them (BRG-7). */
  get control(): GatewayBridgeControl {
    return {
      list: () => [...this.#bridges.values()].map((entry) => viewOf(entry, this.#mask)),
      pause: async (name) => this.#entry(name).bridge.pause(),
      resume: async (name) => this.#entry(name).bridge.resume(),
      restart: async (name) => {
        const entry = this.#entry(name);
        if (this.#stopping) throw new IllegalStateError('the gateway is stopping');
        this.#logger.info({ bridge: name }, 'restarting bridge');
        await entry.bridge.stop();
        // A reload may have replaced or removed it meanwhile: the replacement runs, not this one.
        if (this.#bridges.get(name) === entry) this.#start(entry.bridge);
      },
    };
  }

  /**
   * Stops the bridges, letting in-flight messages finish (each bridge gives back what is left at
   * its stop timeout, which defaults to fit the deadline), then closes the admin API, the engine
   * and the store. Past `deadlineMs` it closes anyway and reports `clean: false`.
   */
  stop(
    deadlineMs: number = this.#config.shutdown.deadlineMs,
    options: { drain?: boolean } = {},
  ): Promise<{ clean: boolean }> {
    return (this.#stopping ??= this.#stop(deadlineMs, options.drain ?? true));
  }

  async #stop(deadlineMs: number, drain: boolean): Promise<{ clean: boolean }> {
    const inFlight = [...this.#bridges.values()].reduce((n, e) => n + e.bridge.counters.inFlight, 0);
    this.#logger.info({ deadlineMs, bridges: this.#bridges.size, inFlight }, 'stopping bridges');
    const stopped = Promise.allSettled([
      ...[...this.#bridges.values()].map(async ({ bridge }) => {
        await bridge.stop({ drain });
      }),
      // A reload under way ends at its next step; the bridge it is stopping is one of the above.
      ...(this.#reloading ? [this.#reloading] : []),
    ]);
    // The deadline runs on the gateway's clock, so a test moves past it instead of waiting it out.
    // The system clock's timers do not keep the process alive, and a bridge stuck in a send may
    // hold nothing that does: the idle interval keeps the process up until the stop has ended.
    const keepAlive = setInterval(() => {}, 60_000);
    let timer: unknown;
    const clean = await Promise.race([
      stopped.then(() => true),
      new Promise<boolean>((resolve) => (timer = this.#clock.setTimer(() => resolve(false), deadlineMs))),
    ]);
    this.#clock.clearTimer(timer);
    if (!clean) {
      const running = [...this.#bridges.values()]
        .filter(({ bridge }) => bridge.status !== 'stopped')
        .map(({ bridge }) => bridge.name);
      this.#logger.error(
        { bridges: running, deadlineMs },
        'bridges did not stop within the shutdown deadline: closing anyway (unsettled messages are redelivered after restart)',
      );
    }
    try {
      await Promise.allSettled([...this.#starts]);
      await this.#admin?.close();
      await this.engine.close();
    } finally {
      clearInterval(keepAlive);
    }
    return { clean };
  }

  #entry(name: string): BridgeEntry {
    const entry = this.#bridges.get(name);
    if (!entry) throw new IllegalStateError(`there is no bridge '${name}'`);
    return entry;
  }

  #start(bridge: Bridge): void {
    // Stop has collected the bridges to stop: one started now would be left running.
    if (this.#stopping) return;
    const starting = bridge
      .start()
      .catch((error: unknown) =>
        this.#logger.error({ bridge: bridge.name, err: error }, 'bridge did not start'),
      )
      .finally(() => this.#starts.delete(starting));
    this.#starts.add(starting);
  }
}

function viewOf({ spec, bridge }: BridgeEntry, mask: SecretMask): GatewayBridgeView {
  const { lastError, ...counters } = bridge.counters;
  return {
    name: bridge.name,
    status: bridge.status,
    statusReport: statusView(bridge.statusReport, (text) => mask.mask(text)),
    counters,
    latency: bridge.latency,
    lastError: lastError === undefined ? undefined : mask.mask(lastError.message),
    source: mask.mask(describeEndpoint(spec.source)),
    target: mask.mask(describeEndpoint(spec.target)),
  };
}

/**
 * The configured store. `fence`: an instance of an active/standby group, whose writes are checked
 * against its lease (the PostgreSQL store only).
 */
export async function openStore(
  config: GatewayConfig,
  logger: GatewayLogger,
  fence?: WriteFence,
): Promise<MessageStore> {
  if (config.store.memory || config.store.type === 'memory') return new MemoryStore();
  if (config.store.type === 'postgres')
    return PostgresStore.open({
      ...postgresStoreOptions(config, logger),
      ...(fence === undefined ? {} : { fence }),
    });
  await mkdir(config.store.path, { recursive: true });
  // A path ending in the separator is a directory to the file store: `gateway.db` goes inside.
  const path = config.store.path.endsWith(sep) ? config.store.path : `${config.store.path}${sep}`;
  return FileStore.open({
    path,
    synchronous: config.store.synchronous,
    ...(config.store.largeBodyBytes === undefined ? {} : { largeBodyBytes: config.store.largeBodyBytes }),
    ...(config.store.maxBytes === undefined ? {} : { maxBytes: config.store.maxBytes }),
    logger: logger.child({ component: 'store' }),
  });
}

/** The PostgreSQL store's options from the configuration. */
export function postgresStoreOptions(config: GatewayConfig, logger: GatewayLogger): PostgresStoreOptions {
  return {
    url: config.store.url ?? '',
    ...(config.store.schema === undefined ? {} : { schema: config.store.schema }),
    ...(config.store.migrate === undefined ? {} : { migrate: config.store.migrate }),
    ...(config.store.connectAttempts === undefined ? {} : { connectAttempts: config.store.connectAttempts }),
    logger: logger.child({ component: 'store' }),
  };
}

/**
 * Sets the process-wide XPath bounds from `engine.xpath`, and logs each message they stop at
 * debug: it is per message, and the message itself is where the docs say (not selected).
 */
function applyXPathLimits(config: GatewayConfig, logger: GatewayLogger): void {
  setXPathLimits(config.engine.xpath);
  setXPathLimitListener(({ limit, expression }) =>
    logger.debug(
      expression === undefined ? { limit } : { limit, expression },
      'xpath limit exceeded: no XPath selector selects the message',
    ),
  );
}

function openEngine(
  config: GatewayConfig,
  store: MessageStore,
  clock: Clock,
  logger: GatewayLogger,
): Promise<JmsEngine> {
  const { throttling, quota } = config.engine;
  return JmsEngine.open({
    store,
    clock,
    logger,
    autoCreateDestinations: config.engine.autoCreateDestinations,
    expirationScanIntervalMs: config.engine.expirationScanIntervalMs,
    ...(config.security.users === undefined ? {} : { users: config.security.users }),
    quota,
    throttling: throttling.enabled
      ? {
          serverThreshold: throttling.serverThreshold,
          destinationThreshold: throttling.destinationThreshold,
          lag: throttling.lag,
        }
      : false,
  });
}

type OnProblem = (path: string, error: unknown) => void;

const rethrow: OnProblem = (path, error) => {
  throw new IllegalStateError(`cannot build ${path}: ${messageOf(error)}`, { cause: error });
};

/**
 * Creates the declared destinations. One that exists already (made by an earlier run and kept in
 * the store) keeps its settings: the engine does not change a live destination's settings, so a
 * difference is logged. With `only` (ids like `queue://name`), just those: a reload creates the
 * ones its plan found missing.
 */
async function createDestinations(
  engine: JmsEngine,
  config: GatewayConfig,
  logger: GatewayLogger,
  onProblem: OnProblem = rethrow,
  only?: ReadonlySet<string>,
): Promise<void> {
  const plain: [string, 'queue' | 'topic', readonly DestinationConfig[]][] = [
    ['queues', 'queue', config.destinations.queues],
    ['topics', 'topic', config.destinations.topics],
  ];
  for (const [key, kind, list] of plain) {
    for (const [index, destination] of list.entries()) {
      const handle = kind === 'queue' ? new Queue(destination.name) : new Topic(destination.name);
      if (only && !only.has(handle.toString())) continue;
      try {
        const existing = engine.destinationOptions(handle);
        if (existing !== undefined && canonical(existing) !== canonical(destination.options))
          logger.warn(
            { destination: handle.toString() },
            'destination exists in the store with other settings; it keeps them (delete it through the admin API and restart to apply the configured ones)',
          );
        if (kind === 'queue') await engine.createQueue(destination.name, destination.options);
        else await engine.createTopic(destination.name, destination.options);
      } catch (error) {
        onProblem(`destinations.${key}[${index}]`, error);
      }
    }
  }
  const distributed: [string, 'queue' | 'topic', readonly DistributedDestinationConfig[]][] = [
    ['distributedQueues', 'queue', config.destinations.distributedQueues],
    ['distributedTopics', 'topic', config.destinations.distributedTopics],
  ];
  for (const [key, kind, list] of distributed) {
    for (const [index, destination] of list.entries()) {
      if (only && !only.has(`${kind}://${destination.name}`)) continue;
      try {
        await engine.createDistributedDestination(kind, destination.name, destination.members, {
          loadBalancing: destination.loadBalancing,
          memberOptions: destination.memberOptions,
        });
      } catch (error) {
        // Recovered from the store by an earlier run: it is there already.
        if (error instanceof InvalidDestinationError && /already exists/.test(error.message)) continue;
        onProblem(`destinations.${key}[${index}]`, error);
      }
    }
  }
}

/**
 * An exactly-once bridge's duplicate window: kept in the store when the store can keep it (the
 * file store), so a restart of the bridge or the gateway still recognises what was forwarded;
 * in memory otherwise (`store.memory`). Named after the bridge: a reload that restarts a bridge
 * finds its window again.
 */
function duplicateWindowFor(spec: BridgeSpec, store: MessageStore, clock: Clock): DuplicateWindow {
  const bounds = {
    maxEntries: spec.duplicateWindow.maxEntries,
    ...(spec.duplicateWindow.maxAgeMs === undefined
      ? {}
      : { maxAgeMs: spec.duplicateWindow.maxAgeMs, clock }),
  };
  return keepsForwardedIds(store)
    ? new StoreDuplicateWindow({ ...bounds, store, name: spec.name })
    : new MemoryDuplicateWindow(bounds);
}

/** Constructs every bridge, or those named in `only` (nothing connects until it starts). */
function buildBridges(
  engine: JmsEngine,
  config: GatewayConfig,
  clock: Clock,
  logger: GatewayLogger,
  onProblem: OnProblem = rethrow,
  only?: ReadonlySet<string>,
): Map<string, BridgeEntry> {
  const services: EndpointServices = {
    engine,
    logger,
    sendTimeoutMs: config.connectionFactory.sendTimeout,
    evaluateXPath: createXPathEvaluator(),
    clock,
  };
  const deadlineMs = config.shutdown.deadlineMs;
  const bridges = new Map<string, BridgeEntry>();
  for (const [index, spec] of config.bridges.entries()) {
    if (only && !only.has(spec.name)) continue;
    try {
      const bridgeLogger = logger.child({ component: 'bridge' });
      const bridge = new Bridge(bridgeConfig(spec, services, deadlineMs - closeReserveMs(deadlineMs)), {
        clock,
        logger: bridgeLogger,
        ...(spec.qos === 'exactly-once'
          ? {
              duplicateWindow: duplicateWindowFor(spec, engine.store, clock),
            }
          : {}),
      });
      bridges.set(spec.name, { spec, bridge });
    } catch (error) {
      onProblem(`bridges[${index}]`, error);
    }
  }
  return bridges;
}

function bridgeConfig(spec: BridgeSpec, services: EndpointServices, stopTimeoutMs: number): BridgeConfig {
  const internalSource = isInternalEndpoint(spec.source);
  // On a jms source the bridge selector is the consumer's, so non-matching queue messages stay (BRG-3).
  const sourceSelector = internalSource ? (spec.source.selector ?? spec.selector) : undefined;
  return {
    name: spec.name,
    source: createSource(spec.source, spec.name, sourceSelector, services),
    sink: createSink(spec.target, spec.name, 'target', services, spec.qos),
    ...(spec.errorDestination === undefined
      ? {}
      : { errorDestination: createSink(spec.errorDestination, spec.name, 'errorDestination', services) }),
    qos: spec.qos,
    ...(internalSource || spec.selector === undefined ? {} : { selector: spec.selector }),
    ordering: spec.ordering,
    orderingProperty: spec.orderingProperty,
    retry: {
      delay: spec.retry.delay ?? BRIDGE_DEFAULTS.retry.delay,
      limit: spec.retry.limit,
      onLimit: spec.retry.onLimit,
    },
    batchSize: spec.batchSize,
    batchIntervalMs: spec.batchIntervalMs,
    sendBatch: spec.sendBatch,
    reconnect: spec.reconnect,
    concurrency: spec.concurrency,
    maxInFlight: spec.maxInFlight,
    ...(spec.maxInFlightPerUnit === undefined ? {} : { maxInFlightPerUnit: spec.maxInFlightPerUnit }),
    stopTimeoutMs: spec.stopTimeoutMs ?? Math.max(0, stopTimeoutMs),
  };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A reload that changes nothing, for the problems that stopped it. */
function notReloaded(errors: readonly string[]): ReloadResult {
  return {
    reloaded: false,
    added: [],
    removed: [],
    restarted: [],
    unchanged: [],
    created: [],
    changes: {},
    warnings: [],
    errors: [...errors],
  };
}
