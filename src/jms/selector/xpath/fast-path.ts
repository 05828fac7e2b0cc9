/**
 * A fast path for the XPath forms selectors use most: `/a/b/c`, `/a/b[2]/c`, `/a/b[@x='y']/c`,
 * `//c`, `/a/b/@attr`, `/a/attribute::attr`, `/a/b/text()`, `*` name tests and `child::`. They are
 * evaluated on the element tape of xml-document.ts, stopping at the first node in document order,
 * which is all `string()` and `boolean()` need. Anything else (functions, other axes, unions,
 * whitespace, namespace prefixes) returns null from {@link compileFastPath} and goes to xpath.js.
 */
import {
  RECORD,
  attributeValue,
  childNodes,
  elementValue,
  hasName,
  type XmlDocument,
} from './xml-document.js';

type Predicate =
  | { readonly kind: 'position'; readonly position: number }
  | { readonly kind: 'attribute'; readonly name: string; readonly value: string | null };

interface Step {
  /** Preceded by `//`: the step applies to every descendant of the context, not only children. */
  readonly descendant: boolean;
  /** `text()` rather than an element name test. */
  readonly text: boolean;
  /** The element name, or null for `*` (and for text()). */
  readonly name: string | null;
  readonly predicates: readonly Predicate[];
}

/** The first node a path selects: an element's record, or the string of a text or attribute node. */
export type FirstNode = number | string | undefined;

/** A node a path selects: an element's record, or the string of a text or attribute node. */
export type SelectedNode = number | string;

/** A compiled simple path. */
export interface FastPath {
  /** The first selected node in document order, or undefined when none is. */
  first(document: XmlDocument): FirstNode;
  /**
   * Offers the selected nodes to `accept` in document order until it returns true; true when it
   * did. A node-set comparison is true when any node passes, so it stops at the first that does.
   */
  some(document: XmlDocument, accept: (node: SelectedNode) => boolean): boolean;
}

const NAME = /^[A-Za-z_\u00c0-\uffff][A-Za-z0-9_.\-\u00b7\u00c0-\uffff]*$/;

/** Compiles `expression` when it is one of the simple forms; null otherwise. */
export function compileFastPath(expression: string): FastPath | null {
  const parsed = parsePath(expression);
  return parsed === null ? null : new SimplePath(parsed.steps, parsed.attribute);
}

function parsePath(expression: string): { steps: Step[]; attribute: string | null } | null {
  if (/\s/.test(stripLiterals(expression))) return null;
  let rest = expression;
  let descendant = false;
  if (rest.startsWith('//')) {
    descendant = true;
    rest = rest.slice(2);
  } else if (rest.startsWith('/')) {
    rest = rest.slice(1);
  }
  const steps: Step[] = [];
  let attribute: string | null = null;
  while (true) {
    if (attribute !== null) return null;
    const parsed = parseStep(rest);
    if (parsed === null) return null;
    if (parsed.attribute !== null) {
      if (descendant) return null;
      attribute = parsed.attribute;
    } else {
      if (steps.length > 0 && steps[steps.length - 1]!.text) return null;
      steps.push({ descendant, text: parsed.text, name: parsed.name, predicates: parsed.predicates });
    }
    rest = parsed.rest;
    if (rest === '') break;
    if (rest.startsWith('//')) {
      descendant = true;
      rest = rest.slice(2);
    } else if (rest.startsWith('/')) {
      descendant = false;
      rest = rest.slice(1);
    } else {
      return null;
    }
  }
  if (steps.length === 0) return null;
  if (attribute !== null && steps[steps.length - 1]!.text) return null;
  return { steps, attribute };
}

/** The expression with the contents of its string literals removed, to look for white space outside them. */
function stripLiterals(expression: string): string {
  return expression.replace(/"[^"]*"|'[^']*'/g, '""');
}

interface ParsedStep {
  text: boolean;
  name: string | null;
  attribute: string | null;
  predicates: Predicate[];
  rest: string;
}

function parseStep(input: string): ParsedStep | null {
  const end = stepEnd(input);
  let head = input.slice(0, end);
  let rest = input.slice(end);
  const step: ParsedStep = { text: false, name: null, attribute: null, predicates: [], rest: '' };
  if (head.startsWith('@') || head.startsWith('attribute::')) {
    const name = head.slice(head.startsWith('@') ? 1 : 11);
    if (!NAME.test(name)) return null;
    step.attribute = name;
    step.rest = rest;
    return rest.startsWith('[') ? null : step;
  }
  if (head.startsWith('child::')) head = head.slice(7);
  if (head === 'text()') step.text = true;
  else if (head === '*') step.name = null;
  else if (NAME.test(head)) step.name = head;
  else return null;
  while (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return null;
    const predicate = parsePredicate(rest.slice(1, close));
    if (predicate === null) return null;
    step.predicates.push(predicate);
    rest = rest.slice(close + 1);
  }
  step.rest = rest;
  return step;
}

