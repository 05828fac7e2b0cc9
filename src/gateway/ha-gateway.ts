/**
 * One instance of an active/standby group (`ha.enabled`): every instance runs this with the same
 * configuration. A standby serves only its admin API (`/health`, `/ready` 503 with `role:
 * standby`, `/metrics`, `/ha`); when the {@link HaCoordinator} wins the lease, the instance opens
 * the shared store fenced by the lease's epoch, recovers it and starts the whole gateway; when it
 * loses the lease or steps down, it stops the gateway and is a standby again.
 */
import type { HaAdmin, HaStatus } from '../admin/ha-routes.js';
import type { HaRoleName } from '../admin/readiness.js';
import type { ReloadResult } from '../admin/routes.js';
import { type AdminServer, startAdminServer } from '../admin/server.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { ADMIN_TOKEN_ENV } from '../config/checks.js';
import { type Clock, systemClock } from '../jms/clock.js';
import { JmsEngine } from '../jms/engine.js';
import { IllegalStateError } from '../jms/errors.js';
import type { MessageStore } from '../jms/store-port.js';
import type { Lease, WriteFence } from '../store/lease.js';
import { MemoryStore } from '../store/memory-store.js';
import { PostgresLease } from '../store/postgres-lease.js';
import { DEFAULT_SCHEMA, PostgresStore } from '../store/postgres-store.js';
import { Gateway, type GatewayStartOptions, openStore, postgresStoreOptions } from './gateway.js';
import { HaCoordinator } from './ha-coordinator.js';
import { type GatewayLogger, redactingLogger } from './logger.js';
import { SecretMask } from './secret-mask.js';

/** A lease with the fence its grants put on the store's writes. */
export interface FencingLease extends Lease {
  fence(epoch: number): WriteFence;
}

export interface HaGatewayOptions extends Omit<GatewayStartOptions, 'store' | 'ha'> {
  readonly lease: FencingLease;
  /** Opens the shared store with every write checked by `fence`. */
  readonly openStore: (fence: WriteFence) => Promise<MessageStore>;
}

/**
 * How long a gateway that lost its lease keeps draining its bridges: the store refuses its writes
 * already, so what is in flight goes back to the sources (redelivered to the new active).
 */
const LOST_LEASE_STOP_MS = 2_000;

export class HaGateway {
  readonly #config: GatewayConfig;
  readonly #logger: GatewayLogger;
  readonly #options: HaGatewayOptions;
  readonly #clock: Clock;
  readonly #lease: FencingLease;
  readonly #coordinator: HaCoordinator;
  readonly #mask: SecretMask;
  #gateway: Gateway | undefined;
  /** The standby's admin API, with a placeholder engine that nothing is routed to. */
  #standbyAdmin: { server: AdminServer; engine: JmsEngine } | undefined;
  #stopping: Promise<{ clean: boolean }> | undefined;
  /**
   * The admin API's port once bound: the active gateway's and the standby's admin API take turns
   * on it, so a port picked at random (`--admin-port 0`) stays the instance's address.
   */
  #adminPort: number | undefined;

