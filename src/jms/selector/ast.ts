/**
 * The selector syntax tree. Every node keeps its source span so the explanation tree (CLI) can
 * show each sub-expression as the user wrote it. The tree is compiled once into closures
 * (compiler.ts) and never walked when matching.
 */
import type { CompiledXPath } from './xpath/compiled-xpath.js';

/** A literal's value: strings, booleans, NULL, exact numerics (bigint) and approximate ones (number). */
export type LiteralValue = string | boolean | bigint | number | null;

/** Comparison operators. */
export type ComparisonOperator = '=' | '<>' | '<' | '>' | '<=' | '>=';

/** Arithmetic operators. */
export type ArithmeticOperator = '+' | '-' | '*' | '/';

interface Span {
  /** 0-based offset of the first character. */
  readonly start: number;
  /** 0-based offset just past the last character. */
  readonly end: number;
}

/** One node of the tree. */
export type SelectorNode =
  | (Span & { readonly kind: 'literal'; readonly value: LiteralValue })
  | (Span & { readonly kind: 'identifier'; readonly name: string })
  /** `JMS_BEA_SELECT('xpath', expr)`: a string or NULL (SEL-4). */
  | (Span & { readonly kind: 'xpath-select'; readonly xpath: CompiledXPath })
  /** `XPATH 'expr'` (ActiveMQ/Artemis): TRUE, FALSE or UNKNOWN (SEL-4). */
  | (Span & { readonly kind: 'xpath-test'; readonly xpath: CompiledXPath })
  | (Span & { readonly kind: 'negate'; readonly operand: SelectorNode })
  | (Span & {
      readonly kind: 'arithmetic';
      readonly operator: ArithmeticOperator;
      readonly left: SelectorNode;
      readonly right: SelectorNode;
    })
  | (Span & {
      readonly kind: 'comparison';
      readonly operator: ComparisonOperator;
      readonly left: SelectorNode;
      readonly right: SelectorNode;
    })
  | (Span & {
      readonly kind: 'between';
      readonly negated: boolean;
      readonly operand: SelectorNode;
      readonly low: SelectorNode;
      readonly high: SelectorNode;
    })
  | (Span & {
      readonly kind: 'in';
      readonly negated: boolean;
      readonly operand: SelectorNode;
      readonly values: readonly string[];
    })
  | (Span & {
      readonly kind: 'like';
      readonly negated: boolean;
      readonly operand: SelectorNode;
      readonly pattern: string;
      readonly escape: string | null;
    })
  | (Span & { readonly kind: 'is-null'; readonly negated: boolean; readonly operand: SelectorNode })
  | (Span & { readonly kind: 'not'; readonly operand: SelectorNode })
  /** AND and OR chains are n-ary so a long chain cannot overflow the stack when evaluated. */
  | (Span & { readonly kind: 'and' | 'or'; readonly operands: readonly SelectorNode[] });

/** The children of a node, in source order (for the explanation tree). */
export function childrenOf(node: SelectorNode): readonly SelectorNode[] {
  switch (node.kind) {
    case 'literal':
    case 'identifier':
    case 'xpath-select':
    case 'xpath-test':
      return [];
    case 'negate':
    case 'not':
    case 'in':
    case 'like':
    case 'is-null':
      return [node.operand];
    case 'arithmetic':
    case 'comparison':
      return [node.left, node.right];
    case 'between':
      return [node.operand, node.low, node.high];
    case 'and':
    case 'or':
      return node.operands;
  }
}
