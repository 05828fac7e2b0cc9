/**
 * A configuration file as parsed YAML that knows where every value came from: each problem is
 * reported as `file:line:col: path: what was expected`, where `path` is the dotted path the
 * validators use (`bridges[2].source.prefetch`). Environment references are substituted here,
 * node by node, so the places of substituted values (secrets) are known.
 */
import {
  type Alias,
  type Document,
  LineCounter,
  type Node,
  type Pair,
  type ParsedNode,
  isAlias,
  isMap,
  type YAMLMap,
  isScalar,
  isSeq,
  parseDocument,
  visit,
} from 'yaml';
import { type Substitution, hasReference, redact, substituteEnv } from './env.js';
import { MAX_ALIASED_VALUES, MAX_NESTING, TOO_DEEP, checkDocumentText } from './limits.js';

/** One configuration problem, before it is given its place in the file. */
export interface Problem {
  /** Dotted path to the value: `bridges[0].source.url`; `''` for the whole file. */
  readonly path: string;
  /** What was expected and how to fix it. */
  readonly message: string;
  /** Point at the key (unknown settings) rather than the value. */
  readonly at?: 'key' | 'value';
}

/** How to fix the YAML errors users meet most. */
const SYNTAX_HINTS: Partial<Record<string, string>> = {
  DUPLICATE_KEY: 'remove or rename one of them',
  TAB_AS_INDENT: 'indent with spaces',
};

/** How far the walk has expanded the document. */
interface Expansion {
  /** Values reached through aliases so far, each as often as an alias leads to it. */
  values: number;
  /** The alias of the document's own tree being followed now, if any. */
  alias: Node | null;
  /** Whether the values passed the limit: the walk stopped. */
  exceeded: boolean;
}

interface Located {
  readonly value: Node | null;
  readonly key: Node | null;
}

/** A parsed configuration file. */
export class ConfigSource {
  readonly file: string;
  readonly #document: Document.Parsed<ParsedNode>;
  readonly #lines: LineCounter;
  readonly #index = new Map<string, Located>();
  readonly #secrets = new Set<string>();
  /** Paths whose whole value was one `${VAR}`: may stand for a number or a boolean. */
  readonly #coercible = new Set<string>();
  /** Paths whose reference could not be substituted: their other problems are noise. */
  readonly #broken = new Set<string>();
  /** Each scalar is substituted once, however many aliases lead to it. */
  readonly #substituted = new WeakMap<Node, Substitution>();
  readonly #problems: Problem[] = [];
  /** Collections whose structure was checked: each once, however many aliases lead to it. */
  readonly #checked = new WeakSet<Node>();
  /** Each alias of the document with what it stands for, filled by the first {@link #resolve}. */
  readonly #aliases = new Map<Alias, Node | null>();
  /** The content as plain data, references substituted; undefined when the YAML is malformed. */
  readonly data: unknown;
  /**
   * YAML syntax errors, repeated keys, keys that are not names and exceeded limits, formatted;
   * nothing else is checked when there are any.
   */
  readonly syntaxErrors: readonly string[];

