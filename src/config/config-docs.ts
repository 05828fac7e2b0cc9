/**
 * The configuration reference (`docs/configuration.md`), generated from the composed schema:
 * every field with its type, default and description. Endpoints are documented once per type
 * (they appear as a bridge's source, target and error destination, and as connections).
 */
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import { DESTINATION_OPTION_FIELDS, gatewaySchema } from './gateway-schema.js';
import { type SchemaNode, type TaggedNode, defaultOf, expectedOf } from './schema.js';

interface Row {
  readonly path: string;
  readonly type: string;
  readonly fallback: string;
  readonly description: string;
}

const INTRO = `# Configuration reference

<!-- Generated from the configuration schema by \`npx tsx src/config/generate-files.ts\`; do not edit.
     test/unit/config/generated-files.test.ts fails when this file is stale. -->

The gateway reads one YAML file: \`jms-gateway run --config FILE\` (default
\`config/gateway.yaml\`). \`jms-gateway validate FILE\` checks a file without starting anything or
connecting to a broker, and lists every problem it finds like a linter, each as
\`file:line:col: path: what was expected\`, for example

\`\`\`
gateway.yaml:14:7: bridges[2].source.prefetch: expected an integer >= 1 <= 65535
gateway.yaml:3:9: bridges[0].source.type: unknown connector type 'amqpp' (did you mean 'amqp'? known: amqp, jms, kafka, mqtt)
\`\`\`

Rules that hold everywhere:

- **Unknown keys are errors**, with the known ones listed (and a guess when it looks like a typo).
- **\`\${ENV_VAR}\`** in any string value is replaced by the environment variable's value when the
  file is loaded; an unset variable is an error naming it. Write \`$\${\` for a literal \`\${\`. A
  value that is exactly one reference may stand for a number or boolean too (\`port: \${PORT}\`).
  Substituted values are never echoed in configuration errors. Put credentials there
  (\`url: \${AMQP_URL}\`).
- **Secrets** are the values of fields marked **Secret.** below (URLs, passwords, keys): logs and the
  admin API mask them, and in a URL only the password (\`amqp://user:***@host:5672\`), so the
  broker's host and port stay readable. See \`docs/operations.md\`.
- The admin API token is never in the file: it comes from \`JMS_GATEWAY_ADMIN_TOKEN\`, and must be
  strong (at least 16 characters; make one with \`openssl rand -hex 16\`, see docs/operations.md).
- **Limits**: the file is at most 512 KiB, nested at most 64 levels, its aliases stand for at most
  10000 values in all (each use counting its whole value), each key appears once per mapping; an
  empty file (only comments, or \`null\`) is refused, \`{}\` is every default.
- **Ranges**: a maximum is never below its minimum (\`retry.delay.maxMs\` and \`initialMs\`,
  \`reconnect.maxMs\` and \`minMs\`, a high threshold and its low one, ...); the problem is
  reported at the value written.
- **Destination names** are 1 to 200 characters without white space, control characters, \`#\`
  or \`/\`; the engine applies the same rule to destinations created through the admin API or on
  first use.
- Relative paths are relative to the working directory.
- \`config/gateway.schema.json\` is the JSON Schema of this file for editors (with the YAML
  language server: \`# yaml-language-server: $schema=./gateway.schema.json\`).

Defaults marked "—" mean the setting is off or taken from elsewhere, as its description says.
`;

