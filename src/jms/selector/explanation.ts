/**
 * What `MessageSelector.explain` returns: published on its own, without the parsed tree the
 * explanation is built from (explain.ts).
 */
import type { XPathLimitName } from './xpath/xpath-limits.js';

/** What an XPath function saw in the body. */
export interface XPathExplanation {
  /** The XPath expression. */
  readonly expression: string;
  /** For JMS_BEA_SELECT: the string value found, or null (NULL). Absent for the boolean XPATH form. */
  readonly found?: string | null;
  /**
   * Whether the body could be searched: `xml`, `malformed` (not well-formed or has a DTD),
   * `over-limit` (bigger, deeper or wider than the XPath limits allow), or `not-text`.
   */
  readonly body: 'xml' | 'malformed' | 'over-limit' | 'not-text';
  /** The XPath limit the body, or this evaluation (`maxSteps`), went over; absent when none. */
  readonly limit?: XPathLimitName;
}

/** One sub-expression and its value. */
export interface Explanation {
  /** The sub-expression as written in the selector. */
  readonly text: string;
  /** `TRUE`, `FALSE` or `UNKNOWN` for conditions; for values `NULL`, `'text'`, `42`, `TRUE`... */
  readonly value: string;
  /** True when `value` is a truth value (the node is a condition). */
  readonly condition: boolean;
  /** For identifiers: `header`, the property's type (`int`, `long`, `string`...), or `absent`. */
  readonly type?: string;
  /** For XPath functions: the expression and what it found. */
  readonly xpath?: XPathExplanation;
  /** Sub-expressions, literals left out. */
  readonly children: readonly Explanation[];
}
