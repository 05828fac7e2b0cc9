import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BridgeControl, BridgeView } from '../../../src/admin/bridge-control.js';
import { startAdminServer } from '../../../src/admin/server.js';
import { Session, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { pendingForEachCause } from '../../helpers/pending-by-cause.js';
import { teardown } from '../../helpers/teardown.js';

/** A token of the strength the admin API asks for. */
const TOKEN = '3f9c2a7be41d08c6f5a9e2d7b1c40e8a';

async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  const text = await response.text();
  return {
    status: response.status,
    text,
    json: text.startsWith('{') || text.startsWith('[') ? (JSON.parse(text) as unknown) : undefined,
  };
}

function fakeBridges(): BridgeControl & { views: BridgeView[] } {
  const views: BridgeView[] = [
    {
      name: 'orders',
      status: 'connected',
      counters: { in: 5, out: 4, deadLettered: 1, dropped: 0, inFlight: 1 },
    },
  ];
  const set = (status: string) => (name: string) => {
    views.find((v) => v.name === name)!.status = status;
    return Promise.resolve();
  };
  return {
    views,
    list: () => views,
    pause: set('paused'),
    resume: set('connected'),
    restart: set('connected'),
  };
}

test('admin api - health, readiness, metrics with pending by cause and bridge counters', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const queue = session.createQueue('orders');
  const producer = session.createProducer(queue);
  await producer.send(new TextMessage('a'));
  await producer.send(new TextMessage('b'));
  await session.createConsumer(queue).receiveNoWait();
  let ready = false;
  const server = await startAdminServer({
    engine: t.engine,
    port: 0,
    bridges: fakeBridges(),
    ready: () => ready,
  });
  cleanup(() => server.close());
  assert.equal((await call(`${server.url}/health`)).status, 200);
  assert.equal((await call(`${server.url}/ready`)).status, 503);
  ready = true;
  assert.equal((await call(`${server.url}/ready`)).status, 200);
  const metrics = (await call(`${server.url}/metrics`)).text;
  assert.match(
    metrics,
    /jms_gateway_destination_messages_current\{destination="queue:\/\/orders",kind="queue"\} 1/,
  );
  assert.match(
    metrics,
    /jms_gateway_destination_messages_pending_by_cause\{destination="queue:\/\/orders",kind="queue",cause="unacknowledged"\} 1/,
  );
  assert.match(metrics, /jms_gateway_bridge_dead_lettered_total\{bridge="orders"\} 1/);
  assert.match(metrics, /jms_gateway_bridge_status\{bridge="orders",status="connected"\} 1/);
  assert.match(metrics, /# TYPE jms_gateway_bridge_in_total counter/);
});

test('admin api - GET /destinations gives pending messages and bytes by cause for each destination and in the totals (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await pendingForEachCause(t);
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  const response = await call(`${server.url}/destinations`).finally(() => server.close());
  assert.equal(response.status, 200);
  type Causes = Record<string, number>;
  const body = response.json as {
    destinations: { destination: string; pendingMessagesByCause: Causes; pendingBytesByCause: Causes }[];
    totals: { pendingMessagesByCause: Causes; pendingBytesByCause: Causes };
  };
  const orders = body.destinations.find((d) => d.destination === 'queue://orders')!;
  const messages = {
    uncommitted: 1,
    scheduled: 1,
    redeliveryDelay: 0,
    unacknowledged: 1,
    errorDestinationFull: 0,
  };
  const bytes = {
    uncommitted: 2,
    scheduled: 5,
    redeliveryDelay: 0,
    unacknowledged: 7,
    errorDestinationFull: 0,
  };
  assert.deepEqual(orders.pendingMessagesByCause, messages);
  assert.deepEqual(orders.pendingBytesByCause, bytes);
  assert.deepEqual(body.totals.pendingMessagesByCause, messages);
  assert.deepEqual(body.totals.pendingBytesByCause, bytes);
});