/** The Markdown reference for a registry of connectors. */
export function renderConfigDocs(registry: ConnectorRegistry): string {
  const root = gatewaySchema(registry);
  const out: string[] = [INTRO];
  const endpoints = new Map<string, TaggedNode>();
  for (const [key, node] of Object.entries(root.fields)) {
    out.push(`## \`${key}\`\n\n${node.description}\n`);
    const rows: Row[] = [];
    // Top-level sections are groups: their fields are listed without a row of their own.
    if (node.type === 'object') collectFields(node.fields, key, rows, endpoints);
    else collect(node, key, rows, endpoints);
    out.push(table(rows));
  }
  out.push(
    '## Destination settings\n\nEvery queue, topic and distributed destination member (`memberOptions`) takes these; ' +
      'each wins over the connection factory, session or producer value it overrides.\n',
  );
  out.push(table(rowsOf(DESTINATION_OPTION_FIELDS)));
  const endpoint = endpoints.get('source');
  const sink = endpoints.get('target');
  out.push(
    '## Endpoints\n\n' +
      "A bridge's `source`, `target` and `errorDestination` are endpoints: a mapping whose `type` says what it is. " +
      "`jms` is one of the gateway's own queues or topics; every other type is a broker connector. " +
      'A broker endpoint may name a connection (`connection: <name>`) declared under `connections`; ' +
      "the connection's settings are used for every field the endpoint does not set. " +
      "Under `connections`, entries take the same fields as their type's endpoints (without `connection`), " +
      'and no field is required there.\n',
  );
  if (endpoint && sink) {
    const internalSource = endpoint.variants['jms'];
    const internalSink = sink.variants['jms'];
    if (internalSource) {
      out.push('### `type: jms` as a source\n\n' + internalSource.description + '\n');
      out.push(table(rowsOf(internalSource.fields)));
    }
    if (internalSink) {
      out.push('### `type: jms` as a target or error destination\n\n' + internalSink.description + '\n');
      out.push(table(rowsOf(internalSink.fields)));
    }
    for (const [type, variant] of Object.entries(endpoint.variants)) {
      if (variant.connector === undefined) continue;
      const roles = [
        variant.connector.createSource ? 'source' : undefined,
        variant.connector.createSink ? 'target, error destination' : undefined,
      ].filter((role) => role !== undefined);
      out.push(
        `### \`type: ${type}\`\n\n${variant.description.replace(/\.$/, '')}. Usable as: ${roles.join('; ')}. ` +
          'Required fields may come from the connection instead.\n',
      );
      out.push(table(rowsOf(variant.fields)));
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function rowsOf(fields: Readonly<Record<string, SchemaNode>>, prefix = ''): Row[] {
  const rows: Row[] = [];
  for (const [key, field] of Object.entries(fields))
    collect(field, prefix === '' ? key : `${prefix}.${key}`, rows, new Map());
  return rows;
}

const SHARED_DESTINATION_FIELDS = new Set(Object.values(DESTINATION_OPTION_FIELDS));

/** The rows of an object's fields; destination settings are one row pointing at their own section. */
function collectFields(
  fields: Readonly<Record<string, SchemaNode>>,
  path: string,
  rows: Row[],
  endpoints: Map<string, TaggedNode>,
): void {
  let shared = false;
  for (const [key, field] of Object.entries(fields)) {
    if (SHARED_DESTINATION_FIELDS.has(field)) shared = true;
    else collect(field, `${path}.${key}`, rows, endpoints);
  }
  if (shared)
    rows.push({
      path: `${path}.<setting>`,
      type: 'see below',
      fallback: '—',
      description: 'Any destination setting: see [Destination settings](#destination-settings).',
    });
}

function collect(node: SchemaNode, path: string, rows: Row[], endpoints: Map<string, TaggedNode>): void {
  switch (node.type) {
    case 'object':
      rows.push(row(node, path, 'mapping'));
      collectFields(node.fields, path, rows, endpoints);
      return;
    case 'array':
      rows.push(row(node, path, 'list'));
      if (node.items.type === 'object') {
        collectFields(node.items.fields, `${path}[]`, rows, endpoints);
      } else if (node.items.type !== 'tagged') {
        collect(node.items, `${path}[]`, rows, endpoints);
      }
      return;
    case 'map':
      rows.push(row(node, path, 'mapping of names'));
      if (node.values.type === 'tagged' && Object.values(node.values.variants).some((v) => v.connector))
        rows.push({
          path: `${path}.<name>`,
          type: 'endpoint fields',
          fallback: '—',
          description: `\`type\` (${Object.keys(node.values.variants).join(', ')}) and that type's endpoint fields: see [Endpoints](#endpoints).`,
        });
      else collect(node.values, `${path}.<name>`, rows, endpoints);
      return;
    case 'tagged': {
      if (Object.values(node.variants).some((variant) => variant.connector !== undefined)) {
        const role = path.split('.').at(-1) ?? path;
        endpoints.set(role, node);
        rows.push({
          path,
          type: 'endpoint',
          fallback: node.required ? 'required' : '—',
          description: `${node.description} See [Endpoints](#endpoints).`,
        });
        return;
      }
      rows.push({
        path: `${path}.${node.tag}`,
        type: Object.keys(node.variants)
          .map((tag) => `\`${tag}\``)
          .join(' | '),
        fallback: '—',
        description: node.description,
      });
      for (const [tag, variant] of Object.entries(node.variants)) {
        const own: Row[] = [];
        for (const [key, field] of Object.entries(variant.fields))
          collect(field, `${path}.${key}`, own, endpoints);
        rows.push(...own.map((r) => ({ ...r, description: `(${node.tag}: ${tag}) ${r.description}` })));
      }
      return;
    }
    default:
      rows.push(row(node, path, typeOf(node)));
  }
}

function typeOf(node: SchemaNode): string {
  switch (node.type) {
    case 'enum':
      return node.values.map((value) => `\`${value}\``).join(' | ');
    default:
      return expectedOf(node).replace(/^an? /, '');
  }
}

function row(node: SchemaNode, path: string, type: string): Row {
  const fallback = defaultOf(node);
  return {
    path,
    type,
    fallback: node.required ? 'required' : fallback === undefined ? '—' : `\`${JSON.stringify(fallback)}\``,
    // Masked in logs and the admin API (only the password, for a URL): docs/operations.md.
    description: 'secret' in node && node.secret ? `**Secret.** ${node.description}` : node.description,
  };
}

function table(rows: readonly Row[]): string {
  const escape = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = ['| field | type | default | description |', '| --- | --- | --- | --- |'];
  for (const r of rows)
    lines.push(`| \`${r.path}\` | ${escape(r.type)} | ${r.fallback} | ${escape(r.description)} |`);
  return `${lines.join('\n')}\n`;
}