  constructor(text: string, file: string, env: Readonly<Record<string, string | undefined>>) {
    this.file = file;
    this.#lines = new LineCounter();
    const limit = checkDocumentText(text);
    // Keys are checked for uniqueness in the walk: the parser's own check is quadratic in the keys.
    this.#document = parseDocument(limit ? '' : text, {
      lineCounter: this.#lines,
      prettyErrors: false,
      uniqueKeys: false,
      logLevel: 'error',
      // Plain YAML 1.2 whatever the file's `%YAML` directive says: no `<<` merges, no binary, set or timestamp types.
      schema: 'core',
      merge: false,
    });
    if (limit) {
      const before = text.slice(0, limit.offset);
      const line = before.split('\n').length;
      const col = limit.offset - before.lastIndexOf('\n');
      this.syntaxErrors = [`${file}:${line}:${col}: ${limit.message}`];
      return;
    }
    const parseErrors = this.#document.errors.map((error) => {
      const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, '');
      return this.#at(
        error.pos[0],
        `${what} (${SYNTAX_HINTS[error.code] ?? "check the indentation, quotes and ':' around here"})`,
      );
    });
    if (parseErrors.length > 0) {
      this.syntaxErrors = parseErrors;
      return;
    }
    // Sizes first, in time linear in the file: a bomb is refused without expanding any of it.
    const bomb = this.#firstAliasPastLimit();
    if (bomb !== undefined) {
      this.syntaxErrors = [
        this.#expansionProblem({ values: MAX_ALIASED_VALUES + 1, alias: bomb, exceeded: true }),
      ];
      return;
    }
    const structure: string[] = [];
    const expansion: Expansion = { values: 0, alias: null, exceeded: false };
    const data = this.#walk(this.#document.contents, '', null, 0, env, structure, expansion);
    this.syntaxErrors = expansion.exceeded ? [...structure, this.#expansionProblem(expansion)] : structure;
    // The walk builds the data itself: the library's toJS resolves each alias by a search
    // through every anchor and alias before it, quadratic in the aliases.
    if (this.syntaxErrors.length === 0) this.data = data;
  }

  /** Problems found while substituting environment references. */
  get envProblems(): readonly Problem[] {
    return this.#problems;
  }

  /** Values that came from environment references: never log or echo them. */
  get secrets(): ReadonlySet<string> {
    return this.#secrets;
  }

  /** Whether the value at `path` was exactly one `${VAR}` (so `port: ${PORT}` may be a number). */
  isCoercible(path: string): boolean {
    return this.#coercible.has(path);
  }

  /** Whether a problem at `path` follows from a reference that could not be substituted. */
  isBroken(path: string): boolean {
    for (let current: string | undefined = path; current !== undefined; current = parent(current))
      if (this.#broken.has(current)) return true;
    return false;
  }

  /** `file:line:col: path: message`, at the nearest node the file has, secrets masked. */
  format(problem: Problem): string {
    const { line, col } = this.position(problem.path, problem.at ?? 'value');
    const path = problem.path === '' ? '' : `${showInvisible(problem.path)}: `;
    return `${this.file}:${line}:${col}: ${redact(`${path}${problem.message}`, this.#secrets)}`;
  }

  /** Line and column (1-based) of the value (or key) at `path`, or of its nearest ancestor in the file. */
  position(path: string, at: 'key' | 'value'): { line: number; col: number } {
    for (let current: string | undefined = path; current !== undefined; current = parent(current)) {
      const located = this.#index.get(current);
      if (!located) continue;
      const node = current === path && at === 'key' ? (located.key ?? located.value) : located.value;
      const offset = node?.range?.[0] ?? located.key?.range?.[0];
      if (offset !== undefined) return this.#lines.linePos(offset);
    }
    return { line: 1, col: 1 };
  }

  /** `file:line:col: message` at an offset of the text. */
  #at(offset: number, message: string): string {
    const { line, col } = this.#lines.linePos(offset);
    return `${this.file}:${line}:${col}: ${message}`;
  }

  /**
   * Builds the plain data of the document (aliases expanded, references substituted) and indexes
   * every path. Counts the values it reaches through aliases (each use of an alias counts its
   * whole value again) and stops as soon as they pass {@link MAX_ALIASED_VALUES}, setting
   * `expansion.exceeded`. Keys that repeat, keys that are not names and nesting past
   * {@link MAX_NESTING} are added to `structure`.
   */
  #walk(
    node: unknown,
    path: string,
    key: Node | null,
    depth: number,
    env: Readonly<Record<string, string | undefined>>,
    structure: string[],
    expansion: Expansion,
  ): unknown {
    let value = node as Node | null;
    let outermost = false;
    if (isAlias(value)) {
      if (expansion.alias === null) {
        expansion.alias = value;
        outermost = true;
      }
      value = this.#resolve(value);
    }
    if (expansion.alias !== null && ++expansion.values > MAX_ALIASED_VALUES) {
      expansion.exceeded = true;
      return undefined;
    }
    // A `key:` with nothing after it has a null scalar without a place; the key stands in for it.
    const placed = value?.range && value.range[0] !== value.range[1] ? value : null;
    this.#index.set(path, { value: placed, key });
    let data: unknown = null;
    if ((isMap(value) || isSeq(value)) && depth >= MAX_NESTING) {
      if (!this.#checked.has(value)) structure.push(this.#at(value.range?.[0] ?? 0, TOO_DEEP));
      this.#checked.add(value);
    } else if (isMap(value)) {
      this.#checkKeys(value, structure);
      const object: Record<string, unknown> = {};
      for (const pair of value.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const item = this.#walk(
          pair.value,
          path === '' ? name : `${path}.${name}`,
          pair.key as Node,
          depth + 1,
          env,
          structure,
          expansion,
        );
        if (expansion.exceeded) break;
        // A key like `__proto__` is data here, never the object's prototype.
        Object.defineProperty(object, name, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      data = object;
    } else if (isSeq(value)) {
      const list: unknown[] = [];
      for (const [index, item] of value.items.entries()) {
        list.push(this.#walk(item, `${path}[${index}]`, null, depth + 1, env, structure, expansion));
        if (expansion.exceeded) break;
      }
      data = list;
    } else if (isScalar(value)) {
      if (typeof value.value === 'string' && hasReference(value.value))
        this.#substitute(value as Node & { value: string }, path, env);
      data = value.value;
    }
    if (outermost && !expansion.exceeded) expansion.alias = null;
    return data;
  }

  /**
   * The alias of the document's own tree (in file order) at which the values aliases stand for
   * pass {@link MAX_ALIASED_VALUES}, from each node's expanded size, computed once per node.
   */
  #firstAliasPastLimit(): Alias | undefined {
    const sizes = new Map<Node, number>();
    let aliased = 0;
    const visit = (node: unknown, depth: number): Alias | undefined => {
      if (depth > MAX_NESTING) return undefined;
      if (isAlias(node)) {
        const target = this.#resolve(node);
        aliased += target === null ? 1 : this.#expandedSize(target, sizes, 0);
        return aliased > MAX_ALIASED_VALUES ? node : undefined;
      }
      if (isMap(node) || isSeq(node))
        for (const item of node.items) {
          const found = visit(isMap(node) ? (item as Pair).value : item, depth + 1);
          if (found) return found;
        }
      return undefined;
    };
    return visit(this.#document.contents, 0);
  }

  /** How many values `node` stands for with its aliases expanded (capped: only "more than the limit" matters). */
  #expandedSize(node: Node, sizes: Map<Node, number>, depth: number): number {
    const known = sizes.get(node);
    if (known !== undefined) return known;
    // An alias inside its own anchor (a cycle) counts once; deeper than the nesting limit is refused anyway.
    sizes.set(node, 1);
    let size = 1;
    if ((isMap(node) || isSeq(node)) && depth <= MAX_NESTING)
      for (const item of node.items) {
        const child = (isMap(node) ? (item as Pair).value : item) as Node | null;
        const target = isAlias(child) ? this.#resolve(child) : child;
        if (target)
          size = Math.min(size + this.#expandedSize(target, sizes, depth + 1), MAX_ALIASED_VALUES + 1);
      }
    sizes.set(node, size);
    return size;
  }

  /**
   * What an alias stands for: the last node before it with its anchor. The anchors are found in
   * one pass over the document, the first time an alias is resolved (the library's own lookup
   * searches the document once per alias).
   */
  #resolve(alias: Alias): Node | null {
    if (this.#aliases.size === 0) {
      const anchors = new Map<string, Node>();
      visit(this.#document, {
        Node: (_key, node) => {
          if (isAlias(node)) this.#aliases.set(node, anchors.get(node.source) ?? null);
          else if (node.anchor) anchors.set(node.anchor, node);
        },
      });
    }
    return this.#aliases.get(alias) ?? null;
  }

  /** Each mapping once, however many aliases lead to it: its keys are names, each once. */
  #checkKeys(map: YAMLMap, structure: string[]): void {
    if (this.#checked.has(map)) return;
    this.#checked.add(map);
    const seen = new Set<string>();
    for (const pair of map.items) {
      const offset = (pair.key as Node | null)?.range?.[0] ?? map.range?.[0] ?? 0;
      if (!isScalar(pair.key) || (pair.key.value !== null && typeof pair.key.value === 'object')) {
        structure.push(
          this.#at(offset, 'a key must be a name, not a mapping or list (write it as a plain name)'),
        );
        continue;
      }
      const name = String(pair.key.value);
      if (seen.has(name))
        structure.push(
          this.#at(offset, `key '${name}' appears twice in this mapping (${SYNTAX_HINTS.DUPLICATE_KEY})`),
        );
      seen.add(name);
    }
  }

  /** Where the aliases expanded past the limit: the alias of the document's own tree that led there. */
  #expansionProblem(expansion: Expansion): string {
    const alias = expansion.alias;
    const name = alias && isAlias(alias) ? `'*${alias.source}'` : '';
    return this.#at(
      alias?.range?.[0] ?? 0,
      `alias ${name} takes the values aliases stand for past the limit of ${MAX_ALIASED_VALUES} (aliases that repeat aliases multiply, as in a "billion laughs"): use fewer aliases, or write the values out`,
    );
  }

  #substitute(
    node: Node & { value: string },
    path: string,
    env: Readonly<Record<string, string | undefined>>,
  ): void {
    let result = this.#substituted.get(node);
    if (result === undefined) {
      result = substituteEnv(node.value, env);
      this.#substituted.set(node, result);
      for (const message of result.errors) this.#problems.push({ path, message });
    }
    if (result.errors.length > 0) {
      this.#broken.add(path);
      return;
    }
    node.value = result.value;
    if (result.substituted) this.#secrets.add(result.value);
    if (result.whole) this.#coercible.add(path);
  }
}

/** `a.b[2].c` → `a.b[2]` → `a.b` → `a` → `''` → undefined. */
export function parent(path: string): string | undefined {
  if (path === '') return undefined;
  const cut = Math.max(path.lastIndexOf('.'), path.lastIndexOf('['));
  return cut <= 0 ? '' : path.slice(0, cut);
}

/** Control, format and unusual space characters in a key, which a terminal would not show. */
const INVISIBLE = /[\p{C}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;

/** `\ufeffbridges` → `\u{feff}bridges`: a key that differs from a known one only by such characters shows how. */
function showInvisible(path: string): string {
  return path.replace(INVISIBLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
}
