/**
 * A configuration file as parsed YAML that knows where every value came from: each problem is
 * reported as `file:line:col: path: what was expected`, where `path` is the dotted path the
 * validators use (`bridges[2].source.prefetch`). Environment references are substituted here,
 * node by node, so the places of substituted values (secrets) are known.
 */
import {
  type Document,
  LineCounter,
  type Node,
  type ParsedNode,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  parseDocument,
} from 'yaml';
import { type Substitution, hasReference, redact, substituteEnv } from './env.js';

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
  /** The content as plain data, references substituted; undefined when the YAML is malformed. */
  readonly data: unknown;
  /** YAML syntax errors, formatted; nothing else is checked when there are any. */
  readonly syntaxErrors: readonly string[];

  constructor(text: string, file: string, env: Readonly<Record<string, string | undefined>>) {
    this.file = file;
    this.#lines = new LineCounter();
    this.#document = parseDocument(text, { lineCounter: this.#lines, prettyErrors: false });
    this.syntaxErrors = this.#document.errors.map((error) => {
      const { line, col } = this.#lines.linePos(error.pos[0]);
      const what = error.message.split('\n')[0]!.replace(/ at line \d+, column \d+.*$/, '');
      return `${file}:${line}:${col}: ${what} (${SYNTAX_HINTS[error.code] ?? "check the indentation, quotes and ':' around here"})`;
    });
    if (this.syntaxErrors.length > 0) return;
    this.#walk(this.#document.contents, '', null, 0, env);
    this.data = this.#document.toJS({ maxAliasCount: 1000 }) as unknown;
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
    const path = problem.path === '' ? '' : `${problem.path}: `;
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

  #walk(
    node: unknown,
    path: string,
    key: Node | null,
    depth: number,
    env: Readonly<Record<string, string | undefined>>,
  ): void {
    if (depth > 100) return;
    let value = node as Node | null;
    if (isAlias(value)) value = (value.resolve(this.#document) as Node | undefined) ?? null;
    // A `key:` with nothing after it has a null scalar without a place; the key stands in for it.
    const placed = value?.range && value.range[0] !== value.range[1] ? value : null;
    this.#index.set(path, { value: placed, key });
    if (isMap(value)) {
      for (const pair of value.items) {
        const name = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        this.#walk(pair.value, path === '' ? name : `${path}.${name}`, pair.key as Node, depth + 1, env);
      }
    } else if (isSeq(value)) {
      value.items.forEach((item, index) => this.#walk(item, `${path}[${index}]`, null, depth + 1, env));
    } else if (isScalar(value) && typeof value.value === 'string' && hasReference(value.value)) {
      this.#substitute(value as Node & { value: string }, path, env);
    }
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
