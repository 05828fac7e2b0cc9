/**
 * Checks of client settings shared by the connection factory and the session, so that a value
 * the factory refuses is refused the same way when a session overrides it.
 */
import { InvalidArgumentError } from '../errors.js';

/** `value` if it is an integer >= 1. */
export function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError(`${name} ${String(value)} is not valid (expected an integer >= 1)`);
  return value;
}

/** `value` if it is a finite number of ms >= 0. */
export function nonNegativeMs(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${name} ${String(value)} is not valid (expected a number of ms >= 0)`);
  }
  return value;
}
