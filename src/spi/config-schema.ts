/**
 * A small schema language for connector and engine settings. One schema per connector sits next
 * to its code; the gateway's root schema and the JSON Schema for editors are composed from them,
 * and the configuration reference is generated from the descriptions.
 */

/** One configuration field. */
export type FieldSpec =
  | (ScalarField<'string', string> & {
      readonly pattern?: string;
      readonly secret?: boolean;
      /** Only a whole `${ENV_VAR}` reference is accepted: the value itself never sits in the file. */
      readonly fromEnvironment?: boolean;
    })
  | (ScalarField<'integer' | 'number', number> & {
      readonly minimum?: number;
      readonly maximum?: number;
      /**
       * A sibling field this one may not be below (`maxMs` at least `initialMs`), checked when
       * both have a value, written or default.
       */
      readonly atLeast?: string;
    })
  | ScalarField<'boolean', boolean>
  | (ScalarField<'enum', string> & { readonly values: readonly string[] })
  /** A string, number or boolean as written: broker arguments whose type the broker checks. */
  | ScalarField<'scalar', string | number | boolean>
  | (FieldBase & {
      readonly type: 'object';
      readonly fields: Readonly<Record<string, FieldSpec>>;
      /** Absent means "none" (a feature that is off) instead of its fields with their defaults. */
      readonly optional?: boolean;
    })
  | (FieldBase & { readonly type: 'array'; readonly items: FieldSpec })
  | (FieldBase & { readonly type: 'map'; readonly values: FieldSpec });

interface FieldBase {
  /** What it is, for docs and editor hints. */
  readonly description: string;
  readonly required?: boolean;
}

type ScalarField<T extends string, V> = FieldBase & { readonly type: T; readonly default?: V };

/** The schema of an endpoint's (or any block's) configuration, typed by what it resolves to. */
export interface ConfigSchema<C> {
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Phantom type: what a validated configuration looks like. */
  readonly __type?: C;
}

/** Declares a schema with its resolved type. */
export function defineSchema<C>(fields: Record<string, FieldSpec>): ConfigSchema<C> {
  return { fields };
}

/** A value that does not fit its schema, with the path to it. */
export class ConfigValidationError extends Error {
  constructor(
    /** Dotted path to the value: `routes[2].source.prefetch`. */
    readonly path: string,
    /** What was expected: `expected an integer >= 1`. */
    readonly expected: string,
  ) {
    super(`${path}: ${expected}`);
    this.name = 'ConfigValidationError';
  }
}

/**
 * Validates a plain value against a schema and fills in defaults. Unknown keys are errors. Every
 * problem is collected, each with its path.
 */
export function resolveConfig<C>(
  schema: ConfigSchema<C>,
  value: unknown,
  path: string,
): { config?: C; errors: ConfigValidationError[] } {
  const errors: ConfigValidationError[] = [];
  const config = resolveObject(schema.fields, value, path, errors) as C | undefined;
  return errors.length === 0 && config !== undefined ? { config, errors } : { errors };
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

function resolveObject(
  fields: Readonly<Record<string, FieldSpec>>,
  value: unknown,
  path: string,
  errors: ConfigValidationError[],
): Record<string, unknown> | undefined {
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    errors.push(new ConfigValidationError(path, 'expected a mapping'));
    return undefined;
  }
  const input = value as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(input)) {
    if (!Object.hasOwn(fields, key))
      errors.push(
        new ConfigValidationError(
          join(path, key),
          `unknown setting (known: ${Object.keys(fields).sort().join(', ')})`,
        ),
      );
  }
  for (const [key, field] of Object.entries(fields)) {
    const resolved = resolveField(field, input[key], join(path, key), errors);
    if (resolved !== undefined) result[key] = resolved;
  }
  errors.push(...rangeProblems(fields, input, result, path));
  return result;
}

/**
 * Fields below the sibling they must be at least (`atLeast`). The problem is reported where the
 * user wrote a value: at the field when it was written, else at the sibling, naming the default.
 */
export function rangeProblems(
  fields: Readonly<Record<string, { readonly type: string; readonly atLeast?: string }>>,
  written: Readonly<Record<string, unknown>>,
  resolved: Readonly<Record<string, unknown>>,
  path: string,
): ConfigValidationError[] {
  const problems: ConfigValidationError[] = [];
  for (const [upper, field] of Object.entries(fields)) {
    const lower = field.atLeast;
    if (lower === undefined) continue;
    const high = resolved[upper];
    const low = resolved[lower];
    if (typeof high !== 'number' || typeof low !== 'number' || high >= low) continue;
    const defaulted = (key: string) => (written[key] === undefined ? ', its default' : '');
    problems.push(
      written[upper] !== undefined
        ? new ConfigValidationError(
            join(path, upper),
            `expected at least ${lower} (${low}${defaulted(lower)})`,
          )
        : new ConfigValidationError(
            join(path, lower),
            `expected at most ${upper} (${high}${defaulted(upper)})`,
          ),
    );
  }
  return problems;
}

function resolveField(
  field: FieldSpec,
  value: unknown,
  path: string,
  errors: ConfigValidationError[],
): unknown {
  if (value === undefined || value === null) {
    if ('default' in field && field.default !== undefined) return field.default;
    if (field.required) errors.push(new ConfigValidationError(path, `is required: ${field.description}`));
    if (field.type === 'object' && !field.required && !field.optional)
      return resolveObject(field.fields, {}, path, errors);
    return undefined;
  }
  switch (field.type) {
    case 'string':
      if (typeof value !== 'string') return fail(errors, path, 'expected a string');
      if (field.pattern && !new RegExp(field.pattern).test(value))
        return fail(errors, path, `expected a string matching ${field.pattern}`);
      return value;
    case 'integer':
    case 'number': {
      const bound = `${field.minimum !== undefined ? ` >= ${field.minimum}` : ''}${field.maximum !== undefined ? ` <= ${field.maximum}` : ''}`;
      const expected = `expected ${field.type === 'integer' ? 'an integer' : 'a number'}${bound}`;
      if (typeof value !== 'number' || (field.type === 'integer' && !Number.isInteger(value)))
        return fail(errors, path, expected);
      if (
        (field.minimum !== undefined && value < field.minimum) ||
        (field.maximum !== undefined && value > field.maximum)
      )
        return fail(errors, path, expected);
      return value;
    }
    case 'boolean':
      return typeof value === 'boolean' ? value : fail(errors, path, 'expected true or false');
    case 'enum':
      return typeof value === 'string' && field.values.includes(value)
        ? value
        : fail(errors, path, `expected one of ${field.values.map((v) => `'${v}'`).join(', ')}`);
    case 'scalar':
      return typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value)
        ? value
        : fail(errors, path, 'expected a string, number or boolean');
    case 'object':
      return resolveObject(field.fields, value, path, errors);
    case 'array':
      if (!Array.isArray(value)) return fail(errors, path, 'expected a list');
      return value.map((item, index) => resolveField(field.items, item, `${path}[${index}]`, errors));
    case 'map': {
      if (typeof value !== 'object' || Array.isArray(value)) return fail(errors, path, 'expected a mapping');
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, item]) => [
          key,
          resolveField(field.values, item, join(path, key), errors),
        ]),
      );
    }
  }
}

function fail(errors: ConfigValidationError[], path: string, expected: string): undefined {
  errors.push(new ConfigValidationError(path, expected));
  return undefined;
}
