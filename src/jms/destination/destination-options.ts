/**
 * Per-destination settings, named after the WebLogic destination settings they come from. Every
 * field is optional; an absent field takes the connection factory's or producer's value, or the
 * default written on it.
 */
import type { FlowThresholds } from '../delivery/flow-control.js';
import { invalidSetting, nonNegativeMs } from '../client/setting-checks.js';
import type { DestinationKey } from './destination-key.js';

/** What happens to an expired message (DLV-4). */
export type ExpirationPolicy =
  | { policy: 'discard' }
  /** Logs the JMSMessageID and the listed fields (`%header%`, `%properties%`, or names). */
  | { policy: 'log'; fields?: readonly string[] }
  /** Moves it to the error destination. */
  | { policy: 'redirect' };

/** An exponential redelivery backoff (DLV-1). */
export interface RedeliveryBackoff {
  /** Growth factor per redelivery, >= 1. */
  multiplier: number;
  /** The delay never grows past this, ms. Default: none (uncapped). */
  maximumMs?: number;
}

/** Settings of one queue or topic. */
export interface DestinationOptions {
  /** Sort order other than priority then send order (DST-1). Default: none. */
  keys?: readonly DestinationKey[];
  /** Whether PERSISTENT messages are written to the store (PER-4). Default true. */
  storeEnabled?: boolean;
  /**
   * Redelivery delay in ms that wins over the factory and session values (DLV-1). -1 or absent:
   * no override, the session's (or factory's) delay applies.
   */
  redeliveryDelayOverride?: number;
  /**
   * Grows the redelivery delay with each redelivery: delay × multiplier^(redeliveries − 1), capped
   * at maximumMs (DLV-1). Not in WebLogic's JMS; users ask for it. Default: none (a fixed delay).
   */
  redeliveryBackoff?: RedeliveryBackoff;
  /**
   * Redeliveries before a message is undeliverable; wins over the producer's (DLV-2). -1 or
   * absent: no override, the producer's limit applies (its default, -1, is no limit).
   */
  redeliveryLimit?: number;
  /** Where undeliverable and redirected expired messages go, as `queue://name` or `topic://name` (DLV-3). */
  errorDestination?: string;
  /**
   * Time to live in ms that wins over the producer's; 0 = messages never expire (DLV-4). -1 or
   * absent: no override, the producer's time to live applies.
   */
  timeToLiveOverride?: number;
  /** What to do with expired messages. Default: discard. */
  expirationPolicy?: ExpirationPolicy;
  /**
   * Time to deliver that wins over the producer's (DLV-5): ms from the send, or a schedule
   * (DLV-6). A string holding an integer is ms, as WebLogic writes a relative override.
   * -1 or absent: no override, the producer's time to deliver applies.
   */
  timeToDeliverOverride?: number | string;
  /** Quota: most messages held (current + pending) (DLV-7). Default: unlimited. */
  messagesMaximum?: number;
  /** Quota: most bytes held (DLV-7). Default: unlimited. */
  bytesMaximum?: number;
  /** Flow control: producers are slowed above the high thresholds until below the low ones (DLV-7). */
  thresholds?: FlowThresholds;
  /**
   * The property naming a message's unit of order (ORD-4). Default `JMSXGroupID`; an empty
   * string turns units of order off for the destination.
   */
  unitOfOrderProperty?: string;
}

/**
 * What a destination's RedeliveryLimit, RedeliveryDelayOverride and TimeToLiveOverride take to
 * mean "no override": the producer's or session's value applies, as if the field were absent.
 * WebLogic's convention (`001`: "a value of -1 specifies that there is no override").
 */
export const NO_OVERRIDE = -1;

/** A destination override's value, or undefined when it is absent or {@link NO_OVERRIDE}. */
export function overrideOf(value: number | undefined): number | undefined {
  return value === NO_OVERRIDE ? undefined : value;
}

/** A destination's TimeToDeliverOverride as the engine applies it (DLV-5, DLV-6). */
export type DeliveryTimeOverride =
  | { readonly kind: 'none' }
  | { readonly kind: 'relative'; readonly ms: number }
  | { readonly kind: 'schedule'; readonly schedule: string };

const NO_DELIVERY_TIME_OVERRIDE: DeliveryTimeOverride = { kind: 'none' };
const INTEGER_TEXT = /^\s*[+-]?\d+\s*$/;

/**
 * Reads a TimeToDeliverOverride: a number or integer string is relative ms (-1: no override),
 * any other string a schedule. Not checked here: see {@link checkDestinationOptions}.
 */
export function deliveryTimeOverrideOf(value: number | string | undefined): DeliveryTimeOverride {
  if (value === undefined) return NO_DELIVERY_TIME_OVERRIDE;
  const ms = typeof value === 'number' ? value : INTEGER_TEXT.test(value) ? Number(value) : undefined;
  if (ms === undefined) return { kind: 'schedule', schedule: value as string };
  return ms === NO_OVERRIDE ? NO_DELIVERY_TIME_OVERRIDE : { kind: 'relative', ms };
}

/**
 * Refuses settings the engine cannot run with, when a destination is created rather than at the
 * first redelivery: the admin API and library callers pass options the config schema never saw.
 */
export function checkDestinationOptions(options: DestinationOptions): void {
  const limit = options.redeliveryLimit;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < NO_OVERRIDE))
    throw invalidSetting('redeliveryLimit', limit, '-1 (no override) or an integer >= 0');
  for (const field of ['redeliveryDelayOverride', 'timeToLiveOverride'] as const) {
    const value = options[field];
    if (value !== undefined && value !== NO_OVERRIDE)
      nonNegativeMs(value, field, '-1 (no override) or a number of ms >= 0');
  }
  const deliveryTime = deliveryTimeOverrideOf(options.timeToDeliverOverride);
  if (deliveryTime.kind === 'relative')
    nonNegativeMs(
      deliveryTime.ms,
      'timeToDeliverOverride',
      '-1 (no override), a number of ms >= 0 or a schedule',
    );
  const backoff = options.redeliveryBackoff;
  if (backoff === undefined) return;
  if (!Number.isFinite(backoff.multiplier) || backoff.multiplier < 1)
    throw invalidSetting('redeliveryBackoff.multiplier', backoff.multiplier, 'a finite number >= 1');
  if (backoff.maximumMs !== undefined) nonNegativeMs(backoff.maximumMs, 'redeliveryBackoff.maximumMs');
}