test('admin api - off loopback it needs a bearer token, refuses requests without it, and never starts without one', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await assert.rejects(
    startAdminServer({ engine: t.engine, host: '0.0.0.0', port: 0 }),
    /not loopback: set a token/,
  );
  const server = await startAdminServer({ engine: t.engine, host: '0.0.0.0', port: 0, token: TOKEN });
  cleanup(() => server.close());
  const port = new URL(server.url).port;
  const base = `http://127.0.0.1:${port}`;
  const refused = await call(`${base}/destinations`);
  assert.equal(refused.status, 401);
  assert.ok(!refused.text.includes(TOKEN));
  assert.equal(
    (await call(`${base}/destinations`, { headers: { authorization: 'Bearer wrong!' } })).status,
    401,
  );
  assert.equal(
    (await call(`${base}/destinations`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    200,
  );
  assert.equal((await call(`${base}/health`)).status, 200, 'health needs no token');
});

test('admin api - create, inspect, send, browse with a selector, delete a message, delete a destination', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  cleanup(() => server.close());
  const created = await call(`${server.url}/destinations`, {
    method: 'POST',
    body: JSON.stringify({ kind: 'queue', name: 'q', options: { redeliveryLimit: 2 } }),
  });
  assert.equal(created.status, 201);
  for (const color of ['red', 'blue']) {
    const sent = await call(`${server.url}/destinations/queue/q/messages`, {
      method: 'POST',
      body: JSON.stringify({ type: 'text', body: color, properties: { color } }),
    });
    assert.equal(sent.status, 201);
  }
  const browsed = await call(
    `${server.url}/destinations/queue/q/messages?selector=${encodeURIComponent("color = 'blue'")}`,
  );
  const messages = browsed.json as { body: string; headers: { JMSMessageID: string } }[];
  assert.deepEqual(
    messages.map((m) => m.body),
    ['blue'],
  );
  assert.equal(
    (await call(`${server.url}/destinations/queue/q`)).json &&
      ((await call(`${server.url}/destinations/queue/q`)).json as { messagesCurrent: number })
        .messagesCurrent,
    2,
  );
  const id = messages[0]!.headers.JMSMessageID;
  assert.equal(
    (
      await call(`${server.url}/destinations/queue/q/messages/${encodeURIComponent(id)}`, {
        method: 'DELETE',
      })
    ).status,
    200,
  );
  assert.equal(
    (
      await call(`${server.url}/destinations/queue/q/messages/${encodeURIComponent(id)}`, {
        method: 'DELETE',
      })
    ).status,
    404,
  );
  const bad = await call(
    `${server.url}/destinations/queue/q/messages?selector=${encodeURIComponent('color =')}`,
  );
  assert.equal(bad.status, 400);
  assert.match(bad.text, /InvalidSelectorError/);
  assert.equal((await call(`${server.url}/destinations/queue/q`, { method: 'DELETE' })).status, 200);
  assert.equal((await call(`${server.url}/destinations/queue/q`)).status, 404);
  assert.equal((await call(`${server.url}/nope`)).status, 404);
});

test('admin api - GET count gives how many available messages a browse or move through a selector would see', async () => {
  const t = testEngine();
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  try {
    await t.engine.createQueue('counted');
    for (const color of ['red', 'blue', 'red']) {
      await call(`${server.url}/destinations/queue/counted/messages`, {
        method: 'POST',
        body: JSON.stringify({ type: 'text', body: color, properties: { color } }),
      });
    }
    assert.deepEqual((await call(`${server.url}/destinations/queue/counted/count`)).json, { count: 3 });
    const red = await call(
      `${server.url}/destinations/queue/counted/count?selector=${encodeURIComponent("color = 'red'")}`,
    );
    assert.deepEqual(red.json, { count: 2 });
    assert.equal((await call(`${server.url}/destinations/queue/nowhere/count`)).status, 404);
    assert.equal((await call(`${server.url}/destinations/queue/counted/count?selector=x%20%3D`)).status, 400);
  } finally {
    await server.close();
    await t.close();
  }
});

