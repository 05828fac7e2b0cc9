import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startAdminServer } from '../../../src/admin/server.js';
import { testEngine } from '../../helpers/engine.js';

const TOKEN = '3f9c2a7be41d08c6f5a9e2d7b1c40e8a';

test('static files - a folder mounted at /console is served without a token, the API still needs it', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const root = await mkdtemp(join(tmpdir(), 'jms-gateway-console-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  await writeFile(join(root, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(root, 'app.js'), 'export {};');
  await writeFile(join(root, '.secret'), 'no');
  const server = await startAdminServer({
    engine: engine.engine,
    host: '0.0.0.0',
    port: 0,
    token: TOKEN,
    staticFiles: [{ prefix: '/console', root }],
  });
  t.after(() => server.close());
  const base = `http://127.0.0.1:${new URL(server.url).port}`;
  const redirect = await fetch(`${base}/console`, { redirect: 'manual' });
  assert.equal(redirect.status, 302);
  assert.equal(redirect.headers.get('location'), '/console/');
  const page = await fetch(`${base}/console/`);
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.match(await page.text(), /<title>console<\/title>/);
  const script = await fetch(`${base}/console/app.js`);
  assert.equal(script.status, 200);
  assert.match(script.headers.get('content-type') ?? '', /javascript/);
  assert.notEqual((await fetch(`${base}/console/.secret`)).status, 200, 'no dotfiles');
  assert.equal((await fetch(`${base}/console/missing.js`)).status, 404);
  assert.equal((await fetch(`${base}/destinations`)).status, 401, 'the API still needs the token');
  const spec = (await (
    await fetch(`${base}/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).json()) as { paths: Record<string, unknown> };
  assert.ok(!Object.keys(spec.paths).some((path) => path.startsWith('/console')), 'not in the API document');
});
