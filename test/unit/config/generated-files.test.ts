import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { generatedFiles } from '../../../src/config/generate-files.js';

const FIX = 'regenerate with `npx tsx src/config/generate-files.ts` and commit the result';

for (const { path, content } of generatedFiles(builtinRegistry)) {
  test(`config - the checked-in ${path} is generated from the current schema`, async () => {
    const current = await readFile(path, 'utf8').catch(() => '');
    assert.ok(current === content, `${path} is stale: ${FIX}`);
  });
}

test('config - the JSON Schema refuses unknown keys everywhere and describes every field', () => {
  const schema = JSON.parse(generatedFiles(builtinRegistry)[0]!.content) as Record<string, unknown>;
  const problems: string[] = [];
  const walk = (node: unknown, path: string, isProperty: boolean) => {
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    // A tagged mapping refuses unknown keys in each variant (allOf: if type = x then ...).
    if (
      record.type === 'object' &&
      'properties' in record &&
      !('allOf' in record) &&
      record.additionalProperties !== false
    )
      problems.push(`${path}: additionalProperties is not false`);
    if (isProperty && typeof record.description !== 'string' && !('const' in record))
      problems.push(`${path}: no description`);
    for (const [key, value] of Object.entries(record)) {
      if (key === 'properties' && typeof value === 'object' && value !== null)
        for (const [name, property] of Object.entries(value)) walk(property, `${path}.${name}`, true);
      else walk(value, `${path}/${key}`, false);
    }
  };
  walk(schema, '#', false);
  assert.deepEqual(problems, []);
  const properties = schema.properties as Record<
    string,
    { properties?: Record<string, { default?: unknown }> }
  >;
  assert.equal(properties.store?.properties?.path?.default, './data');
  assert.equal(properties.admin?.properties?.port?.default, 8161);
});

test('config - the reference documents every connector and every endpoint field with its default', () => {
  const docs = generatedFiles(builtinRegistry)[1]!.content;
  for (const connector of builtinRegistry.definitions()) {
    assert.ok(docs.includes(`### \`type: ${connector.type}\``), connector.type);
    for (const field of Object.keys(connector.config.fields))
      assert.ok(docs.includes(`| \`${field}\` |`), `${connector.type}.${field}`);
  }
  assert.match(docs, /\| `shutdown\.deadlineMs` \| integer >= 0 \| `10000` \|/);
});
