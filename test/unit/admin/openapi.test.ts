import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import type { BridgeControl, BridgeView } from '../../../src/admin/bridge-control.js';
import { startAdminServer } from '../../../src/admin/server.js';
import { LatencyHistogram } from '../../../src/bridge/index.js';
import { Session, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
type Document = { paths: Record<string, Record<string, Operation>>; components: object };

/** One call of a documented operation, and the answer it must give. */
interface Call {
  operationId: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  status: number;
}

function bridgesWithLatency(): BridgeControl {
  const send = new LatencyHistogram();
  for (const ms of [0.4, 3, 40, 700, 120_000]) send.observe(ms);
  const view: BridgeView = {
    name: 'orders',
    status: 'connected',
    counters: { in: 5, out: 4, deadLettered: 1, inFlight: 1, lag: 2 },
    latency: { send: send.snapshot(), endToEnd: send.snapshot() },
  };
  const set = (status: string) => () => {
    view.status = status;
    return Promise.resolve();
  };
  return { list: () => [view], pause: set('paused'), resume: set('connected'), restart: set('connected') };
}

test('openapi - every documented operation, called on a real engine, answers as its schema declares', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  await engine.engine.createQueue('orders');
  await engine.engine.createQueue('errors');
  await engine.engine.createTopic('events');
  const session = engine.connect({ clientId: 'audit' }).createSession(false, Session.AUTO_ACKNOWLEDGE);
  const durable = session.createDurableSubscriber(session.createTopic('events'), 'history');
  await durable.close();
  const reloadAnswer = {
    reloaded: false,
    added: ['new-bridge'],
    removed: [],
    restarted: [],
    unchanged: ['orders'],
    created: [],
    changes: {},
    warnings: [],
    errors: [],
  };
  const server = await startAdminServer({
    engine: engine.engine,
    port: 0,
    bridges: bridgesWithLatency(),
    previewReload: () => Promise.resolve(reloadAnswer),
    reload: () =>
      Promise.resolve({
        reloaded: false,
        added: [],
        removed: [],
        restarted: [],
        unchanged: ['orders'],
        created: [],
        changes: {},
        warnings: [],
        errors: ['gateway.yaml:3:5: bridges[0].qos: expected one of ...'],
      }),
  });
  t.after(() => server.close());
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document & {
    openapi: string;
  };
  assert.equal(document.openapi, '3.1.0');

  const producer = session.createProducer(session.createQueue('orders'));
  // A parked message, as the engine leaves one in an error destination: a replay sends it back.
  await fetch(`${server.url}/destinations/queue/errors/messages`, {
    method: 'POST',
    body: JSON.stringify({
      type: 'text',
      body: '<order/>',
      properties: { JMS_ErrorOrigin: 'queue://orders' },
    }),
  });
  await producer.send(new TextMessage('first'));
  let sentId = '';
  const calls: (Call | (() => Call))[] = [
    { operationId: 'health', status: 200 },
    { operationId: 'ready', status: 200 },
    { operationId: 'metrics', status: 200 },
    { operationId: 'openApi', status: 200 },
    { operationId: 'listDestinations', status: 200 },
    {
      operationId: 'createDestination',
      body: { kind: 'queue', name: 'created', options: { messagesMaximum: 10 } },
      status: 201,
    },
    {
      operationId: 'createDestination',
      body: { kind: 'queue', name: 'created', options: { messagesMaximum: 10 } },
      status: 200,
    },
    {
      operationId: 'createDestination',
      body: { kind: 'queue', name: 'created', options: { messagesMaximum: 20 } },
      status: 409,
    },
    { operationId: 'createDestination', body: { kind: 'bucket', name: 'x' }, status: 400 },
    { operationId: 'getDestination', params: { kind: 'queue', name: 'orders' }, status: 200 },
    { operationId: 'getDestination', params: { kind: 'topic', name: 'events' }, status: 200 },
    { operationId: 'getDestination', params: { kind: 'queue', name: 'missing' }, status: 404 },
    {
      operationId: 'sendMessage',
      params: { kind: 'queue', name: 'orders' },
      body: {
        type: 'text',
        body: 'second',
        properties: { color: 'red', id: { type: 'long', value: '9007199254740993' } },
      },
      status: 201,
    },
    {
      operationId: 'sendMessage',
      params: { kind: 'queue', name: 'orders' },
      body: { type: 'nope' },
      status: 400,
    },
    {
      operationId: 'browseMessages',
      params: { kind: 'queue', name: 'orders' },
      query: { limit: '10' },
      status: 200,
    },
    {
      operationId: 'browseMessages',
      params: { kind: 'queue', name: 'orders' },
      query: { selector: "color = 'red'" },
      status: 200,
    },
    {
      operationId: 'browseMessages',
      params: { kind: 'queue', name: 'orders' },
      query: { limit: '0' },
      status: 400,
    },
    {
      operationId: 'countMessages',
      params: { kind: 'queue', name: 'orders' },
      query: { selector: "color = 'red'" },
      status: 200,
    },
    { operationId: 'countMessages', params: { kind: 'queue', name: 'missing' }, status: 404 },
    () => ({
      operationId: 'deleteMessage',
      params: { kind: 'queue', name: 'orders', id: sentId },
      status: 200,
    }),
    { operationId: 'deleteMessage', params: { kind: 'queue', name: 'orders', id: 'ID:none' }, status: 404 },
    {
      operationId: 'moveMessages',
      params: { kind: 'queue', name: 'errors' },
      body: { to: 'origin' },
      status: 200,
    },
    {
      operationId: 'moveMessages',
      params: { kind: 'queue', name: 'orders' },
      body: { to: 'queue://created', limit: 1 },
      status: 200,
    },
    {
      operationId: 'moveMessages',
      params: { kind: 'queue', name: 'orders' },
      body: { to: 'queue://missing' },
      status: 404,
    },
    { operationId: 'listSubscriptions', status: 200 },
    { operationId: 'listBridges', status: 200 },
    { operationId: 'pauseBridge', params: { name: 'orders' }, status: 200 },
    { operationId: 'resumeBridge', params: { name: 'orders' }, status: 200 },
    { operationId: 'restartBridge', params: { name: 'orders' }, status: 200 },
    { operationId: 'restartBridge', params: { name: 'missing' }, status: 404 },
    { operationId: 'previewReload', status: 200 },
    { operationId: 'reload', status: 422 },
    { operationId: 'checkSelector', body: { selector: "region = 'eu' AND" }, status: 200 },
    {
      operationId: 'checkSelector',
      body: {
        selector: "region = 'eu' AND qty > 2",
        message: { body: '<order/>', properties: { region: 'eu', qty: { type: 'int', value: 3 } } },
      },
      status: 200,
    },
    { operationId: 'checkSelector', body: { selector: 42 }, status: 400 },
    { operationId: 'deleteSubscription', params: { clientId: 'audit', name: 'history' }, status: 200 },
    { operationId: 'deleteSubscription', params: { clientId: 'audit', name: 'history' }, status: 404 },
    { operationId: 'deleteDestination', params: { kind: 'queue', name: 'created' }, status: 200 },
    { operationId: 'deleteDestination', params: { kind: 'queue', name: 'created' }, status: 404 },
  ];

  const operations = new Map<string, { path: string; method: string; operation: Operation }>();
  for (const [path, methods] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(methods))
      operations.set(operation.operationId, { path, method, operation });
  const ajv = new Ajv({ strict: false, allErrors: true });
  const called = new Set<string>();
  for (const next of calls) {
    const call = typeof next === 'function' ? next() : next;
    const documented = operations.get(call.operationId);
    assert.ok(documented, `${call.operationId} is documented`);
    const path = documented.path.replace(/\{(\w+)\}/g, (_, name: string) =>
      encodeURIComponent(call.params![name]!),
    );
    const query = call.query ? `?${new URLSearchParams(call.query).toString()}` : '';
    const response = await fetch(`${server.url}${path}${query}`, {
      method: documented.method.toUpperCase(),
      ...(call.body === undefined
        ? {}
        : { body: JSON.stringify(call.body), headers: { 'content-type': 'application/json' } }),
    });
    const what = `${call.operationId} ${documented.method.toUpperCase()} ${path}${query}`;
    const text = await response.text();
    assert.equal(response.status, call.status, `${what}: ${text}`);
    const declared = documented.operation.responses[String(response.status)];
    assert.ok(declared, `${what}: answer ${response.status} is declared`);
    const [contentType, media] = Object.entries(declared.content ?? {})[0] ?? [];
    assert.ok(media, `${what}: the answer's content is declared`);
    assert.ok(
      response.headers.get('content-type')?.startsWith(contentType!),
      `${what}: content type ${contentType}`,
    );
    const answer: unknown = contentType === 'application/json' ? JSON.parse(text) : text;
    const validate = ajv.compile({ ...media.schema, components: document.components });
    assert.ok(validate(answer), `${what}: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 2000)}`);
    if (call.operationId === 'sendMessage' && response.status === 201)
      sentId = (answer as { messageId: string }).messageId;
    called.add(call.operationId);
  }
  assert.deepEqual(
    [...operations.keys()].filter((id) => !called.has(id)),
    [],
    'every documented operation is called',
  );
});

test('openapi - every operation has an operationId, a summary, its parameters and a 4xx answer', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as Document;
  const ids = new Set<string>();
  for (const [path, methods] of Object.entries(document.paths))
    for (const [method, operation] of Object.entries(methods)) {
      const what = `${method} ${path}`;
      assert.ok(operation.operationId && !ids.has(operation.operationId), `${what}: a unique operationId`);
      ids.add(operation.operationId);
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      assert.deepEqual(
        (operation.parameters ?? [])
          .filter((p) => p.in === 'path')
          .map((p) => p.name)
          .sort(),
        inPath.sort(),
        `${what}: every path parameter is declared`,
      );
      if (path !== '/health' && path !== '/ready')
        assert.ok(
          Object.keys(operation.responses).some((status) => status.startsWith('4')),
          `${what}: a 4xx answer`,
        );
    }
  const browse = document.paths['/destinations/{kind}/{name}/messages']!.get!;
  assert.deepEqual(
    browse.parameters!.filter((p) => p.in === 'query').map((p) => p.name),
    ['selector', 'limit'],
  );
});
