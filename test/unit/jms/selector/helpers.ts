/** Shared helpers for the selector tests. */
import assert from 'node:assert/strict';
import { InvalidSelectorError } from '../../../../src/jms/errors.js';
import { Message } from '../../../../src/jms/message/message.js';
import { parseSelector, type MessageSelector } from '../../../../src/jms/selector/index.js';

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

/**
 * The selector language's vocabulary for generators of random selectors: numeric literals of every
 * form (octal, hex, long suffix, the long range's edge), string literals with quotes and LIKE
 * wildcards, the keywords and the operators. Each fuzz test adds its own edge cases after these.
 */
export const FUZZ_VOCABULARY = {
  numbers: ['0', '1', '-1', '42', '017', '0x1F', '5L', '9223372036854775807'],
  strings: ["'red'", "''", "'O''Reilly'", "'%'", "'a_c'"],
  keywords: ['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'LIKE', 'IS', 'NULL', 'TRUE', 'FALSE', 'ESCAPE'],
  operators: ['=', '<>', '<', '>', '<=', '>=', '+', '-', '*', '/', '(', ')', ','],
} as const;

/**
 * The contract a fuzzed selector text must keep: it is refused with an InvalidSelectorError at a
 * column inside the text, or it compiles and answers on every target without throwing, with
 * `evaluate`, `matches` and `explain` agreeing. Says which of the two it was.
 */
export function compileAndEvaluate(text: string, targets: readonly Message[]): 'valid' | 'invalid' {
  let selector: MessageSelector;
  try {
    selector = parseSelector(text);
  } catch (error) {
    assert.ok(error instanceof InvalidSelectorError, `${JSON.stringify(text)} threw ${String(error)}`);
    assert.ok(
      error.column >= 1 && error.column <= text.length + 1,
      `${JSON.stringify(text)}: column ${error.column}`,
    );
    assert.match(error.message, /^invalid selector at column \d+: /);
    return 'invalid';
  }
  for (const target of targets) {
    let result: unknown;
    try {
      result = selector.matches(target);
      const truth = selector.evaluate(target);
      assert.ok(truth === true || truth === false || truth === null);
      assert.equal(result, truth === true);
      const explanation = selector.explain(target);
      assert.equal(
        explanation.value,
        truth === null ? 'UNKNOWN' : truth ? 'TRUE' : 'FALSE',
        `explain agrees for ${text}`,
      );
    } catch (error) {
      assert.fail(`${JSON.stringify(text)} threw at match time: ${String(error)}`);
    }
    assert.equal(typeof result, 'boolean');
  }
  return 'valid';
}

function isFloat(value: unknown): value is { type: 'float'; value: number } {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'float';
}
