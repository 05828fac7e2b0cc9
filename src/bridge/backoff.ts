/**
 * Delays the bridge runtime waits: between retries of one message (BRG-4, DLV-1) and between
 * reconnect attempts (BRG-5). Pure functions of the attempt number, so tests check sequences
 * without a clock; jitter takes its randomness from the caller.
 */
import { InvalidArgumentError } from '../jms/errors.js';

/** How long a message waits before it is sent again. */
export type RetryDelay =
  /** The same delay before every retry. */
  | { readonly kind: 'fixed'; readonly ms: number }
  /**
   * `initialMs × multiplier^(retry − 1)`, capped at `maxMs`, then shortened by up to `jitter`
   * (a fraction 0..1) of itself so that many units do not retry in step. Jitter never exceeds the cap.
   */
  | {
      readonly kind: 'exponential';
      readonly initialMs: number;
      readonly multiplier: number;
      readonly maxMs: number;
      readonly jitter: number;
    };

/** Reconnect delays, as the WebLogic bridge's ReconnectDelayMinimum / Increase / Maximum (BRG-5). */
export interface ReconnectPolicy {
  /** Delay before the first reconnect attempt, ms. */
  readonly minMs: number;
  /** Each further attempt waits this many times longer than the one before (≥ 1). */
  readonly increaseFactor: number;
  /** The delay never exceeds this, ms. */
  readonly maxMs: number;
}

/**
 * The delay before retry number `retry` (1 = the first retry). `random` returns a number in
 * [0, 1); it only matters for exponential delays with jitter.
 */
export function retryDelayMs(delay: RetryDelay, retry: number, random: () => number): number {
  if (delay.kind === 'fixed') return delay.ms;
  const base = Math.min(delay.maxMs, delay.initialMs * delay.multiplier ** Math.max(0, retry - 1));
  return Math.round(base * (1 - delay.jitter * random()));
}

/** The delay before reconnect attempt number `attempt` (1 = the first after the loss). */
export function reconnectDelayMs(policy: ReconnectPolicy, attempt: number): number {
  return Math.min(policy.maxMs, policy.minMs * policy.increaseFactor ** Math.max(0, attempt - 1));
}

/** Throws InvalidArgumentError naming the field when a retry delay is out of range. */
export function checkRetryDelay(delay: RetryDelay, path: string): void {
  if (delay.kind === 'fixed') {
    nonNegative(delay.ms, `${path}.ms`);
    return;
  }
  nonNegative(delay.initialMs, `${path}.initialMs`);
  nonNegative(delay.maxMs, `${path}.maxMs`);
  if (!(delay.multiplier >= 1)) invalid(`${path}.multiplier`, delay.multiplier, 'a number >= 1');
  if (!(delay.jitter >= 0 && delay.jitter <= 1))
    invalid(`${path}.jitter`, delay.jitter, 'a number from 0 to 1');
}

/** Throws InvalidArgumentError naming the field when a reconnect policy is out of range. */
export function checkReconnectPolicy(policy: ReconnectPolicy, path: string): void {
  nonNegative(policy.minMs, `${path}.minMs`);
  nonNegative(policy.maxMs, `${path}.maxMs`);
  if (!(policy.increaseFactor >= 1))
    invalid(`${path}.increaseFactor`, policy.increaseFactor, 'a number >= 1');
  if (policy.maxMs < policy.minMs)
    invalid(`${path}.maxMs`, policy.maxMs, `a number >= minMs (${policy.minMs})`);
}

function nonNegative(value: number, path: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    invalid(path, value, 'a number of ms >= 0');
}

function invalid(path: string, value: unknown, expected: string): never {
  throw new InvalidArgumentError(`bridge setting '${path}' is ${String(value)} (expected ${expected})`);
}