/** Where the step's name part ends: at its first predicate or the next `/`. */
function stepEnd(input: string): number {
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '[' || c === '/') return i;
  }
  return input.length;
}

function parsePredicate(body: string): Predicate | null {
  if (/^[1-9][0-9]{0,8}$/.test(body)) return { kind: 'position', position: Number(body) };
  const match = /^@([^=]+)(?:=(?:"([^"]*)"|'([^']*)'))?$/.exec(body);
  if (!match || !NAME.test(match[1]!)) return null;
  return { kind: 'attribute', name: match[1]!, value: match[2] ?? match[3] ?? null };
}

/** XPath's string value of what {@link FastPath.first} found. */
export function stringValue(document: XmlDocument, node: number | string): string {
  return typeof node === 'string' ? node : elementValue(document, node);
}

class SimplePath implements FastPath {
  readonly #steps: readonly Step[];
  readonly #attribute: string | null;
  readonly #last: number;
  /** Room per state for the position counters of its predicates. */
  readonly #width: number;

  constructor(steps: readonly Step[], attribute: string | null) {
    this.#steps = steps;
    this.#attribute = attribute;
    this.#last = steps.length - 1;
    this.#width = Math.max(0, ...steps.map((step) => step.predicates.length));
  }

  first(document: XmlDocument): FirstNode {
    let found: FirstNode;
    this.some(document, (node) => {
      found = node;
      return true;
    });
    return found;
  }

  some(document: XmlDocument, accept: (node: SelectedNode) => boolean): boolean {
    return this.#visit(document, [0], [0], accept);
  }

  /**
   * Walks `children` (element records and text node values) in document order with the set of
   * steps they may match (several when `//` is involved), offering each node that matches the
   * last step to `accept`; a node comes before its descendants, so the offers keep document order.
   * Each node is walked once, with all its states, so none is offered twice.
   */
  #visit(
    document: XmlDocument,
    children: readonly (number | string)[],
    states: readonly number[],
    accept: (node: SelectedNode) => boolean,
  ): boolean {
    let counts: number[] | null = null;
    for (const child of children) {
      const isText = typeof child === 'string';
      let next: number[] | null = null;
      for (let i = 0; i < states.length; i++) {
        const state = states[i]!;
        const step = this.#steps[state]!;
        if (step.descendant && !isText) next = addState(next, state);
        if (step.text ? !isText : isText || (step.name !== null && !hasName(document, child, step.name)))
          continue;
        if (step.predicates.length > 0) {
          counts ??= new Array<number>(states.length * this.#width).fill(0);
          if (!passes(document, step.predicates, child, counts, i * this.#width)) continue;
        }
        if (state === this.#last) {
          if (isText || this.#attribute === null) {
            if (accept(child)) return true;
          } else {
            const value = attributeValue(document, child, this.#attribute);
            if (value !== undefined && accept(value)) return true;
          }
        } else {
          next = addState(next, state + 1);
        }
      }
      if (
        next !== null &&
        this.#visit(document, this.#childrenOf(document, child as number, next), next, accept)
      )
        return true;
    }
    return false;
  }

  /** The children to walk: only the elements unless a text() step may apply to them. */
  #childrenOf(document: XmlDocument, element: number, states: readonly number[]): (number | string)[] {
    if (states.some((state) => this.#steps[state]!.text)) return childNodes(document, element);
    const tape = document.tape;
    const elements: number[] = [];
    for (let child = element + RECORD; child < tape[element + 5]!; child = tape[child + 5]!)
      elements.push(child);
    return elements;
  }
}

function addState(states: number[] | null, state: number): number[] {
  if (states === null) return [state];
  if (!states.includes(state)) states.push(state);
  return states;
}

/**
 * Applies predicates in order. A position counts the nodes that passed the node test and the
 * predicates before it, per context node, as XPath defines `item[@a='x'][2]`.
 */
function passes(
  document: XmlDocument,
  predicates: readonly Predicate[],
  node: number | string,
  counts: number[],
  base: number,
): boolean {
  for (let k = 0; k < predicates.length; k++) {
    const predicate = predicates[k]!;
    if (predicate.kind === 'position') {
      if (++counts[base + k]! !== predicate.position) return false;
    } else {
      if (typeof node === 'string') return false;
      const value = attributeValue(document, node, predicate.name);
      if (value === undefined || (predicate.value !== null && value !== predicate.value)) return false;
    }
  }
  return true;
}
