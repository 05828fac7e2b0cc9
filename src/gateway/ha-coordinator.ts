/**
 * Which role this instance plays, and when it changes: a standby claims the lease every
 * `claimEveryMs` and becomes active when it gets it; the active renews every `renewEveryMs` and
 * becomes a standby the moment it learns it lost the lease (a renewal refused), or when its grant
 * ran out locally before a renewal got through (the database unreachable, or this process was
 * paused): it stops on its own, even before anyone else takes over. Timers come from the injected
 * clock.
 *
 * What the roles mean to the gateway (open the store, recover, start the bridges; stop them) is
 * the caller's, through {@link HaRoleHandlers}.
 */
import type { HaRoleName } from '../admin/readiness.js';
import { type Clock, systemClock } from '../jms/clock.js';
import { type EngineLogger, silentLogger } from '../jms/logger.js';
import type { Lease } from '../store/lease.js';

/** standby, activating (recovering after winning the lease), active, stepping-down, stopped. */
export type HaRole = HaRoleName;

/** The roles in which this instance holds the lease and renews it. */
const HOLDS_LEASE: ReadonlySet<HaRole> = new Set(['activating', 'active', 'stepping-down']);

/** What the gateway does when the role changes. */
export interface HaRoleHandlers {
  /**
   * This instance holds the lease with `epoch`: open the store fenced by it, recover, start the
   * bridges. A rejection gives the lease back and leaves the instance a standby.
   */
  becomeActive(epoch: number): Promise<void>;
  /** The lease is lost or given up: stop the bridges and stop writing at once. */
  becomeStandby(reason: string): Promise<void>;
}

export interface HaCoordinatorOptions {
  readonly lease: Lease;
  readonly handlers: HaRoleHandlers;
  /** How long a grant lasts: must match the lease's. */
  readonly ttlMs: number;
  /** Default a third of the grant, so two renewals may fail before it runs out. */
  readonly renewEveryMs?: number;
  /** Default 1,000 ms. */
  readonly claimEveryMs?: number;
  readonly clock?: Clock;
  readonly logger?: EngineLogger;
}

/** The role and what led to it, for `/ready`, `/ha` and the metric. */
export interface HaState {
  readonly role: HaRole;
  readonly instanceId: string;
  /** The fencing epoch of this instance's grant while activating or active. */
  readonly epoch?: number;
  /** Why it is a standby now (`stepped down`, `the lease was taken over`), when it was active before. */
  readonly reason?: string;
  /** When the role last changed, ms since the epoch. */
  readonly since: number;
}

export class HaCoordinator {
  readonly #lease: Lease;
  readonly #handlers: HaRoleHandlers;
  readonly #ttlMs: number;
  readonly #renewEveryMs: number;
  readonly #claimEveryMs: number;
  readonly #clock: Clock;
  readonly #logger: EngineLogger;
  #state: HaState;
  #timer: unknown;
  /** Local time by which the grant runs out unless a renewal started before it gets through. */
  #grantEndsAt = 0;
  #deadline: unknown;
  /** Changes of role run one at a time. */
  #changing: Promise<void> = Promise.resolve();
  readonly #listeners = new Set<(state: HaState) => void>();

  constructor(options: HaCoordinatorOptions) {
    this.#lease = options.lease;
    this.#handlers = options.handlers;
    this.#ttlMs = options.ttlMs;
    this.#renewEveryMs = options.renewEveryMs ?? Math.max(1, Math.floor(options.ttlMs / 3));
    this.#claimEveryMs = options.claimEveryMs ?? 1_000;
    if (!(this.#renewEveryMs < this.#ttlMs))
      throw new Error('the lease must be renewed more often than it lasts');
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#state = { role: 'standby', instanceId: this.#lease.instanceId, since: this.#clock.now() };
  }

  get state(): HaState {
    return this.#state;
  }

  /** Called on every change of role. */
  onChange(listener: (state: HaState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Starts as a standby and claims at once. */
  start(): void {
    this.#schedule(() => this.#claim(), 0);
  }

  /**
   * Hands over on purpose: stops being active, gives the lease back and waits `holdOffMs`
   * (default two claim rounds) before claiming again, so a standby takes it. False when this
   * instance was not active.
   */
  async stepDown(holdOffMs = 2 * this.#claimEveryMs): Promise<boolean> {
    let steppedDown = false;
    await this.#change(async () => {
      const { role, epoch } = this.#state;
      if (role !== 'active' || epoch === undefined) return;
      steppedDown = true;
      // The lease is still renewed while the bridges drain: their last writes must go through.
      this.#set({ role: 'stepping-down', epoch });
      try {
        await this.#handlers.becomeStandby('stepped down');
      } catch (error) {
        this.#logger.error({ error: (error as Error).message }, 'stepping down failed');
      }
      this.#cancelTimers();
      this.#set({ role: 'standby', reason: 'stepped down' });
      await this.#lease.release(epoch).catch((error: unknown) => {
        // The grant then runs out on its own: the standby waits longer, nothing else changes.
        this.#logger.warn({ error: (error as Error).message }, 'could not give the lease back');
      });
      this.#schedule(() => this.#claim(), holdOffMs);
    });
    return steppedDown;
  }

