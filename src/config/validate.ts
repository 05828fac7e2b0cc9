/**
 * Validates plain configuration data against the composed schema and fills in defaults. Every
 * problem is collected with its path; values that fail are left out, so later checks can still
 * look at the rest. Broker endpoints are validated by their connector's own schema through
 * `resolveConfig`, merged over the named connection they reference.
 */
import { type ConnectorDefinition, rangeProblems, resolveConfig } from '../spi/index.js';
import { type SchemaNode, type TaggedNode, type Variant, defaultOf, expectedOf } from './schema.js';
import type { Problem } from './yaml-source.js';

/** What validation needs besides the data. */
export interface ValidationContext {
  readonly problems: Problem[];
  /** Whether the value at a path was one `${VAR}`, so a string may stand for a number or boolean. */
  readonly isCoercible: (path: string) => boolean;
  /** Connections by name as written (validated when they are reached), for endpoints to merge over. */
  readonly connections: Map<string, { readonly type: string; readonly value: Record<string, unknown> }>;
}

/** A broker endpoint after validation. */
export interface ResolvedConnectorEndpoint {
  readonly type: string;
  readonly connector: ConnectorDefinition;
  /** The connection it was merged over, if any. */
  readonly connection?: string;
  /** The connector's resolved configuration; undefined when it has problems. */
  readonly config: unknown;
}

type Plain = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Plain =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** Validates `value` at `path` against `node`; returns the value with defaults, or undefined. */
export function resolveNode(
  node: SchemaNode,
  value: unknown,
  path: string,
  context: ValidationContext,
): unknown {
  if (value === undefined || value === null) {
    const fallback = defaultOf(node);
    if (fallback !== undefined) return fallback;
    if (node.required) context.problems.push({ path, message: `is required: ${node.description}` });
    if (node.type === 'object' && !node.required && !('optional' in node && node.optional))
      return resolveObject(node.fields, {}, path, context, undefined);
    return undefined;
  }
  switch (node.type) {
    case 'string':
      if (typeof value !== 'string') return fail(context, path, expectedOf(node));
      // The value is not quoted: written in the file, it is a secret that was never meant to be.
      if (node.fromEnvironment && !context.isCoercible(path)) {
        context.problems.push({
          path,
          message:
            'must come from an environment variable: write it as ${NAME} (the whole value) and set NAME, never the value itself',
        });
        return undefined;
      }
      if (node.pattern !== undefined && !new RegExp(node.pattern).test(value))
        return fail(context, path, `expected ${expectedOf(node)}`);
      return value;
    case 'integer':
    case 'number': {
      const number = coerceNumber(value, path, context);
      if (
        typeof number !== 'number' ||
        !Number.isFinite(number) ||
        (node.type === 'integer' && !Number.isInteger(number)) ||
        (node.minimum !== undefined && number < node.minimum) ||
        (node.maximum !== undefined && number > node.maximum)
      )
        return fail(context, path, `expected ${expectedOf(node)}`);
      return number;
    }
    case 'boolean': {
      const bool = coerceBoolean(value, path, context);
      return typeof bool === 'boolean' ? bool : fail(context, path, `expected ${expectedOf(node)}`);
    }
    case 'scalar':
      return typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value)
        ? value
        : fail(context, path, `expected ${expectedOf(node)}`);
    case 'enum':
      return typeof value === 'string' && node.values.includes(value)
        ? value
        : fail(context, path, `expected ${expectedOf(node)}`);
    case 'object':
      return resolveObject(node.fields, value, path, context, 'refused' in node ? node.refused : undefined);
    case 'array':
      if (!Array.isArray(value)) return fail(context, path, 'expected a list (items starting with -)');
      return value.map((item, index) => resolveNode(node.items, item, `${path}[${index}]`, context));
    case 'map': {
      if (!isPlainObject(value)) return fail(context, path, 'expected a mapping of names to settings');
      const keyPattern = 'keyPattern' in node ? node.keyPattern : undefined;
      const result: Plain = {};
      for (const [key, item] of Object.entries(value)) {
        if (keyPattern !== undefined && !new RegExp(keyPattern).test(key)) {
          context.problems.push({
            path: join(path, key),
            message: `name '${key}' is not valid (expected a name matching ${keyPattern})`,
            at: 'key',
          });
          continue;
        }
        result[key] = resolveNode(node.values, item, join(path, key), context);
      }
      return result;
    }
    case 'tagged':
      return resolveTagged(node, value, path, context);
    case 'union': {
      for (const variant of node.variants) {
        const probe: ValidationContext = { ...context, problems: [] };
        const resolved = resolveNode(variant, value, path, probe);
        if (probe.problems.length === 0) return resolved;
      }
      return fail(context, path, `expected ${expectedOf(node)}`);
    }
  }
}

