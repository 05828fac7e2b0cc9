/**
 * One XPath expression of a selector, compiled once when the selector is parsed (SEL-4): by the
 * fast path when it is a simple path (fast-path.ts) or a boolean form of one (fast-condition.ts),
 * and always by xpath.js, which validates the syntax and evaluates everything the fast paths do
 * not cover, on the DOM of the parsed body (parsed-body.ts).
 *
 * xpath.js evaluates without any bound: `//item[//item[//item[id = 199]]]` on a 200-item body
 * makes some 24 million node tests. Every node an axis step looks at goes through its step's
 * node test, so each step of the compiled expression gets a counting node test, and an evaluation
 * that makes more than `maxSteps` of them (xpath-limits.ts) stops and answers as for a body that
 * does not parse. The fast paths are linear in the body (string-values aside, which
 * fast-condition.ts bounds itself).
 */
import { DOMParser } from '@xmldom/xmldom';
import type { Message } from '../../message/message.js';
import { compileFastCondition, OVER_BUDGET, type FastCondition } from './fast-condition.js';
import { compileFastPath, stringValue, type FastPath } from './fast-path.js';
import { RECORD, type XmlDocument } from './xml-document.js';
import { parsedBodyOf, type ParsedBody } from './parsed-body.js';
import { reportXPathLimit, xpathLimits } from './xpath-limits.js';
import { xpath, type NodeTest, type ParsedXPath } from './xpath-js.js';

/**
 * What building the DOM is charged per element or attribute, in node tests (measured for xmldom,
 * which takes four to five times as long per node; the lazy tape DOM costs less, but the charge
 * is kept so that `maxSteps` refuses the same bodies whichever DOM a body gets).
 */
const DOM_STEPS_PER_NODE = 4;

/** Thrown for an expression xpath.js rejects; the parser turns it into a positioned InvalidSelectorError. */
export class InvalidXPathError extends Error {}

/** Thrown by a counting node test when its evaluation is out of steps; a constant, caught in {@link budgeted}. */
const OUT_OF_STEPS = Symbol('xpath evaluation out of steps');
/** Node tests the running evaluation may still make. Evaluation is synchronous and never nested, so one counter serves all. */
let stepsLeft = 0;

/**
 * Gives every location step in a parsed expression a node test that counts against
 * {@link stepsLeft}. Each step gets its own wrapper: xpath.js shares node test objects between
 * expressions (`node()`, `*`), which must stay untouched.
 */
function countNodeTests(tree: unknown): void {
  const seen = new Set<object>();
  const pending: unknown[] = [tree];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    for (const child of Object.values(value)) pending.push(child);
    if (value instanceof xpath.Step) {
      const test = value.nodeTest;
      value.nodeTest = Object.create(test, {
        matches: {
          value: (node: unknown, context: unknown): boolean => {
            // eslint-disable-next-line @typescript-eslint/only-throw-error -- a sentinel, caught in budgeted().
            if (--stepsLeft < 0) throw OUT_OF_STEPS;
            return test.matches(node, context);
          },
        },
      }) as NodeTest;
    }
  }
}

/** Runs `evaluate` with a fresh step budget; undefined when it ran out (counted and reported). */
function budgeted<T>(expression: string, evaluate: () => T): T | undefined {
  stepsLeft = xpathLimits().maxSteps;
  try {
    return evaluate();
  } catch (error) {
    if (error !== OUT_OF_STEPS) throw error;
    reportXPathLimit('maxSteps', expression);
    return undefined;
  }
}

/** A tiny document to evaluate new expressions on once, so unknown functions are reported at parse time. */
const PROBE = new DOMParser({ onError: () => undefined }).parseFromString('<probe/>', 'text/xml');

const STATIC_ERRORS =
  /^(Unknown function|Cannot resolve QName|Function \S+ expects|Cannot convert|Path expression filter)/;
const NAMESPACE_HINT =
  " (namespace prefixes cannot be declared in a selector: match names with local-name(), e.g. /*[local-name()='order'])";

/** A compiled XPath expression. */
export class CompiledXPath {
  /** The expression as written in the selector. */
  readonly expression: string;
  readonly #fast: FastPath | null;
  /** The expression as a boolean form of fast-condition.ts (a simple path included), for `XPATH`. */
  readonly #condition: FastCondition | null;
  readonly #evaluator: ParsedXPath;
  /** The key of the boolean answer in a body's answers (the string answer's key is this object). */
  readonly #testKey = {};

