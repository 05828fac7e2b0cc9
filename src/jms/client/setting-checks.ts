/**
 * Checks of settings callers pass in, shared by the connection factory, the session and
 * destination options, so that a value one of them refuses is refused the same way by the others.
 */
import { InvalidArgumentError } from '../errors.js';

/** The error for setting `name` given `value`, saying what it takes. */
export function invalidSetting(name: string, value: unknown, expected: string): InvalidArgumentError {
  return new InvalidArgumentError(`${name} ${String(value)} is not valid (expected ${expected})`);
}

/** `value` if it is an integer >= 1. */
export function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw invalidSetting(name, value, 'an integer >= 1');
  return value;
}

/**
 * `value` if it is a finite number of ms >= 0; `expected` says what the setting takes, for one
 * that also takes something else.
 */
export function nonNegativeMs(value: number, name: string, expected = 'a number of ms >= 0'): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw invalidSetting(name, value, expected);
  return value;
}
