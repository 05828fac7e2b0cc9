import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildConsole } from '../../../console/build.js';
import { consoleAsset } from '../../../src/admin/console-assets.js';
import { startAdminServer } from '../../../src/admin/server.js';
import { testEngine } from '../../helpers/engine.js';

/** A token of the strength the admin API asks for. */
const TOKEN = '3f9c2a7be41d08c6f5a9e2d7b1c40e8a';

test('admin console - consoleAsset maps /console paths to the built files and nothing else', async () => {
  await buildConsole();
  assert.equal(consoleAsset('/console')?.contentType, 'text/html; charset=utf-8');
  assert.equal(consoleAsset('/console/')?.contentType, 'text/html; charset=utf-8');
  assert.equal(consoleAsset('/console/console.js')?.contentType, 'text/javascript; charset=utf-8');
  assert.equal(consoleAsset('/console/console.css')?.contentType, 'text/css; charset=utf-8');
  assert.equal(consoleAsset('/console/../package.json'), undefined);
  assert.equal(consoleAsset('/console/nothing.js'), undefined);
  assert.equal(consoleAsset('/consoles'), undefined);
  assert.equal(consoleAsset('/destinations'), undefined);
});

test('admin console - served without the token, with a policy that allows only the gateway itself; the API still needs the token', async (t) => {
  await buildConsole();
  const engine = testEngine();
  const admin = await startAdminServer({ engine: engine.engine, port: 0, token: TOKEN });
  t.after(async () => {
    await admin.close();
    await engine.close();
  });
  const page = await fetch(`${admin.url}/console`);
  assert.equal(page.status, 200);
  assert.match(await page.text(), /<script src="\/console\/console.js" defer><\/script>/);
  const policy = page.headers.get('content-security-policy') ?? '';
  assert.match(policy, /script-src 'self'/);
  assert.match(policy, /connect-src 'self'/);
  assert.equal(page.headers.get('set-cookie'), null);
  const script = await fetch(`${admin.url}/console/console.js`);
  assert.equal(script.status, 200);
  assert.ok((await script.text()).length > 1000);
  assert.equal((await fetch(`${admin.url}/console/console.js`, { method: 'POST' })).status, 401);
  assert.equal((await fetch(`${admin.url}/destinations`)).status, 401);
});

test('admin console - POST /selector checks, and explains against a message as the CLI does', async (t) => {
  const engine = testEngine();
  const admin = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(async () => {
    await admin.close();
    await engine.close();
  });
  const ask = async (body: unknown) => {
    const response = await fetch(`${admin.url}/selector`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const bad = await ask({ selector: "region = 'eu' AND" });
  assert.equal(bad.status, 200);
  assert.equal(bad.json.valid, false);
  assert.equal(bad.json.column, 18);
  assert.match(bad.json.error as string, /.+/);
  assert.deepEqual((await ask({ selector: '' })).json, { valid: true, empty: true });
  const evaluated = await ask({
    selector: "region = 'eu' AND amount > 5",
    message: { type: 'text', properties: { region: 'eu', amount: { type: 'long', value: '9' } }, body: 'x' },
  });
  assert.equal(evaluated.json.selected, true);
  const explanation = evaluated.json.explanation as {
    value: string;
    children: { text: string; value: string }[];
  };
  assert.equal(explanation.value, 'TRUE');
  assert.deepEqual(
    explanation.children.map((c) => [c.text, c.value]),
    [
      ["region = 'eu'", 'TRUE'],
      ['amount > 5', 'TRUE'],
    ],
  );
  assert.equal((await ask({ selector: 7 })).status, 400);
  assert.equal((await ask({ selector: 'a = 1', message: { type: 'nope' } })).status, 400);
});

test('admin console - GET /reload previews a reload: 200 with the plan, 422 with the problems, 501 without a file', async (t) => {
  const engine = testEngine();
  const plan = {
    reloaded: false,
    added: ['new'],
    removed: [],
    restarted: [],
    unchanged: ['old'],
    created: [],
    changes: {},
    warnings: [],
    errors: [] as string[],
  };
  const withFile = await startAdminServer({
    engine: engine.engine,
    port: 0,
    previewReload: () => Promise.resolve(plan),
  });
  const withoutFile = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(async () => {
    await withFile.close();
    await withoutFile.close();
    await engine.close();
  });
  const ok = await fetch(`${withFile.url}/reload`);
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), plan);
  plan.errors = ['gateway.yaml:3:5: bridges[0].source: expected an object'];
  assert.equal((await fetch(`${withFile.url}/reload`)).status, 422);
  assert.equal((await fetch(`${withoutFile.url}/reload`)).status, 501);
});
