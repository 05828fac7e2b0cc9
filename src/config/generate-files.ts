/**
 * The files generated from the configuration schema: the JSON Schema for editors and the
 * configuration reference. `npx tsx src/config/generate-files.ts` writes them; a unit test fails
 * when the checked-in copies are stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { renderConfigDocs } from './config-docs.js';
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import { gatewaySchema } from './gateway-schema.js';
import { toJsonSchema } from './json-schema.js';

/** Where the JSON Schema is published, for `$id`. */
const SCHEMA_ID = 'https://jms-gateway.dev/schema/gateway.schema.json';

/** Each generated file: its path from the repository root and its content. */
export function generatedFiles(registry: ConnectorRegistry): { path: string; content: string }[] {
  return [
    {
      path: 'config/gateway.schema.json',
      content: `${JSON.stringify(toJsonSchema(gatewaySchema(registry), SCHEMA_ID), null, 2)}\n`,
    },
    { path: 'docs/configuration.md', content: renderConfigDocs(registry) },
  ];
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { builtinRegistry } = await import('../../connectors/index.js');
  const root = new URL('../../', import.meta.url);
  for (const file of generatedFiles(builtinRegistry)) {
    await writeFile(new URL(file.path, root), file.content);
    process.stdout.write(`wrote ${file.path}\n`);
  }
}
