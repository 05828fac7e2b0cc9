/**
 * Bounds on the work XPath may do for one message (SEL-4), so that no single body, however
 * hostile, can stall the event loop and with it every route: a body over a size, depth, element
 * or attribute limit is treated as a body that does not parse, and an evaluation that runs out of
 * its step budget answers as if the body did not parse for that expression. Either way
 * `JMS_BEA_SELECT` is NULL and `XPATH` is UNKNOWN, so by the three-valued logic no XPath
 * selector, negated or not, selects the message: on a queue it stays where it is (SEL-7), for an
 * operator to browse, move or delete.
 *
 * The limits are process-wide, like the parse cache they protect: a body is parsed once per
 * message for every selector that tests it, so there is one answer per body. The gateway sets
 * them from `engine.xpath` in its configuration; an embedding program calls
 * {@link setXPathLimits}.
 */

/** The limits; every one a positive integer. */
export interface XPathLimits {
  /** The longest body, in characters (UTF-16 code units), that XPath reads. Default 1,048,576. */
  readonly maxBodyLength: number;
  /** The deepest element nesting in a body; the root element is depth 1. Default 1,000. */
  readonly maxDepth: number;
  /** The most elements in a body. Default 100,000. */
  readonly maxElements: number;
  /** The most attributes on one element. Default 10,000 (the JDK parser's `elementAttributeLimit`). */
  readonly maxAttributes: number;
  /**
   * The most node tests one evaluation of one XPath expression may make (each node an axis step
   * looks at counts one), for expressions the fast path does not answer. A step costs about a
   * microsecond, so the default keeps one evaluation within tens of ms. Default 25,000.
   */
  readonly maxSteps: number;
}

/** The defaults: generous for real messages, small enough that one evaluation stays in the tens of ms. */
export const DEFAULT_XPATH_LIMITS: XPathLimits = Object.freeze({
  maxBodyLength: 1_048_576,
  maxDepth: 1_000,
  maxElements: 100_000,
  maxAttributes: 10_000,
  maxSteps: 25_000,
});

/** Which limit a body or an evaluation went over. */
export type XPathLimitName = keyof XPathLimits;

/** Told each time a limit refuses a body or stops an evaluation (for a debug log line or a counter). */
export type XPathLimitListener = (event: {
  readonly limit: XPathLimitName;
  readonly expression?: string;
}) => void;

let current: XPathLimits = DEFAULT_XPATH_LIMITS;
let listener: XPathLimitListener | null = null;
const exceeded: Record<XPathLimitName, number> = {
  maxBodyLength: 0,
  maxDepth: 0,
  maxElements: 0,
  maxAttributes: 0,
  maxSteps: 0,
};

/** The limits in force. */
export function xpathLimits(): XPathLimits {
  return current;
}

/**
 * Replaces the limits named in `limits` (the others keep their value) and returns the previous
 * ones, so a caller can restore them. Bodies already parsed keep their parse. Throws a RangeError
 * for a value that is not a positive integer.
 */
export function setXPathLimits(limits: Partial<XPathLimits>): XPathLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (!(name in DEFAULT_XPATH_LIMITS)) throw new RangeError(`unknown xpath limit '${name}'`);
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new RangeError(`xpath limit '${name}' must be a positive integer, got ${String(value)}`);
    }
  }
  const previous = current;
  current = Object.freeze({ ...current, ...limits });
  return previous;
}

/** Sets (or with null removes) the listener told about each limit exceeded; returns the previous one. */
export function setXPathLimitListener(next: XPathLimitListener | null): XPathLimitListener | null {
  const previous = listener;
  listener = next;
  return previous;
}

/** How many times each limit has refused a body or stopped an evaluation since the process started. */
export function xpathLimitCounts(): Readonly<Record<XPathLimitName, number>> {
  return { ...exceeded };
}

/** Counts one limit exceeded and tells the listener; never throws (matching never throws). */
export function reportXPathLimit(limit: XPathLimitName, expression?: string): void {
  exceeded[limit]++;
  try {
    listener?.(expression === undefined ? { limit } : { limit, expression });
  } catch {
    // A failing listener must not change what a selector answers.
  }
}
