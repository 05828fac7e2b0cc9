/**
 * Writes the admin API's OpenAPI document to a file, for `npm run lint:openapi` (redocly lint):
 * the document is the one the server serves, built from the routes on an in-memory engine, with
 * the routes of high availability.
 *
 *     tsx src/admin/write-openapi.ts .tmp/openapi.json
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { JmsEngine } from '../jms/engine.js';
import { silentLogger } from '../jms/logger.js';
import { MemoryStore } from '../store/memory-store.js';
import { DestinationOperations } from './destination-operations.js';
import { openApiDocument } from './openapi.js';
import { buildAdminApp } from './admin-app.js';

const file = process.argv[2];
if (!file) throw new Error('usage: tsx src/admin/write-openapi.ts <file.json>');
const engine = await JmsEngine.open({ store: new MemoryStore() });
const operations = new DestinationOperations(engine);
// The high-availability routes are documented too: an instance of an active/standby group has them.
const standby = {
  role: () => 'standby' as const,
  status: () => Promise.reject(new Error('documentation only')),
  stepDown: () => Promise.resolve(false),
};
const app = await buildAdminApp({ engine, logger: silentLogger, ha: standby }, operations);
await mkdir(dirname(file), { recursive: true });
await writeFile(file, `${JSON.stringify(openApiDocument(app), null, 2)}\n`);
await app.close();
await operations.close();
await engine.close();
