/**
 * xpath.js, loaded once for the gateway's own XPath evaluation (compiled-xpath.ts), with the
 * changes that keep its cost linear and its constant small. Only this module loads xpath.js (the
 * version is pinned), so the changes of its prototypes are confined to the gateway's evaluation;
 * each keeps the results xpath.js gives.
 */
import { createRequire } from 'node:module';
import { XPATH_NUMBER } from './fast-condition.js';

export interface XPathResult {
  stringValue(): string;
  booleanValue(): boolean;
}
export interface ParsedXPath {
  /** The parsed expression tree. */
  readonly expression: unknown;
  evaluate(options: { node: unknown }): XPathResult;
}
export interface NodeTest {
  matches(node: unknown, context: unknown): boolean;
}
interface XPathModule {
  parse(expression: string): ParsedXPath;
  /** The class of location steps in the parsed tree; each has the `nodeTest` every visited node goes through. */
  Step: abstract new (...args: never[]) => { nodeTest: NodeTest };
  /** The node-set class. */
  XNodeSet: { prototype: NodeSet; new (): NodeSet & { addArray(nodes: unknown[]): void } };
  /** The number class; `numberFormat` decides which strings number() reads. */
  XNumber: { prototype: { numberFormat: RegExp } };
  /** The class of path expressions. */
  PathExpr: PathExprClass;
  /** The evaluation context class. */
  XPathContext: { prototype: { extend(properties: object): object } };
  /** The function table every context gets. */
  FunctionResolver: { prototype: FunctionTable };
}
interface PathExprClass {
  prototype: PathExpression;
  applyLocationPath(locationPath: unknown, context: object, nodes: unknown[]): unknown[];
}
interface PathExpression {
  readonly locationPath: unknown;
  evaluate(context: object): unknown;
  applyFilter(context: object, copy: object): { nodes?: unknown[]; nonNodes?: unknown };
}
interface FunctionTable {
  functions: Record<string, unknown>;
  // Function properties with an explicit `this`: the originals are kept and called on a table.
  addStandardFunctions: (this: FunctionTable) => void;
  addFunction: (this: FunctionTable, namespace: string, localName: string, implementation: unknown) => void;
}
interface NodeSet {
  nodes: unknown[];
  size: number;
  tree: unknown;
  add(node: unknown): void;
}

// Loaded through require with a local interface: the package's typings pull the DOM library into
// the whole program, and `parse` (compile once, evaluate many) is not in them anyway.
export const xpath = createRequire(import.meta.url)('xpath') as XPathModule;

/**
 * xpath.js adds each node to a node-set after comparing it with every node already there, so a
 * step selecting n nodes costs n² (40,000 items: seconds). Membership is kept in a set once a
 * node-set grows past a few nodes, which makes adding O(1) with the same result: nodes unique
 * by identity, in insertion order. Only this module loads xpath.js (version pinned), so the
 * change of its prototype is confined to the gateway's own XPath evaluation.
 */
const members = new WeakMap<NodeSet, Set<unknown>>();
const LINEAR_MEMBERSHIP = 16;
xpath.XNodeSet.prototype.add = function add(this: NodeSet, node: unknown): void {
  let seen = members.get(this);
  if (seen === undefined) {
    if (this.nodes.length < LINEAR_MEMBERSHIP) {
      if (this.nodes.includes(node)) return;
    } else {
      seen = new Set(this.nodes);
      members.set(this, seen);
    }
  }
  if (seen !== undefined) {
    if (seen.has(node)) return;
    seen.add(node);
  }
  this.tree = null;
  this.nodes.push(node);
  this.size += 1;
};

/**
 * xpath.js makes a new context for every path and predicate evaluated, and each new context a
 * new function resolver that copies the 27 standard functions into its own table: on a 2 KB body
 * that is most of an evaluation's time and garbage. The standard table is built once and shared;
 * adding a function to a resolver copies it first, so no resolver sees another's additions.
 */
const functionResolver = xpath.FunctionResolver.prototype;
const addStandardFunctions = functionResolver.addStandardFunctions;
const standardFunctions: Record<string, unknown> = {};
addStandardFunctions.call({ functions: standardFunctions } as FunctionTable);
Object.freeze(standardFunctions);
functionResolver.addStandardFunctions = function shareStandardFunctions(this: FunctionTable): void {
  this.functions = standardFunctions;
};
const addFunction = functionResolver.addFunction;
functionResolver.addFunction = function addToOwnTable(
  this: FunctionTable,
  namespace,
  localName,
  implementation,
) {
  if (this.functions === standardFunctions) this.functions = { ...standardFunctions };
  addFunction.call(this, namespace, localName, implementation);
};

/**
 * `extend` copies a context onto a fresh one built by the constructor (three new resolvers) only
 * to overwrite them with the copied ones: the copy alone, on the same prototype, is the same
 * context.
 */
const contextPrototype = xpath.XPathContext.prototype;
contextPrototype.extend = function extend(this: object, properties: object): object {
  return Object.assign(Object.create(contextPrototype) as object, this, properties);
};

/**
 * A path expression copies its context onto a new one built by the constructor (the same waste
 * as `extend`) with a generic for-in copy that took a fifth of an evaluation on a 2 KB body. The
 * method is xpath.js's own (0.0.34), with the copy made as `extend` above makes it.
 */
xpath.PathExpr.prototype.evaluate = function evaluate(this: PathExpression, context: object): unknown {
  const copy = Object.assign(Object.create(contextPrototype) as object, context);
  const filtered = this.applyFilter(context, copy);
  if ('nonNodes' in filtered) return filtered.nonNodes;
  const set = new xpath.XNodeSet();
  set.addArray(xpath.PathExpr.applyLocationPath(this.locationPath, copy, filtered.nodes!));
  return set;
};

/**
 * number() of a string, as XPath 1.0 defines it (section 4.4): optional XML white space, an
 * optional minus, `Digits ('.' Digits?)? | '.' Digits`, optional XML white space. xpath.js reads
 * no `5.` and takes any Unicode white space; with the grammar of the standard it agrees with the
 * fast path (fast-condition.ts) on every string.
 */
xpath.XNumber.prototype.numberFormat = XPATH_NUMBER;