  /** Stops claiming and renewing; an active instance stops being active and gives the lease back. */
  async stop(): Promise<void> {
    await this.#change(async () => {
      const { role, epoch } = this.#state;
      this.#cancelTimers();
      if (role === 'active' && epoch !== undefined) {
        await this.#toStandby('the gateway is stopping');
        await this.#lease.release(epoch).catch(() => undefined);
      }
      this.#set({ role: 'stopped' });
    });
    await this.#lease.close();
  }

  async #claim(): Promise<void> {
    await this.#change(async () => {
      if (this.#state.role !== 'standby') return;
      const startedAt = this.#clock.now();
      let epoch: number | undefined;
      try {
        epoch = await this.#lease.tryAcquire();
      } catch (error) {
        this.#logger.warn(
          { error: (error as Error).message },
          'could not claim the active lease; trying again',
        );
      }
      if (this.#state.role !== 'standby') return;
      if (epoch === undefined) {
        this.#schedule(() => this.#claim(), this.#claimEveryMs);
        return;
      }
      this.#set({ role: 'activating', epoch });
      this.#armDeadline(startedAt + this.#ttlMs);
      this.#schedule(() => this.#renew(), this.#renewEveryMs);
      this.#logger.info({ epoch }, 'holding the active lease: recovering and starting the bridges');
      try {
        await this.#handlers.becomeActive(epoch);
      } catch (error) {
        this.#logger.error(
          { error: (error as Error).message },
          'could not become active; giving the lease back',
        );
        await this.#toStandby(`could not become active: ${(error as Error).message}`);
        await this.#lease.release(epoch).catch(() => undefined);
        this.#schedule(() => this.#claim(), this.#claimEveryMs);
        return;
      }
      // Lost while recovering: the deadline or a refused renewal turned it back already.
      if (this.#roleNow() === 'activating') this.#set({ role: 'active', epoch });
    });
  }

  async #renew(): Promise<void> {
    const { role, epoch } = this.#state;
    if (!HOLDS_LEASE.has(role) || epoch === undefined) return;
    const startedAt = this.#clock.now();
    let renewed: boolean | undefined;
    try {
      renewed = await this.#lease.renew(epoch);
    } catch (error) {
      this.#logger.warn(
        { error: (error as Error).message },
        'could not renew the active lease; trying again',
      );
    }
    if (this.#state.epoch !== epoch || !HOLDS_LEASE.has(this.#state.role)) return;
    if (renewed === false) {
      await this.#lose('the lease was taken over by another instance');
      return;
    }
    if (renewed === true) this.#armDeadline(startedAt + this.#ttlMs);
    // After a failure, try again sooner: the grant is running out.
    this.#schedule(() => this.#renew(), renewed ? this.#renewEveryMs : Math.ceil(this.#renewEveryMs / 2));
  }

  #armDeadline(at: number): void {
    this.#grantEndsAt = at;
    if (this.#deadline !== undefined) this.#clock.clearTimer(this.#deadline);
    this.#deadline = this.#clock.setTimer(() => {
      this.#deadline = undefined;
      if (this.#clock.now() >= this.#grantEndsAt)
        void this.#lose('the lease could not be renewed before it ran out');
    }, at - this.#clock.now());
  }

  async #lose(reason: string): Promise<void> {
    await this.#change(async () => {
      const { role } = this.#state;
      if (role !== 'active' && role !== 'activating') return;
      this.#logger.warn({ reason }, 'no longer the active instance: stopping the bridges');
      await this.#toStandby(reason);
      this.#schedule(() => this.#claim(), this.#claimEveryMs);
    });
  }

  async #toStandby(reason: string): Promise<void> {
    this.#cancelTimers();
    this.#set({ role: 'standby', reason });
    try {
      await this.#handlers.becomeStandby(reason);
    } catch (error) {
      this.#logger.error({ error: (error as Error).message }, 'stopping as a standby failed');
    }
  }

  #change(step: () => Promise<void>): Promise<void> {
    const next = this.#changing.then(step, step);
    this.#changing = next.catch(() => undefined);
    return next;
  }

  #schedule(run: () => Promise<void>, delayMs: number): void {
    if (this.#state.role === 'stopped') return;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = this.#clock.setTimer(() => {
      this.#timer = undefined;
      void run();
    }, delayMs);
  }

  #cancelTimers(): void {
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    if (this.#deadline !== undefined) this.#clock.clearTimer(this.#deadline);
    this.#timer = this.#deadline = undefined;
  }

  /** The role as it is now (the compiler keeps the role it saw before an await). */
  #roleNow(): HaRole {
    return this.#state.role;
  }

  #set(state: Omit<HaState, 'instanceId' | 'since'>): void {
    this.#state = { ...state, instanceId: this.#lease.instanceId, since: this.#clock.now() };
    for (const listener of this.#listeners) listener(this.#state);
  }
}
