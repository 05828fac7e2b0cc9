/**
 * Expiration (DLV-4): what happens to a message whose time to live has run out, as its
 * destination's policy says (discard, log, or redirect to the error destination), and the
 * active scan that finds expired messages nobody is reading. What the log policy writes is
 * expiry.ts's.
 */
import type { TimerQueue } from '../clock.js';
import type { Backlog } from '../destination/backlog.js';
import type { Entry } from '../destination/entry.js';
import type { DestinationRegistry } from '../destination/registry.js';
import type { EngineLogger } from '../logger.js';
import type { ErrorDestinations } from './error-destinations.js';
import { ExpiryPolicies } from './expiry.js';

/** What expiration needs of the engine. */
export interface ExpirationContext {
  readonly registry: DestinationRegistry;
  readonly errorDestinations: ErrorDestinations;
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  now(): number;
  /** True once the engine closed: the scan stops. */
  closed(): boolean;
}

export class Expiration {
  readonly #context: ExpirationContext;
  readonly #policies: ExpiryPolicies;

  constructor(context: ExpirationContext) {
    this.#context = context;
    this.#policies = new ExpiryPolicies(context.logger);
  }

  /** Applies the destination's expiration policy to an expired entry (DLV-4). */
  expire(backlog: Backlog, entry: Entry): void {
    const owner = this.#context.registry.ownerOf(backlog);
    const policy = owner?.options.expirationPolicy ?? { policy: 'discard' };
    if (policy.policy === 'redirect') {
      this.#context.errorDestinations.move(backlog, entry, 'expired', 'expired');
      return;
    }
    if (policy.policy === 'log')
      this.#policies.log(owner?.handle.toString() ?? backlog.key, entry.message, policy.fields);
    backlog.remove(entry, 'expired');
  }

  /** Expires every message whose time to live has run out, now (what the active scan does). */
  expireNow(): number {
    const now = this.#context.now();
    let expired = 0;
    for (const backlog of [...this.#context.registry.backlogs()]) {
      for (const entry of backlog.expiredEntries(now)) {
        this.expire(backlog, entry);
        expired++;
      }
    }
    return expired;
  }

  /** Runs the active scan every `intervalMs` (DLV-4) until the engine closes; 0 disables it. */
  scanEvery(intervalMs: number): void {
    if (intervalMs <= 0) return;
    this.#context.timers.after(intervalMs, () => {
      if (this.#context.closed()) return;
      this.expireNow();
      this.scanEvery(intervalMs);
    });
  }
}
