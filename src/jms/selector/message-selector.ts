/**
 * `parseSelector`: a selector's text, parsed and compiled once (SEL-1..6), ready to test
 * messages. Consumers, browsers, subscriptions and routes create theirs when they are created,
 * so an invalid selector fails there with its column (SEL-5).
 */
import type { Message } from '../message/message.js';
import { childrenOf, type SelectorNode } from './ast.js';
import { compileCondition } from './compiler.js';
import { explainNode } from './explain.js';
import type { Explanation } from './explanation.js';
import { parseSelectorText } from './parser.js';
import type { Truth } from './truth.js';

/** A parsed, compiled message selector. */
export interface MessageSelector {
  /** The selector text, or null when there is none (null, empty or blank): what `getMessageSelector()` returns. */
  readonly text: string | null;
  /** True when the selector is TRUE for the message (FALSE and UNKNOWN do not select). Never throws. */
  readonly matches: (message: Message) => boolean;
  /** The selector's truth value for the message: true, false or null (UNKNOWN). Never throws. */
  readonly evaluate: (message: Message) => Truth;
  /**
   * Set when the selector is exactly `<identifier> IS NOT NULL` (SEL-6), so topic fan-out can
   * index the subscriber by that name. The identifier may be a header (`JMSCorrelationID`).
   */
  readonly indexedIdentifier?: string;
  /** True when the selector reads the message body (XPath), so the body must be at hand to evaluate it. */
  readonly readsBody: boolean;
  /** Every sub-expression with its value for `message`, for the CLI and diagnostics. */
  explain(message: Message): Explanation;
}

const SELECT_ALL: MessageSelector = Object.freeze({
  text: null,
  matches: () => true,
  evaluate: () => true,
  readsBody: false,
  explain: (): Explanation => ({ text: '', value: 'TRUE', condition: true, children: [] }),
});

/**
 * Parses and compiles a selector. Null, empty and blank selectors select every message.
 * Throws InvalidSelectorError, whose message names the 1-based column and what was expected.
 */
export function parseSelector(text: string | null | undefined): MessageSelector {
  if (text === null || text === undefined || text.trim() === '') return SELECT_ALL;
  const root = parseSelectorText(text);
  const condition = compileCondition(root);
  const indexed = indexedIdentifierOf(root);
  // Matching must never throw (SEL-2): the compiled code does not, but a message subclass or a
  // provider property of an unexpected shape could; such a message is simply not selected.
  const evaluate = (message: Message): Truth => {
    try {
      return condition(message);
    } catch {
      return null;
    }
  };
  const selector: MessageSelector = {
    text,
    matches: (message) => evaluate(message) === true,
    evaluate,
    readsBody: readsBody(root),
    explain: (message) => explainNode(text, root, message),
    ...(indexed === null ? {} : { indexedIdentifier: indexed }),
  };
  return Object.freeze(selector);
}

function indexedIdentifierOf(root: SelectorNode): string | null {
  return root.kind === 'is-null' && root.negated && root.operand.kind === 'identifier'
    ? root.operand.name
    : null;
}

function readsBody(node: SelectorNode): boolean {
  return node.kind === 'xpath-select' || node.kind === 'xpath-test' || childrenOf(node).some(readsBody);
}
