import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinRegistry } from '../../../connectors/index.js';
import { tokenFingerprint } from '../../../src/admin/audit.js';
import { parseConfig } from '../../../src/config/load-config.js';
import { Gateway, type GatewayLogger } from '../../../src/gateway/index.js';
import { uniqueName } from '../../helpers/names.js';

/** A logger keeping every line as the JSON pino would write (bindings, fields, message). */
function capturingLogger(
  lines: Record<string, unknown>[],
  bindings: Record<string, unknown> = {},
): GatewayLogger {
  const log = (fields: Record<string, unknown>, msg: string) =>
    void lines.push({ ...bindings, ...fields, msg });
  return {
    error: log,
    warn: log,
    info: log,
    debug: log,
    child: (more) => capturingLogger(lines, { ...bindings, ...more }),
  };
}

const CONFIG = [
  'store: { memory: true }',
  'destinations:',
  '  queues: [{ name: in }, { name: out }, { name: errors }]',
  'bridges:',
  '  - name: route',
  '    source: { type: jms, destination: queue://in }',
  '    target: { type: jms, destination: queue://out }',
].join('\n');

test('admin api - every mutation writes one audit line: who, what and how many, never bodies or the token', async (t) => {
  const token = `tok-${uniqueName('audit')}`;
  const body = 'BODY-TEXT-never-logged';
  const { config } = parseConfig(CONFIG, 'gw.yaml', { registry: builtinRegistry, env: {} });
  const lines: Record<string, unknown>[] = [];
  const gateway = await Gateway.start(config, capturingLogger(lines), {
    adminPort: 0,
    adminToken: token,
    loadConfig: () => Promise.resolve({ ok: true, config }),
  });
  t.after(() => gateway.stop(5_000));
  const call = async (method: string, path: string, json?: unknown) => {
    const response = await fetch(`${gateway.adminUrl!}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };
  const audits = () => lines.filter((line) => line.audit === true);
  const last = () => audits().at(-1)!;

  await call('GET', '/destinations');
  assert.equal(audits().length, 0, 'reading is not audited');

  assert.equal((await call('POST', '/destinations', { kind: 'queue', name: 'parked' })).status, 201);
  assert.deepEqual(
    { action: last().action, destination: last().destination, status: last().status },
    { action: 'create', destination: 'queue://parked', status: 201 },
  );

  const sent = await call('POST', '/destinations/queue/parked/messages', {
    type: 'text',
    body,
    properties: { region: 'eu', JMS_ErrorOrigin: 'queue://errors' },
  });
  assert.deepEqual(
    {
      action: last().action,
      destination: last().destination,
      messages: last().messages,
      id: last().messageId,
    },
    { action: 'send', destination: 'queue://parked', messages: 1, id: sent.json.messageId },
  );
  await call('POST', '/destinations/queue/parked/messages', {
    type: 'text',
    body,
    properties: { region: 'us' },
  });

  await call('POST', '/destinations/queue/parked/move', { to: 'queue://errors', selector: "region = 'us'" });
  assert.deepEqual(
    [last().action, last().destination, last().to, last().selector, last().messages],
    ['move', 'queue://parked', 'queue://errors', "region = 'us'", 1],
  );
  await call('POST', '/destinations/queue/parked/move', { to: 'origin' });
  assert.deepEqual([last().action, last().destination, last().messages], ['replay', 'queue://parked', 1]);

  const [parked] = (await fetch(`${gateway.adminUrl!}/destinations/queue/errors/messages`, {
    headers: { authorization: `Bearer ${token}` },
  }).then((r) => r.json())) as { headers: { JMSMessageID: string } }[];
  await call(
    'DELETE',
    `/destinations/queue/errors/messages/${encodeURIComponent(parked!.headers.JMSMessageID)}`,
  );
  assert.deepEqual(
    [last().action, last().messageId, last().messages],
    ['delete-message', parked!.headers.JMSMessageID, 1],
  );
  await call('DELETE', '/destinations/queue/errors');
  assert.deepEqual([last().action, last().destination, last().messages], ['delete', 'queue://errors', 1]);

  for (const action of ['pause', 'resume', 'restart']) {
    await call('POST', `/bridges/route/${action}`);
    assert.deepEqual([last().action, last().bridge, last().status], [action, 'route', 200]);
  }
  await call('POST', '/reload');
  assert.deepEqual([last().action, last().reloaded, last().status], ['reload', true, 200]);

  // A refused mutation is audited too, with its status and why.
  await call('POST', '/bridges/nope/pause');
  assert.deepEqual([last().action, last().status], ['pause', 404]);
  assert.match(String(last().error), /there is no bridge 'nope'/);

  assert.equal(audits().length, 12);
  for (const line of audits()) {
    assert.equal(line.who, tokenFingerprint(token));
    assert.equal(line.msg, `admin action: ${String(line.action)}`);
  }
  const logged = JSON.stringify(lines);
  assert.ok(!logged.includes(token) && !logged.includes(body), 'no token, no body');
});

test("admin api - without a token (loopback only) the audit line's caller is 'loopback'", async (t) => {
  const { config } = parseConfig(CONFIG, 'gw.yaml', { registry: builtinRegistry, env: {} });
  const lines: Record<string, unknown>[] = [];
  const gateway = await Gateway.start(config, capturingLogger(lines), { adminPort: 0, adminToken: '' });
  t.after(() => gateway.stop(5_000));
  await fetch(`${gateway.adminUrl!}/bridges/route/pause`, { method: 'POST' });
  const audit = lines.filter((line) => line.audit === true);
  assert.equal(audit.length, 1);
  assert.deepEqual([audit[0]!.who, audit[0]!.action, audit[0]!.from], ['loopback', 'pause', '127.0.0.1']);
});

test('admin api - deleting a distributed destination is audited and still works', async (t) => {
  const { config } = parseConfig(
    [
      'store: { memory: true }',
      'destinations:',
      '  distributedQueues: [{ name: spread, members: [{ name: a }, { name: b }] }]',
    ].join('\n'),
    'gw.yaml',
    { registry: builtinRegistry, env: {} },
  );
  const lines: Record<string, unknown>[] = [];
  const gateway = await Gateway.start(config, capturingLogger(lines), { adminPort: 0, adminToken: '' });
  t.after(() => gateway.stop(5_000));
  const response = await fetch(`${gateway.adminUrl!}/destinations/queue/spread`, { method: 'DELETE' });
  assert.equal(response.status, 200, await response.text());
  const audit = lines.filter((line) => line.audit === true);
  assert.deepEqual(
    audit.map((line) => [line.action, line.destination, line.status]),
    [['delete', 'queue://spread', 200]],
  );
});