function fail(context: ValidationContext, path: string, message: string): undefined {
  context.problems.push({ path, message: message.startsWith('expected') ? message : `expected ${message}` });
  return undefined;
}

function coerceNumber(value: unknown, path: string, context: ValidationContext): unknown {
  if (typeof value === 'string' && context.isCoercible(path) && value.trim() !== '') return Number(value);
  return value;
}

function coerceBoolean(value: unknown, path: string, context: ValidationContext): unknown {
  if (typeof value === 'string' && context.isCoercible(path)) {
    if (value === 'true') return true;
    if (value === 'false') return false;
  }
  return value;
}

function resolveObject(
  fields: Readonly<Record<string, SchemaNode>>,
  value: unknown,
  path: string,
  context: ValidationContext,
  refused: Readonly<Record<string, string>> | undefined,
): Plain | undefined {
  if (!isPlainObject(value))
    return fail(context, path, `expected a mapping (${Object.keys(fields).join(', ')})`);
  reportUnknownKeys(Object.keys(value), fields, path, context, refused);
  const result: Plain = {};
  for (const [key, field] of Object.entries(fields)) {
    const resolved = resolveNode(field, value[key], join(path, key), context);
    if (resolved !== undefined) result[key] = resolved;
  }
  for (const problem of rangeProblems(fields, value, result, path))
    context.problems.push({ path: problem.path, message: problem.expected });
  return result;
}

function reportUnknownKeys(
  keys: readonly string[],
  fields: Readonly<Record<string, unknown>>,
  path: string,
  context: ValidationContext,
  refused: Readonly<Record<string, string>> | undefined,
): void {
  for (const key of keys) {
    if (Object.hasOwn(fields, key)) continue;
    const reason = refused && Object.hasOwn(refused, key) ? refused[key] : undefined;
    context.problems.push({
      path: join(path, key),
      message: reason ?? unknownSetting(key, Object.keys(fields)),
      at: 'key',
    });
  }
}

/** `unknown setting (did you mean 'prefetch'? known: a, b, c)`. */
export function unknownSetting(key: string, known: readonly string[]): string {
  const guess = closest(key, known);
  const hint = guess === undefined ? '' : `did you mean '${guess}'? `;
  return `unknown setting (${hint}known: ${[...known].sort().join(', ')})`;
}

function resolveTagged(node: TaggedNode, value: unknown, path: string, context: ValidationContext): unknown {
  const known = Object.keys(node.variants).sort();
  if (!isPlainObject(value))
    return fail(context, path, `expected a mapping with ${node.tag}: ${known.join(' | ')}`);
  const tag = value[node.tag];
  if (tag === undefined || tag === null) {
    context.problems.push({
      path: join(path, node.tag),
      message: `is required: the ${node.tagNoun} (${known.join(', ')})`,
    });
    return undefined;
  }
  // Own keys only: a tag like 'constructor' must not find Object's.
  const variant =
    typeof tag === 'string' && Object.hasOwn(node.variants, tag) ? node.variants[tag] : undefined;
  if (variant === undefined) {
    const guess = typeof tag === 'string' ? closest(tag, known) : undefined;
    context.problems.push({
      path: join(path, node.tag),
      message: `unknown ${node.tagNoun} ${typeof tag === 'string' ? `'${tag}'` : JSON.stringify(tag)} (${guess === undefined ? '' : `did you mean '${guess}'? `}known: ${known.join(', ')})`,
    });
    return undefined;
  }
  const rest: Plain = { ...value };
  delete rest[node.tag];
  if (variant.connector !== undefined)
    return resolveConnectorVariant(variant, tag as string, rest, path, context);
  const resolved = resolveObject(variant.fields, rest, path, context, undefined);
  return resolved === undefined ? undefined : { [node.tag]: tag, ...resolved };
}

/**
 * A broker endpoint or a connection. A connection is checked on its own, without required fields
 * (an endpoint supplies them) and remembered; an endpoint is merged over its connection and
 * resolved with the connector's schema, and problems of fields the connection supplied are
 * left to the connection's own report.
 */