test('admin api - replay moves parked messages back to their origin with properties kept and delivery count reset', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await t.engine.createQueue('errors');
  await t.engine.createQueue('orders', { errorDestination: 'queue://errors', redeliveryLimit: 0 });
  const session = t.connect().createSession(true);
  const message = new TextMessage('<order id="7"/>');
  message.setLongProperty('orderId', 7n);
  await session.createProducer(session.createQueue('orders')).send(message);
  await session.commit();
  const consumer = session.createConsumer(session.createQueue('orders'));
  await consumer.receiveNoWait();
  await session.rollback();
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 1);
  await consumer.close();
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  cleanup(() => server.close());
  const replay = await call(`${server.url}/destinations/queue/errors/move`, {
    method: 'POST',
    body: JSON.stringify({ to: 'origin' }),
  });
  assert.deepEqual(replay.json, { moved: 1 });
  const back = (await session.createConsumer(session.createQueue('orders')).receiveNoWait())!;
  assert.equal((back as TextMessage).getText(), '<order id="7"/>');
  assert.equal(back.getLongProperty('orderId'), 7n);
  assert.equal(back.getIntProperty('JMSXDeliveryCount'), 1);
  assert.equal(back.propertyExists('JMS_ErrorReason'), false);
  await session.commit();
});

test('admin api - bridges are listed, paused and resumed; the OpenAPI document lists every route', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  const bridges = fakeBridges();
  const server = await startAdminServer({ engine: t.engine, port: 0, bridges });
  cleanup(() => server.close());
  assert.equal(
    ((await call(`${server.url}/bridges/orders/pause`, { method: 'POST' })).json as BridgeView).status,
    'paused',
  );
  assert.equal(
    ((await call(`${server.url}/bridges/orders/resume`, { method: 'POST' })).json as BridgeView).status,
    'connected',
  );
  assert.equal((await call(`${server.url}/bridges/none/pause`, { method: 'POST' })).status, 404);
  const spec = (await call(`${server.url}/openapi.json`)).json as { paths: Record<string, unknown> };
  assert.ok(spec.paths['/destinations/{kind}/{name}/move']);
  assert.ok(spec.paths['/bridges/{name}/restart']);
});

test('admin server - closing answers a request under way before it closes (a send it made is stored: its client must hear so)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  let release!: () => void;
  let asked!: () => void;
  const running = new Promise<void>((resolve) => (asked = resolve));
  const server = await startAdminServer({
    engine: t.engine,
    port: 0,
    reload: async () => {
      asked();
      await new Promise<void>((resolve) => (release = resolve));
      return {
        reloaded: true,
        added: [],
        removed: [],
        restarted: [],
        unchanged: [],
        created: [],
        changes: {},
        warnings: [],
        errors: [],
      };
    },
  });
  const answer = fetch(`${server.url}/reload`, { method: 'POST' });
  await running;
  const closed = server.close();
  release();
  const response = await answer;
  assert.equal(response.status, 200);
  assert.equal(((await response.json()) as { reloaded: boolean }).reloaded, true);
  await closed;
  await assert.rejects(fetch(`${server.url}/health`), 'no longer listening');
});

test('admin api - a token too short, too easy to guess or not sendable in a header is refused at start, without printing it', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  for (const [token, why] of [
    [' ', /white space/],
    ['x', /it has 1 character, at least 16 are needed/],
    ['abc123', /it has 6 characters/],
    ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', /too easy to guess \(1 different characters/],
    ['abcdefghijklmnop', /too easy to guess/],
    ['correct horse battery staple', /white space/],
    ['s\u00e9cret-s\u00e9cret-s\u00e9cret', /outside ASCII/],
  ] as const)
    for (const host of ['0.0.0.0', '127.0.0.1']) {
      await assert.rejects(
        startAdminServer({ engine: engine.engine, host, port: 0, token }),
        (error: Error) => {
          assert.match(error.message, /^the admin token in JMS_GATEWAY_ADMIN_TOKEN is not strong enough: /);
          assert.match(error.message, why);
          assert.match(error.message, /make one with: openssl rand -hex 16$/);
          // Short ones are in any text ('x'): the long ones show that the token is never quoted.
          if (token.length >= 6) assert.ok(!error.message.includes(token), 'the token is not in the message');
          return true;
        },
      );
    }
  const server = await startAdminServer({ engine: engine.engine, host: '0.0.0.0', port: 0, token: TOKEN });
  t.after(() => server.close());
  const base = `http://127.0.0.1:${new URL(server.url).port}`;
  assert.equal(
    (await call(`${base}/destinations`, { headers: { authorization: `Bearer ${TOKEN}` } })).status,
    200,
  );
});
