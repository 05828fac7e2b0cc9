/**
 * The explanation tree behind `jms-gateway selector eval`: every sub-expression with the value it
 * had for one message, so a user can see which part of a selector made it UNKNOWN. It evaluates
 * each node with the same compiled closures matching uses, so it cannot disagree with `matches`;
 * it recompiles per node, which is fine for a diagnostic and never used on the hot path.
 */
import type { Message } from '../message/message.js';
import { childrenOf, type SelectorNode } from './ast.js';
import { compileCondition, compileValue } from './compiler.js';
import { isHeaderName } from './header-fields.js';
import type { Explanation, XPathExplanation } from './explanation.js';
import type { Value } from './values.js';
import { parsedBodyOf } from './xpath/parsed-body.js';
import { xpathLimitCounts } from './xpath/xpath-limits.js';

/** Formats a truth value as the CLI prints it. */
export function formatTruth(value: boolean | null): 'TRUE' | 'FALSE' | 'UNKNOWN' {
  return value === null ? 'UNKNOWN' : value ? 'TRUE' : 'FALSE';
}

/** Formats a value in selector syntax: NULL, 'quoted', 42, TRUE. */
export function formatValue(value: Value): string {
  if (value === null || value === undefined) return 'NULL';
  switch (typeof value) {
    case 'string':
      return `'${value.replace(/'/g, "''")}'`;
    case 'boolean':
      return value ? 'TRUE' : 'FALSE';
    case 'number':
    case 'bigint':
      return String(value);
    default:
      return '(bytes)';
  }
}

const VALUE_KINDS = new Set<SelectorNode['kind']>([
  'literal',
  'identifier',
  'xpath-select',
  'negate',
  'arithmetic',
]);

/** Explains `node` for `message`; the root is always explained as a condition. */
export function explainNode(
  selector: string,
  node: SelectorNode,
  message: Message,
  asCondition = true,
): Explanation {
  const isValue = VALUE_KINDS.has(node.kind) && !asCondition;
  const value = isValue
    ? formatValue(compileValue(node)(message))
    : formatTruth(compileCondition(node)(message));
  // Operands of AND, OR and NOT are read as truth values, even a bare boolean property.
  const booleanPosition = node.kind === 'and' || node.kind === 'or' || node.kind === 'not';
  const children = childrenOf(node)
    .filter((child) => child.kind !== 'literal')
    .map((child) => explainNode(selector, child, message, booleanPosition || !VALUE_KINDS.has(child.kind)));
  return {
    text: selector.slice(node.start, node.end),
    value,
    condition: !isValue,
    ...identifierType(node, message),
    ...xpathDetails(node, message),
    children,
  };
}

function identifierType(node: SelectorNode, message: Message): { type?: string } {
  if (node.kind !== 'identifier') return {};
  if (isHeaderName(node.name)) return { type: 'header' };
  return { type: message.getTypedProperty(node.name)?.type ?? 'absent' };
}

function xpathDetails(node: SelectorNode, message: Message): { xpath?: XPathExplanation } {
  if (node.kind !== 'xpath-select' && node.kind !== 'xpath-test') return {};
  const parsed = parsedBodyOf(message);
  const refusal = parsed?.refusal ?? null;
  const expression = node.xpath.expression;
  // JMS_BEA_SELECT says what it found, NULL included; the boolean XPATH form has no value to show.
  const nothing = node.kind === 'xpath-select' ? { found: null } : {};
  if (parsed === null) return { xpath: { expression, ...nothing, body: 'not-text' } };
  if (refusal === 'malformed') return { xpath: { expression, ...nothing, body: 'malformed' } };
  if (refusal !== null) return { xpath: { expression, ...nothing, body: 'over-limit', limit: refusal } };
  // Whether this evaluation ran out of steps shows in the count (a diagnostic, not the hot path).
  const before = xpathLimitCounts().maxSteps;
  const found = node.xpath.selectString(message);
  const outOfSteps = xpathLimitCounts().maxSteps > before;
  return {
    xpath: {
      expression,
      ...(node.kind === 'xpath-select' ? { found } : {}),
      body: 'xml',
      ...(outOfSteps ? { limit: 'maxSteps' as const } : {}),
    },
  };
}