  /** Compiles `expression`; throws InvalidXPathError when it is not valid XPath 1.0. */
  constructor(expression: string) {
    this.expression = expression;
    try {
      this.#evaluator = xpath.parse(expression);
    } catch (error) {
      throw new InvalidXPathError(`invalid XPath expression '${expression}': ${describe(error)}`, {
        cause: error,
      });
    }
    countNodeTests(this.#evaluator.expression);
    try {
      stepsLeft = Number.MAX_SAFE_INTEGER;
      this.#evaluator.evaluate({ node: PROBE }).stringValue();
    } catch (error) {
      const message = describe(error);
      // Errors that fail on every document are reported now; others depend on the body.
      if (STATIC_ERRORS.test(message)) {
        const hint = message.startsWith('Cannot resolve QName') ? NAMESPACE_HINT : '';
        throw new InvalidXPathError(`invalid XPath expression '${expression}': ${message}${hint}`, {
          cause: error,
        });
      }
    }
    this.#fast = compileFastPath(expression);
    this.#condition = compileFastCondition(expression);
  }

  /** True when the expression is evaluated by the fast path (on bodies without namespaces). */
  get usesFastPath(): boolean {
    return this.#fast !== null || this.#condition !== null;
  }

  /**
   * Whether the DOM may be built for this body: building it costs about as much per
   * node as {@link DOM_STEPS_PER_NODE} node tests, so a body whose DOM would cost more than the
   * whole step budget is answered as over `maxSteps` without building it. Decided by the body
   * alone, so every selector on it agrees.
   */
  #domAffordable(document: XmlDocument): boolean {
    const nodes = document.tape.length / RECORD + document.attributes;
    if (nodes * DOM_STEPS_PER_NODE <= xpathLimits().maxSteps) return true;
    reportXPathLimit('maxSteps', this.expression);
    return false;
  }

  /**
   * `JMS_BEA_SELECT('xpath', ...)`: the string value of the first selected node, or NULL when the
   * body is not text, does not parse, selects nothing, or selects a node with an empty value.
   */
  selectString(message: Message): string | null {
    try {
      const body = parsedBodyOf(message);
      const document = body?.document;
      if (!document) return null;
      if (this.#fast !== null && !document.namespaced) {
        const node = this.#fast.first(document);
        return node === undefined ? null : emptyToNull(stringValue(document, node));
      }
      if (this.#condition?.yieldsBoolean === true && !document.namespaced) {
        const answer = this.#testFast(body, document);
        return answer === null ? null : String(answer);
      }
      const known = body.answers.get(this);
      if (known !== undefined) return known as string | null;
      const answer = this.#selectWithXPathJs(body, document);
      body.answers.set(this, answer);
      return answer;
    } catch {
      // xpath.js throws for some expressions on some documents; a selector never throws.
      return null;
    }
  }

  #selectWithXPathJs(body: ParsedBody, document: XmlDocument): string | null {
    if (!this.#domAffordable(document)) return null;
    const dom = body.dom();
    if (dom === null) return null;
    const value = budgeted(this.expression, () => this.#evaluator.evaluate({ node: dom }).stringValue());
    return value === undefined ? null : emptyToNull(value);
  }

  /**
   * `XPATH '...'`: XPath's boolean() of the result (a node-set is true when not empty), or UNKNOWN
   * (null) when the body is not text or does not parse, so that NOT cannot make a malformed body
   * match.
   */
  test(message: Message): boolean | null {
    try {
      const body = parsedBodyOf(message);
      const document = body?.document;
      if (!document) return null;
      if (this.#condition !== null && !document.namespaced) return this.#testFast(body, document);
      const known = body.answers.get(this.#testKey);
      if (known !== undefined) return known as boolean | null;
      const answer = this.#testWithXPathJs(body, document);
      body.answers.set(this.#testKey, answer);
      return answer;
    } catch {
      return null;
    }
  }

  /** The fast path's boolean, or null (kept for the message, as for xpath.js) when it is over budget. */
  #testFast(body: ParsedBody, document: XmlDocument): boolean | null {
    const known = body.answers.get(this.#testKey);
    if (known !== undefined) return known as boolean | null;
    const answer = this.#condition!.test(document, xpathLimits().maxSteps);
    if (answer !== OVER_BUDGET) return answer;
    reportXPathLimit('maxSteps', this.expression);
    body.answers.set(this.#testKey, null);
    return null;
  }

  #testWithXPathJs(body: ParsedBody, document: XmlDocument): boolean | null {
    if (!this.#domAffordable(document)) return null;
    const dom = body.dom();
    if (dom === null) return null;
    return budgeted(this.expression, () => this.#evaluator.evaluate({ node: dom }).booleanValue()) ?? null;
  }
}

function emptyToNull(value: string): string | null {
  return value === '' ? null : value;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