function resolveConnectorVariant(
  variant: Variant,
  type: string,
  value: Plain,
  path: string,
  context: ValidationContext,
): ResolvedConnectorEndpoint | Plain | undefined {
  const connector = variant.connector!;
  if (!variant.connectionRef) {
    const own = coerceFields(connector.config.fields, value, path, context);
    const { errors } = resolveConfig(connector.config, own, path);
    for (const error of errors)
      if (!error.expected.startsWith('is required'))
        context.problems.push(problemOf(error.path, error.expected));
    context.connections.set(path.slice(path.lastIndexOf('.') + 1), { type, value: own });
    return { type, ...own };
  }
  const { connection, ...rest } = value;
  const own = coerceFields(connector.config.fields, rest, path, context);
  let base: Plain = {};
  let connectionName: string | undefined;
  /** A broken reference: the fields it would have supplied are not reported missing. */
  let broken = false;
  if (connection !== undefined) {
    broken = true;
    const found = typeof connection === 'string' ? context.connections.get(connection) : undefined;
    if (typeof connection !== 'string') {
      context.problems.push({ path: join(path, 'connection'), message: 'expected the name of a connection' });
    } else if (found === undefined) {
      const known = [...context.connections.keys()].sort();
      context.problems.push({
        path: join(path, 'connection'),
        message: `unknown connection '${connection}' (${known.length === 0 ? 'no connections are declared under connections:' : `known: ${known.join(', ')}`})`,
      });
    } else if (found.type !== type) {
      context.problems.push({
        path: join(path, 'connection'),
        message: `connection '${connection}' is of type '${found.type}', this endpoint of type '${type}'`,
      });
    } else {
      base = found.value;
      connectionName = connection;
      broken = false;
    }
  }
  const merged = deepMerge(base, own);
  const { config, errors } = resolveConfig(connector.config, merged, path);
  for (const error of errors) {
    const top = error.path.slice(path.length + 1).split(/[.[]/)[0] ?? '';
    if (Object.hasOwn(base, top) && !Object.hasOwn(own, top)) continue;
    if (broken && error.expected.startsWith('is required')) continue;
    const hint = !error.expected.startsWith('is required')
      ? ''
      : connectionName === undefined
        ? ' (set it here, or in a connection named with `connection:`)'
        : ` (set it here or in connection '${connectionName}')`;
    context.problems.push(problemOf(error.path, `${error.expected}${hint}`));
  }
  return {
    type,
    connector,
    ...(connectionName === undefined ? {} : { connection: connectionName }),
    config,
  } satisfies ResolvedConnectorEndpoint;
}

function problemOf(path: string, expected: string): Problem {
  return expected.startsWith('unknown setting')
    ? { path, message: expected, at: 'key' }
    : { path, message: expected };
}

/** Strings from whole `${VAR}` references become numbers or booleans where the connector's schema wants them. */
function coerceFields(
  fields: Readonly<Record<string, SchemaNode>>,
  value: Plain,
  path: string,
  context: ValidationContext,
): Plain {
  const result: Plain = { ...value };
  for (const [key, item] of Object.entries(value)) {
    const field = Object.hasOwn(fields, key) ? fields[key] : undefined;
    const at = join(path, key);
    if (field === undefined) continue;
    if (
      (field.type === 'integer' || field.type === 'number') &&
      typeof item === 'string' &&
      context.isCoercible(at)
    ) {
      const number = Number(item);
      if (item.trim() !== '' && Number.isFinite(number)) result[key] = number;
    } else if (field.type === 'boolean' && typeof item === 'string' && context.isCoercible(at)) {
      if (item === 'true' || item === 'false') result[key] = item === 'true';
    } else if (field.type === 'object' && isPlainObject(item)) {
      result[key] = coerceFields(field.fields, item, at, context);
    }
  }
  return result;
}

function deepMerge(base: Plain, over: Plain): Plain {
  const result: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const under = result[key];
    result[key] = isPlainObject(under) && isPlainObject(value) ? deepMerge(under, value) : value;
  }
  return result;
}

/** The known name closest to `key` when it is a plausible typo (edit distance ≤ 2, or a case slip). */
function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === key.toLowerCase() ? 0 : editDistance(key, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.min(2, Math.floor(key.length / 2)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    previous = current;
  }
  return previous[b.length]!;
}
