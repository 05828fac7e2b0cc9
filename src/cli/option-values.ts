/**
 * Parsers for option and argument values: a bad value is a usage error (exit 2) naming the
 * option, the value and what was expected, raised while the command line is read.
 */
import { InvalidArgumentError } from 'commander';

/** An integer from `min` to `max` (inclusive). */
export function integerValue(min: number, max = Number.MAX_SAFE_INTEGER): (text: string) => number {
  const expected =
    max === Number.MAX_SAFE_INTEGER
      ? `expected an integer >= ${min}`
      : `expected an integer from ${min} to ${max}`;
  return (text) => {
    const value = Number(text);
    if (!/^\s*-?\d+\s*$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max)
      throw new InvalidArgumentError(expected);
    return value;
  };
}

/** A repeatable `name=value` option, collected in order. */
export function namedValue(text: string, previous: readonly [string, string][] = []): [string, string][] {
  const at = text.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('expected name=value');
  return [...previous, [text.slice(0, at), text.slice(at + 1)]];
}

/** One of `choices`. */
export function choiceValue<T extends string>(choices: readonly T[]): (text: string) => T {
  return (text) => {
    if (!(choices as readonly string[]).includes(text))
      throw new InvalidArgumentError(`expected one of ${choices.join(', ')}`);
    return text as T;
  };
}

/** An http:// or https:// address, such as the admin API's. */
export function httpUrlValue(text: string): string {
  const protocol = URL.canParse(text) ? new URL(text).protocol : '';
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new InvalidArgumentError('expected an http:// or https:// address, like http://127.0.0.1:8161');
  return text;
}