  private constructor(config: GatewayConfig, logger: GatewayLogger, options: HaGatewayOptions) {
    this.#config = config;
    this.#options = options;
    this.#mask = options.mask ?? new SecretMask();
    this.#mask.add(config.secrets);
    this.#logger = redactingLogger(logger, this.#mask).child({ component: 'ha' });
    this.#clock = options.clock ?? systemClock;
    this.#lease = options.lease;
    this.#coordinator = new HaCoordinator({
      lease: options.lease,
      ttlMs: config.ha.leaseMs,
      renewEveryMs: config.ha.renewEveryMs,
      claimEveryMs: config.ha.claimEveryMs,
      clock: this.#clock,
      logger: this.#logger,
      handlers: {
        becomeActive: (epoch) => this.#becomeActive(epoch),
        becomeStandby: (reason) => this.#becomeStandby(reason),
      },
    });
  }

  /** Starts as a standby (its admin API answers at once) and claims the lease. */
  static async start(
    config: GatewayConfig,
    logger: GatewayLogger,
    options: HaGatewayOptions,
  ): Promise<HaGateway> {
    const gateway = new HaGateway(config, logger, options);
    await gateway.#startStandbyAdmin();
    gateway.#coordinator.onChange((state) =>
      gateway.#logger.info(
        { role: state.role, epoch: state.epoch, reason: state.reason, instance: state.instanceId },
        `role: ${state.role}`,
      ),
    );
    gateway.#coordinator.start();
    return gateway;
  }

  get role(): HaRoleName {
    return this.#coordinator.state.role;
  }

  /** The gateway while this instance is active. */
  get active(): Gateway | undefined {
    return this.#gateway;
  }

  get instanceId(): string {
    return this.#lease.instanceId;
  }

  get adminUrl(): string | undefined {
    return this.#gateway?.adminUrl ?? this.#standbyAdmin?.server.url;
  }

  get shutdownDeadlineMs(): number {
    return this.#gateway?.shutdownDeadlineMs ?? this.#config.shutdown.deadlineMs;
  }

  /** Hands over to a standby (rolling upgrades); false when this instance was not active. */
  stepDown(): Promise<boolean> {
    return this.#coordinator.stepDown();
  }

  /** SIGHUP: the active gateway reloads; a standby reads the file when it becomes active. */
  reload(): Promise<ReloadResult> {
    if (this.#gateway === undefined)
      return Promise.reject(
        new IllegalStateError(
          'this instance is a standby: it reads the configuration when it becomes active',
        ),
      );
    return this.#gateway.reload();
  }

  reloadFinished(): Promise<void> {
    return this.#gateway?.reloadFinished() ?? Promise.resolve();
  }

  /** The role and the lease as the database holds it (`GET /ha`). */
  async status(): Promise<HaStatus> {
    const state = this.#coordinator.state;
    const lease = await this.#lease.read().catch(() => undefined);
    return {
      role: state.role,
      group: this.#config.ha.group,
      instanceId: state.instanceId,
      ...(state.epoch === undefined ? {} : { epoch: state.epoch }),
      ...(state.reason === undefined ? {} : { reason: state.reason }),
      since: new Date(state.since).toISOString(),
      ...(lease === undefined
        ? {}
        : {
            lease: {
              ...(lease.holder === undefined ? {} : { holder: lease.holder }),
              epoch: lease.epoch,
              expiresAt: new Date(lease.expiresAt).toISOString(),
            },
          }),
    };
  }

  /** Stops claiming; an active instance stops its gateway (draining the bridges) and gives the lease back. */
  stop(): Promise<{ clean: boolean }> {
    return (this.#stopping ??= (async () => {
      let clean = true;
      const gateway = this.#gateway;
      const stopped = gateway?.stop(this.#config.shutdown.deadlineMs);
      await this.#coordinator.stop();
      if (stopped !== undefined) clean = (await stopped).clean;
      await this.#closeStandbyAdmin();
      return { clean };
    })());
  }

  get #admin(): HaAdmin {
    return {
      role: () => this.#coordinator.state.role,
      status: () => this.status(),
      stepDown: () => this.#beginStepDown(),
    };
  }

  /**
   * Starts a step-down and resolves once it has begun: `POST /ha/step-down` answers then, as the
   * step-down closes the admin API that serves the request.
   */
  #beginStepDown(): Promise<boolean> {
    if (this.#coordinator.state.role !== 'active') return Promise.resolve(false);
    return new Promise((resolve) => {
      const off = this.#coordinator.onChange((state) => {
        if (state.role === 'active') return;
        off();
        resolve(true);
      });
      void this.#coordinator.stepDown().then((steppedDown) => {
        off();
        resolve(steppedDown);
      });
    });
  }

  async #becomeActive(epoch: number): Promise<void> {
    await this.#closeStandbyAdmin();
    try {
      const store = await this.#options.openStore(this.#lease.fence(epoch));
      const { lease: _lease, openStore: _open, ...options } = this.#options;
      this.#gateway = await Gateway.start(this.#config, this.#logger, {
        ...options,
        ...(this.#adminPort === undefined ? {} : { adminPort: this.#adminPort }),
        mask: this.#mask,
        store,
        ha: this.#admin,
      });
    } catch (error) {
      await this.#startStandbyAdmin().catch((cause: unknown) =>
        this.#logger.error({ err: cause }, 'the standby admin API did not start'),
      );
      throw error;
    }
  }

  async #becomeStandby(reason: string): Promise<void> {
    const gateway = this.#gateway;
    this.#gateway = undefined;
    if (gateway !== undefined) {
      // Handing over on purpose, the bridges drain while the lease is still held. Lost, nothing
      // more is sent: the store refuses writes already, a send to a target would compete with the
      // new active's, and what is in flight goes back to the sources for the new active.
      const planned = reason === 'stepped down' || reason === 'the gateway is stopping';
      await (planned
        ? gateway.stop(this.#config.shutdown.deadlineMs)
        : gateway.stop(Math.min(LOST_LEASE_STOP_MS, this.#config.shutdown.deadlineMs), { drain: false }));
    }
    if (this.#stopping === undefined) await this.#startStandbyAdmin();
  }

  async #startStandbyAdmin(): Promise<void> {
    if (!this.#config.admin.enabled || this.#standbyAdmin !== undefined) return;
    const engine = await JmsEngine.open({ store: new MemoryStore(), clock: this.#clock });
    const token = this.#options.adminToken ?? process.env[ADMIN_TOKEN_ENV];
    try {
      const server = await startAdminServer({
        engine,
        host: this.#config.admin.host,
        port: this.#adminPort ?? this.#options.adminPort ?? this.#config.admin.port,
        token,
        ha: this.#admin,
        ready: () => ({ ready: false, failed: [] }),
        logger: this.#logger.child({ component: 'admin' }),
      });
      this.#standbyAdmin = { server, engine };
      this.#adminPort ??= Number(new URL(server.url).port);
    } catch (error) {
      await engine.close();
      throw error;
    }
  }

  async #closeStandbyAdmin(): Promise<void> {
    const admin = this.#standbyAdmin;
    this.#standbyAdmin = undefined;
    if (admin === undefined) return;
    await admin.server.close();
    await admin.engine.close();
  }
}

/**
 * An instance of the active/standby group the configuration names (`ha.enabled`, on the
 * PostgreSQL store): brings the schema to the current version first (unless `store.migrate` is
 * false), so the lease table is there to claim, then starts as a standby.
 */
export async function startHighAvailability(
  config: GatewayConfig,
  logger: GatewayLogger,
  options: Omit<GatewayStartOptions, 'store' | 'ha'> = {},
): Promise<HaGateway> {
  if (config.store.type !== 'postgres')
    throw new IllegalStateError('high availability needs store.type: postgres, which the instances share');
  const storeOptions = postgresStoreOptions(config, logger);
  if (config.store.migrate !== false) await PostgresStore.migrate(storeOptions);
  const lease = new PostgresLease({
    url: storeOptions.url,
    schema: storeOptions.schema ?? DEFAULT_SCHEMA,
    name: config.ha.group,
    ttlMs: config.ha.leaseMs,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  return HaGateway.start(config, logger, {
    ...options,
    lease,
    openStore: (fence) => openStore(config, logger, fence),
  });
}
