/**
 * The schema language of the gateway's configuration: the connector SPI's {@link FieldSpec}
 * (connector schemas embed as they are) plus the two shapes the root needs and a connector never
 * does: a mapping whose `type:`-like tag picks its fields (endpoints, retry delays) and a value
 * that may take one of several scalar forms (a delay in ms or a schedule). Validation
 * (`validate.ts`), the JSON Schema for editors (`json-schema.ts`) and the reference
 * (`config-docs.ts`) all walk this one tree.
 */
import type { ConnectorDefinition, FieldSpec } from '../spi/index.js';

/** One node of the configuration schema. */
export type SchemaNode = FieldSpec | ObjectNode | ArrayNode | MapNode | TaggedNode | UnionNode;

/** A mapping with known keys (unknown keys are errors). */
export interface ObjectNode {
  readonly type: 'object';
  readonly description: string;
  readonly required?: boolean;
  readonly fields: Readonly<Record<string, SchemaNode>>;
  /**
   * Absent means "none" (a feature that is off, like a durable subscription), instead of the
   * default: a group of settings filled with their defaults.
   */
  readonly optional?: boolean;
  /** Keys that are refused with a specific fix, e.g. `token` in `admin`. */
  readonly refused?: Readonly<Record<string, string>>;
}

/** A list of one kind of item. */
export interface ArrayNode {
  readonly type: 'array';
  readonly description: string;
  readonly required?: boolean;
  readonly items: SchemaNode;
}

/** A mapping from names the user chooses to one kind of value. */
export interface MapNode {
  readonly type: 'map';
  readonly description: string;
  readonly required?: boolean;
  readonly values: SchemaNode;
  /** What a key must look like (a regular expression), e.g. a connection name. */
  readonly keyPattern?: string;
}

/** A mapping whose `tag` key (`type`, `kind`) says which set of fields it has. */
export interface TaggedNode {
  readonly type: 'tagged';
  readonly description: string;
  readonly required?: boolean;
  /** The key that picks the variant. */
  readonly tag: string;
  /** Names the tag in errors: `unknown connector type 'amqpp' (known: ...)`. */
  readonly tagNoun: string;
  readonly variants: Readonly<Record<string, Variant>>;
}

/** One variant of a {@link TaggedNode}. */
export interface Variant {
  readonly description: string;
  /** The fields besides the tag. */
  readonly fields: Readonly<Record<string, SchemaNode>>;
  /**
   * Set for a broker endpoint: its fields are the connector's, validated with the connector's
   * own schema (`resolveConfig`), optionally merged over a named connection's fields.
   */
  readonly connector?: ConnectorDefinition;
  /** Set with `connector`: `connections` entries hold these fields without `connection`. */
  readonly connectionRef?: boolean;
}

/** A value that may take any of several forms, tried in order. */
export interface UnionNode {
  readonly type: 'union';
  readonly description: string;
  readonly required?: boolean;
  readonly variants: readonly SchemaNode[];
}

/** The default a node declares, if any (scalars only). */
export function defaultOf(node: SchemaNode): unknown {
  return 'default' in node ? node.default : undefined;
}

/** `an integer >= 1`, `a string`, ...: what a scalar node expects, for errors and docs. */
export function expectedOf(node: SchemaNode): string {
  switch (node.type) {
    case 'string':
      return node.pattern ? `a string matching ${node.pattern}` : 'a string';
    case 'integer':
    case 'number': {
      const bound = `${node.minimum !== undefined ? ` >= ${node.minimum}` : ''}${node.maximum !== undefined ? ` <= ${node.maximum}` : ''}`;
      return `${node.type === 'integer' ? 'an integer' : 'a number'}${bound}`;
    }
    case 'boolean':
      return 'true or false';
    case 'scalar':
      return 'a string, number or boolean';
    case 'enum':
      return `one of ${node.values.map((v) => `'${v}'`).join(', ')}`;
    case 'object':
    case 'tagged':
    case 'map':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'union':
      return node.variants.map(expectedOf).join(' or ');
  }
}
