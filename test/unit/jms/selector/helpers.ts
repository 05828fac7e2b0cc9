/** Shared helpers for the selector tests. */
import assert from 'node:assert/strict';
import { InvalidSelectorError } from '../../../../src/jms/errors.js';
import { Message } from '../../../../src/jms/message/message.js';
import { parseSelector } from '../../../../src/jms/selector/index.js';

/** A message with the given properties, typed as setObjectProperty types them (or `{ type, value }`). */
export function message(
  properties: Record<string, unknown> = {},
  setup?: (message: Message) => void,
): Message {
  const result = new Message();
  for (const [name, value] of Object.entries(properties)) {
    // setFloatProperty rounds to 32 bits as Java stores a float; a typed wrapper alone would not.
    if (isFloat(value)) result.setFloatProperty(name, value.value);
    else result.setObjectProperty(name, value);
  }
  setup?.(result);
  return result;
}

/** The selector's truth value for the message as TRUE/FALSE/UNKNOWN. */
export function truth(selector: string, target: Message = message()): 'TRUE' | 'FALSE' | 'UNKNOWN' {
  const value = parseSelector(selector).evaluate(target);
  return value === null ? 'UNKNOWN' : value ? 'TRUE' : 'FALSE';
}

/** Asserts the selector is rejected at `column` with a message containing `fragment`. */
export function assertInvalid(
  selector: string,
  column: number,
  fragment?: string | RegExp,
): InvalidSelectorError {
  let caught: unknown;
  try {
    parseSelector(selector);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof InvalidSelectorError, `expected ${JSON.stringify(selector)} to be invalid`);
  assert.equal(caught.column, column, `column of ${JSON.stringify(selector)}: ${caught.message}`);
  assert.equal(caught.selector, selector);
  assert.match(caught.message, new RegExp(`^invalid selector at column ${column}: `));
  if (typeof fragment === 'string') assert.ok(caught.message.includes(fragment), caught.message);
  else if (fragment) assert.match(caught.message, fragment);
  return caught;
}

function isFloat(value: unknown): value is { type: 'float'; value: number } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'float';
}
