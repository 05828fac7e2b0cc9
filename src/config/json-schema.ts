/**
 * The JSON Schema for editors (`config/gateway.schema.json`), generated from the composed
 * configuration schema: descriptions, defaults, enums, `additionalProperties: false`. Where a
 * value may be a `${ENV_VAR}` reference, the schema accepts one, so editors do not flag it.
 */
import type { FieldSpec } from '../spi/index.js';
import type { ObjectNode, SchemaNode, TaggedNode } from './schema.js';

type Json = Record<string, unknown>;

/** A string that contains an environment reference: nothing more can be known before it is substituted. */
const CONTAINS_REFERENCE = '\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}';
const ENV_REF = { $ref: '#/definitions/envReference' };

/** The JSON Schema (draft-07) of a configuration file. */
export function toJsonSchema(root: ObjectNode, id: string): Json {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: id,
    title: 'jms-gateway configuration',
    ...convert(root, false),
    definitions: {
      envReference: {
        type: 'string',
        pattern: `^${CONTAINS_REFERENCE}$`,
        description: 'An environment variable reference, substituted when the configuration is loaded.',
      },
    },
  };
}

function withDefault(node: SchemaNode, schema: Json): Json {
  const result: Json = { description: node.description, ...schema };
  if ('default' in node && node.default !== undefined) result.default = node.default;
  return result;
}

/** `relaxed`: required fields are not required (an endpoint may take them from a connection). */
function convert(node: SchemaNode, relaxed: boolean): Json {
  switch (node.type) {
    case 'string':
      if (node.fromEnvironment)
        return withDefault(node, { type: 'string', pattern: `^${CONTAINS_REFERENCE}$` });
      return withDefault(node, {
        type: 'string',
        ...(node.pattern === undefined ? {} : { pattern: `(?:${node.pattern})|${CONTAINS_REFERENCE}` }),
      });
    case 'integer':
    case 'number':
      return withDefault(node, {
        anyOf: [
          {
            type: node.type,
            ...(node.minimum === undefined ? {} : { minimum: node.minimum }),
            ...(node.maximum === undefined ? {} : { maximum: node.maximum }),
          },
          ENV_REF,
        ],
      });
    case 'boolean':
      return withDefault(node, { anyOf: [{ type: 'boolean' }, ENV_REF] });
    case 'scalar':
      return withDefault(node, { type: ['string', 'number', 'boolean'] });
    case 'enum':
      return withDefault(node, { anyOf: [{ type: 'string', enum: [...node.values] }, ENV_REF] });
    case 'object':
      return withDefault(node, objectSchema(node.fields, relaxed));
    case 'array':
      return withDefault(node, { type: 'array', items: convert(node.items, relaxed) });
    case 'map':
      return withDefault(node, {
        type: 'object',
        ...('keyPattern' in node && node.keyPattern !== undefined
          ? { propertyNames: { pattern: node.keyPattern } }
          : {}),
        additionalProperties: convert(node.values, relaxed),
      });
    case 'tagged':
      return withDefault(node, taggedSchema(node));
    case 'union':
      return withDefault(node, { anyOf: node.variants.map((variant) => convert(variant, relaxed)) });
  }
}

function objectSchema(
  fields: Readonly<Record<string, SchemaNode>>,
  relaxed: boolean,
  extra: Json = {},
): Json {
  const required = relaxed
    ? []
    : Object.entries(fields)
        .filter(
          ([, field]) => field.required === true && !('default' in field && field.default !== undefined),
        )
        .map(([key]) => key);
  return {
    type: 'object',
    properties: {
      ...extra,
      ...Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, convert(field, false)])),
    },
    ...(required.length === 0 ? {} : { required }),
    additionalProperties: false,
  };
}

function taggedSchema(node: TaggedNode): Json {
  const tags = Object.keys(node.variants);
  return {
    type: 'object',
    required: [node.tag],
    properties: {
      [node.tag]: {
        description: `The ${node.tagNoun}: ${tags.map((tag) => `'${tag}'`).join(', ')}.`,
        enum: tags,
      },
    },
    allOf: Object.entries(node.variants).map(([tag, variant]) => ({
      if: { properties: { [node.tag]: { const: tag } } },
      then: {
        description: variant.description,
        ...objectSchema(
          variant.fields as Readonly<Record<string, FieldSpec | SchemaNode>>,
          variant.connector !== undefined,
          {
            [node.tag]: { const: tag },
          },
        ),
      },
    })),
  };
}
