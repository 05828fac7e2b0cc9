import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';

function problems(text: string, env: Record<string, string> = {}): readonly string[] {
  try {
    parseConfig(text, 'gw.yaml', { registry: builtinRegistry, env });
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
}

test('config - store type postgres takes url, schema, migrate and connectAttempts', () => {
  const { config } = parseConfig('store: { type: postgres, url: "${PG_URL}" }', 'gw.yaml', {
    registry: builtinRegistry,
    env: { PG_URL: 'postgres://gateway:pg-secret-1@db.internal:5432/jms' },
  });
  assert.equal(config.store.type, 'postgres');
  assert.equal(config.store.url, 'postgres://gateway:pg-secret-1@db.internal:5432/jms');
  // Absent settings take the store's defaults (schema jms_gateway, migrate, one attempt).
  assert.equal(config.store.schema, undefined);
  // The URL is a secret: its password is masked wherever the gateway shows text, its host is not.
  assert.ok(config.secrets.has('pg-secret-1'));
  assert.ok(![...config.secrets].some((secret) => secret.includes('db.internal')));
});

test('config - a store without type is the file store at path, as before', () => {
  const { config } = parseConfig('store: { path: ./somewhere }', 'gw.yaml', {
    registry: builtinRegistry,
    env: {},
  });
  assert.equal(config.store.type, undefined);
  assert.equal(config.store.path, './somewhere');
});

test('config - a postgres store without url, with a url of another scheme, or a bad schema name is refused; url on a file store too', () => {
  assert.match(problems('store: { type: postgres }').join('\n'), /store\.url: type 'postgres' needs a url/);
  assert.match(
    problems('store: { type: postgres, url: "mysql://db/x" }').join('\n'),
    /store\.url: the url must start with postgres:\/\//,
  );
  assert.match(
    problems('store: { type: postgres, url: "postgres://db/x", schema: "a-b" }').join('\n'),
    /store\.schema/,
  );
  assert.match(
    problems('store: { url: "postgres://db/x" }').join('\n'),
    /store\.url: url is for type: 'postgres'/,
  );
  assert.match(
    problems('store: { type: postgres, url: "postgres://db/x", connectAttempts: 0 }').join('\n'),
    /store\.connectAttempts/,
  );
});

test('config - largeBodyBytes belongs to the file store: set on the file store, refused on the others', () => {
  const { config } = parseConfig('store: { largeBodyBytes: 65536 }', 'gw.yaml', {
    registry: builtinRegistry,
    env: {},
  });
  assert.equal(config.store.largeBodyBytes, 65536);
  // Absent, the store takes its own default (128 KiB, src/store/file-store.ts).
  assert.equal(
    parseConfig('{}', 'gw.yaml', { registry: builtinRegistry, env: {} }).config.store.largeBodyBytes,
    undefined,
  );
  for (const store of [
    '{ memory: true, largeBodyBytes: 1 }',
    '{ type: postgres, url: "postgres://db/x", largeBodyBytes: 1 }',
  ])
    assert.match(
      problems(`store: ${store}`).join('\n'),
      /store\.largeBodyBytes: largeBodyBytes is for the file store/,
    );
  assert.match(
    problems('store: { largeBodyBytes: 0 }').join('\n'),
    /store\.largeBodyBytes: expected an integer >= 1/,
  );
});

test('config - maxBytes bounds the file store: set on the file store, at least 1 MiB, refused on the others', () => {
  const { config } = parseConfig('store: { maxBytes: 10737418240 }', 'gw.yaml', {
    registry: builtinRegistry,
    env: {},
  });
  assert.equal(config.store.maxBytes, 10 * 1024 ** 3);
  assert.equal(
    parseConfig('{}', 'gw.yaml', { registry: builtinRegistry, env: {} }).config.store.maxBytes,
    undefined,
  );
  for (const store of ['{ memory: true, maxBytes: 1048576 }', '{ type: memory, maxBytes: 1048576 }'])
    assert.match(problems(`store: ${store}`).join('\n'), /store\.maxBytes: maxBytes is for the file store/);
  assert.match(
    problems('store: { maxBytes: 65536 }').join('\n'),
    /store\.maxBytes: expected an integer >= 1048576/,
  );
  assert.match(problems('store: { maxbytes: 1048576 }').join('\n'), /did you mean 'maxBytes'\?/);
});
