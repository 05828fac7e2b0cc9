import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { Ajv } from 'ajv';
import type { HaAdmin, HaStatus } from '../../../src/admin/ha-routes.js';
import type { HaRoleName } from '../../../src/admin/readiness.js';
import { startAdminServer } from '../../../src/admin/server.js';
import { testEngine } from '../../helpers/engine.js';

/** The coordinator as the admin API sees it: a role that tests set, and a step-down that works once. */
function haOf(role: HaRoleName): HaAdmin & { role(): HaRoleName; set(role: HaRoleName): void } {
  let current = role;
  const status = (): HaStatus => ({
    role: current,
    group: 'orders',
    instanceId: 'gw-1:4242:abcd',
    ...(current === 'active' ? { epoch: 7 } : { reason: 'stepped down' }),
    since: new Date(Date.UTC(2026, 0, 1)).toISOString(),
    lease: {
      holder: current === 'active' ? 'gw-1:4242:abcd' : 'gw-2:99:ef01',
      epoch: 7,
      expiresAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 6)).toISOString(),
    },
  });
  return {
    role: () => current,
    set: (next) => (current = next),
    status: () => Promise.resolve(status()),
    stepDown: () => {
      if (current !== 'active') return Promise.resolve(false);
      current = 'standby';
      return Promise.resolve(true);
    },
  };
}

async function serve(t: TestContext, ha: HaAdmin) {
  const engine = testEngine();
  t.after(() => engine.close());
  await engine.engine.createQueue('orders');
  const server = await startAdminServer({ engine: engine.engine, port: 0, ha });
  t.after(() => server.close());
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<string, { responses: Record<string, { content: Record<string, { schema: object }> }> }>
    >;
    components: object;
  };
  const ajv = new Ajv({ strict: false });
  /** Checks an answer against the schema the document declares for it. */
  const conforms = (path: string, method: string, status: number, body: unknown) => {
    const schema =
      document.paths[path]?.[method]?.responses[String(status)]?.content['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${path} declares ${status}`);
    const validate = ajv.compile({ ...schema, components: document.components });
    assert.ok(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`);
  };
  return { url: server.url, conforms };
}

test('ha admin - a standby answers /ready 503 with its role, /ha, the role metric, and refuses destinations', async (t) => {
  const ha = haOf('standby');
  const { url, conforms } = await serve(t, ha);

  const ready = await fetch(`${url}/ready`);
  const readyBody = (await ready.json()) as { ready: boolean; role: string; reason: string };
  assert.equal(ready.status, 503);
  assert.equal(readyBody.role, 'standby');
  assert.match(readyBody.reason, /standby/);
  conforms('/ready', 'get', 503, readyBody);

  const status = await fetch(`${url}/ha`);
  assert.equal(status.status, 200);
  const statusBody = (await status.json()) as HaStatus;
  assert.equal(statusBody.lease?.holder, 'gw-2:99:ef01');
  conforms('/ha', 'get', 200, statusBody);

  const metrics = await (await fetch(`${url}/metrics`)).text();
  assert.match(metrics, /^jms_gateway_ha_role\{role="standby"\} 1$/m);

  const destinations = await fetch(`${url}/destinations`);
  assert.equal(destinations.status, 503);
  const refused = (await destinations.json()) as { error: { name: string; message: string } };
  assert.equal(refused.error.name, 'Standby');
  assert.match(refused.error.message, /the active instance serves destinations.*GET \/ha/);

  const stepDown = await fetch(`${url}/ha/step-down`, { method: 'POST' });
  assert.equal(stepDown.status, 409);
  const stepDownBody = (await stepDown.json()) as { error: { message: string } };
  assert.match(stepDownBody.error.message, /standby, not active: there is nothing to hand over/);
  conforms('/ha/step-down', 'post', 409, stepDownBody);
  assert.equal((await fetch(`${url}/health`)).status, 200);
});

test('ha admin - the active instance is ready with its role, serves destinations, and steps down', async (t) => {
  const ha = haOf('active');
  const { url, conforms } = await serve(t, ha);
  const ready = await fetch(`${url}/ready`);
  const readyBody = (await ready.json()) as { ready: boolean; role: string };
  assert.equal(ready.status, 200);
  assert.equal(readyBody.role, 'active');
  conforms('/ready', 'get', 200, readyBody);
  assert.equal((await fetch(`${url}/destinations`)).status, 200);
  assert.match(await (await fetch(`${url}/metrics`)).text(), /^jms_gateway_ha_role\{role="active"\} 1$/m);

  const stepDown = await fetch(`${url}/ha/step-down`, { method: 'POST' });
  const body = (await stepDown.json()) as HaStatus;
  assert.equal(stepDown.status, 200);
  assert.equal(body.role, 'standby');
  conforms('/ha/step-down', 'post', 200, body);
  assert.equal((await fetch(`${url}/destinations`)).status, 503, 'a standby now');
  assert.equal((await fetch(`${url}/ready`)).status, 503);
});

test('ha admin - without high availability there is no /ha and /ready has no role', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  assert.equal((await fetch(`${server.url}/ha`)).status, 404);
  const ready = (await (await fetch(`${server.url}/ready`)).json()) as Record<string, unknown>;
  assert.equal('role' in ready, false);
});
