import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { startAdminServer } from '../../../src/admin/server.js';
import { ConfigError, parseConfig } from '../../../src/config/load-config.js';
import { MAX_DESTINATION_NAME_LENGTH } from '../../../src/jms/destination/destination-name.js';
import { fakeRegistry } from '../config/fake-connectors.js';
import { FileStore, JmsEngine } from '../../../src/index.js';
import { FakeClock } from '../../helpers/fake-clock.js';
import { testEngine } from '../../helpers/engine.js';

interface Answer {
  status: number;
  body: unknown;
  text: string;
}

/** A raw request: the path goes on the wire as written (fetch would re-encode a bad escape). */
function send(base: string, method: string, path: string, body?: string): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, text });
        });
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Each route with requests that are wrong: bad escapes, bad names, bad bodies, bad queries. */
const BAD_REQUESTS: readonly [method: string, path: string, body?: string][] = [
  ['GET', '/destinations/queue/%E0%A4%A'],
  ['GET', '/destinations/queue/%ZZ'],
  ['GET', '/destinations/%ZZ/orders'],
  ['GET', '/destinations/nope/orders'],
  ['GET', '/destinations/queue/missing'],
  ['DELETE', '/destinations/queue/%E0%A4%A'],
  ['DELETE', '/destinations/queue/missing'],
  ['GET', '/destinations/queue/%E0%A4%A/messages'],
  ['GET', '/destinations/queue/orders/messages?limit=-1'],
  ['GET', '/destinations/queue/orders/messages?limit=abc'],
  ['GET', '/destinations/queue/orders/messages?selector=%3D%3D'],
  ['GET', '/destinations/topic/events/messages'],
  ['GET', '/destinations/queue/missing/messages'],
  ['POST', '/destinations/queue/orders/messages', '{'],
  ['POST', '/destinations/queue/orders/messages', '[1,2]'],
  ['POST', '/destinations/queue/orders/messages', '"text"'],
  ['POST', '/destinations/queue/orders/messages', '{"type":"nope","body":1}'],
  ['POST', '/destinations/queue/orders/messages', '{"type":"text","body":{"a":1}}'],
  ['POST', '/destinations/queue/orders/messages', '{"type":"text","body":"x","properties":{"a":{"b":1}}}'],
  ['POST', '/destinations/queue/orders/messages', '{"type":"text","body":"x","headers":{"JMSPriority":99}}'],
  ['POST', '/destinations/queue/missing/messages', '{"type":"text","body":"x"}'],
  ['POST', '/destinations/queue/%ZZ/messages', '{"type":"text","body":"x"}'],
  ['DELETE', '/destinations/queue/orders/messages/%ZZ'],
  ['DELETE', '/destinations/queue/orders/messages/ID:none'],
  ['DELETE', '/destinations/queue/missing/messages/ID:none'],
  ['POST', '/destinations/queue/orders/move', '{}'],
  ['POST', '/destinations/queue/orders/move', '{"to":"nowhere"}'],
  ['POST', '/destinations/queue/orders/move', '{"to":"queue://missing"}'],
  ['POST', '/destinations/queue/orders/move', '{"to":"queue://errors","selector":"=="}'],
  ['POST', '/destinations/queue/orders/move', '{"to":"queue://errors","limit":-3}'],
  ['POST', '/destinations/queue/orders/move', '{"to":"queue://errors","limit":"many"}'],
  ['POST', '/destinations/queue/orders/move', '[]'],
  ['POST', '/destinations/topic/events/move', '{"to":"queue://errors"}'],
  ['POST', '/destinations', '{'],
  ['POST', '/destinations', '{"kind":"queue"}'],
  ['POST', '/destinations', '{"kind":"bucket","name":"x"}'],
  ['POST', '/destinations', '{"kind":"queue","name":"a b"}'],
  ['POST', '/destinations', '{"kind":"queue","name":"x","options":{"messagesMaximum":"lots"}}'],
  ['POST', '/destinations', '{"kind":"queue","name":"x","options":{"keys":"JMSPriority"}}'],
  ['POST', '/destinations', '{"kind":"queue","name":"x","options":{"unknownSetting":1}}'],
  ['POST', '/destinations', '{"kind":"queue","name":"x","options":{"thresholds":{"messagesHigh":-5}}}'],
  [
    'POST',
    '/destinations',
    '{"kind":"queue","name":"x","options":{"timeToDeliverOverride":"not a schedule"}}',
  ],
  ['POST', '/destinations', '{"kind":"queue","name":"x","options":[]}'],
  ['POST', '/destinations', '{"kind":"queue","name":"x","extra":1}'],
  ['DELETE', '/subscriptions/%ZZ/name'],
  ['DELETE', '/subscriptions/client/missing'],
  ['POST', '/bridges/%ZZ/pause'],
  ['POST', '/bridges/missing/resume'],
  ['PUT', '/destinations'],
  ['GET', '/nope'],
  ['GET', '/%ZZ'],
];

test('admin api - every bad request to every route is a 4xx with a JSON error, and the server keeps answering', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  await engine.engine.createQueue('orders');
  await engine.engine.createQueue('errors');
  await engine.engine.createTopic('events');
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const wrong: string[] = [];
  for (const [method, path, body] of BAD_REQUESTS) {
    const answer = await send(server.url, method, path, body);
    const error = (answer.body as { error?: { name?: unknown; message?: unknown } } | undefined)?.error;
    if (
      answer.status < 400 ||
      answer.status >= 500 ||
      typeof error?.message !== 'string' ||
      typeof error.name !== 'string'
    )
      wrong.push(`${method} ${path} ${body ?? ''} -> ${answer.status} ${answer.text}`);
    assert.equal((await send(server.url, 'GET', '/health')).status, 200, `alive after ${method} ${path}`);
  }
  assert.deepEqual(wrong, []);
  assert.equal(engine.engine.destinationStatistics('queue://orders').messagesCurrent, 0, 'nothing was sent');
  assert.ok(
    engine.engine.destinations().every((d) => !d.toString().endsWith('://x')),
    'no destination was created from a bad request',
  );
});

test('admin api - a malformed percent-encoding in a path is a 400 that says so', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const answer = await send(server.url, 'GET', '/destinations/queue/%E0%A4%A');
  assert.equal(answer.status, 400);
  assert.deepEqual(answer.body, {
    error: {
      name: 'HttpError',
      message: "path segment '%E0%A4%A' is not valid percent-encoding (write '%' as '%25')",
    },
  });
});

test('admin api - a send the full store refuses is a 503 with the store message, not a 400 (PER-1)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-admin-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const store = await FileStore.open({ path: dir, maxBytes: 96 * 1024 });
  const engine = await JmsEngine.open({ store, clock: new FakeClock() });
  t.after(() => engine.close());
  await engine.createQueue('full');
  const server = await startAdminServer({ engine, port: 0 });
  t.after(() => server.close());
  let answer: Answer | undefined;
  for (let i = 0; i < 500; i++) {
    const message = JSON.stringify({ type: 'text', body: `${i}:${'x'.repeat(2048)}` });
    answer = await send(server.url, 'POST', '/destinations/queue/full/messages', message);
    if (answer.status !== 201) break;
  }
  assert.equal(answer?.status, 503, answer?.text);
  assert.deepEqual(Object.keys(answer.body as object), ['error']);
  const error = (answer.body as { error: { name: string; message: string } }).error;
  assert.equal(error.name, 'StoreError');
  assert.match(error.message, /store '.*gateway\.db' is full .*nothing of this commit was stored/);
  assert.equal((await send(server.url, 'GET', '/health')).status, 200);
});

test('admin api - POST /destinations validates as the configuration does, each problem with its JSON path', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const create = (body: unknown) => send(server.url, 'POST', '/destinations', JSON.stringify(body));
  const message = async (body: unknown) => {
    const answer = await create(body);
    assert.equal(answer.status, 400, answer.text);
    return (answer.body as { error: { message: string } }).error.message;
  };
  assert.equal(
    await message({ kind: 'queue', name: 'q', options: { messagesMaximum: 'lots', keys: 'JMSPriority' } }),
    'options.keys: expected a list (items starting with -); options.messagesMaximum: expected an integer >= 0',
  );
  assert.match(
    await message({
      kind: 'queue',
      name: 'q',
      options: { messagesMaximum: 10, thresholds: { messagesHigh: -5 }, colour: 1 },
    }),
    /^options\.colour: unknown setting \(known: .*\); options\.thresholds\.messagesHigh: expected an integer >= 0$/,
  );
  assert.equal(
    await message({
      kind: 'queue',
      name: 'q',
      options: { messagesMaximum: 10, thresholds: { messagesHigh: 10 } },
    }),
    'options.thresholds.messagesHigh: expected less than messagesMaximum (10): flow control would never start, the quota refuses sends first',
  );
  const created = await create({
    kind: 'queue',
    name: 'q',
    options: { messagesMaximum: 10, thresholds: { messagesHigh: 5 } },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal(
    engine.engine.destinationOptions(engine.engine.destinations().find((d) => d.toString() === 'queue://q')!)
      ?.messagesMaximum,
    10,
  );
  const again = await create({
    kind: 'queue',
    name: 'q',
    options: { messagesMaximum: 10, thresholds: { messagesHigh: 5 } },
  });
  assert.equal(again.status, 200, 'the same settings again: it exists, nothing to do');
  const other = await create({ kind: 'queue', name: 'q', options: { messagesMaximum: 20 } });
  assert.equal(other.status, 409);
  assert.match(
    other.text,
    /destination 'queue:\/\/q' exists already with other settings: they are not changed here/,
  );
});

test('destination names - one limit of length and characters in the configuration, the admin API and the engine', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const longest = 'n'.repeat(MAX_DESTINATION_NAME_LENGTH);
  const tooLong = 'n'.repeat(1024 * 1024);
  const accepted = await send(
    server.url,
    'POST',
    '/destinations',
    JSON.stringify({ kind: 'queue', name: longest }),
  );
  assert.equal(accepted.status, 201, accepted.text);
  for (const name of ['n'.repeat(10_000), `${longest}n`, 'tab\there', 'bell\u0007', '']) {
    const refused = await send(server.url, 'POST', '/destinations', JSON.stringify({ kind: 'topic', name }));
    assert.equal(refused.status, 400);
    assert.ok(refused.text.length < 1_000, 'the answer does not echo a huge name');
    await assert.rejects(engine.engine.createTopic(name), { name: 'InvalidDestinationError' });
    assert.throws(
      () =>
        parseConfig(`destinations:\n  topics:\n    - name: ${JSON.stringify(name)}\n`, 'gw.yaml', {
          registry: fakeRegistry(),
          env: {},
        }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /^gw\.yaml:3:13: destinations\.topics\[0\]\.name: expected a string matching/.test(
          error.problems[0]!,
        ),
    );
  }
  const huge = await send(
    server.url,
    'POST',
    '/destinations',
    JSON.stringify({ kind: 'queue', name: tooLong }),
  );
  assert.equal(huge.status, 413, 'a body of settings is at most 64 KiB');
  assert.match(huge.text, /request body is larger than 65536 bytes/);
  const long = await send(
    server.url,
    'POST',
    '/destinations',
    JSON.stringify({ kind: 'queue', name: 'n'.repeat(60_000) }),
  );
  assert.equal(long.status, 400);
  assert.match(long.text, /name: expected a string matching/);
  assert.ok(long.text.length < 1_000, 'the answer does not echo a long name');
  // Created on first use, by a producer: the same rule.
  const session = engine.connect().createSession();
  assert.throws(() => session.createProducer(session.createQueue(tooLong)), {
    name: 'InvalidDestinationError',
  });
  const metrics = await send(server.url, 'GET', '/metrics');
  assert.ok(metrics.text.length < 100_000, `metrics are ${metrics.text.length} characters`);
});

test('admin api - random paths, methods and bodies never get a 5xx, and always a JSON answer', async (t) => {
  const engine = testEngine();
  t.after(() => engine.close());
  await engine.engine.createQueue('orders');
  const server = await startAdminServer({ engine: engine.engine, port: 0 });
  t.after(() => server.close());
  const segment = fc.oneof(
    fc.constantFrom(
      'destinations',
      'queue',
      'topic',
      'orders',
      'messages',
      'move',
      'subscriptions',
      'bridges',
      'pause',
      'reload',
      '-',
      '..',
      '.',
    ),
    fc.stringMatching(/^[A-Za-z0-9._~:@!$&'()*+,;=-]{0,12}$/),
    fc.stringMatching(/^(%[0-9A-Fa-fZz]{0,2}){1,4}$/),
  );
  const body = fc.oneof(
    fc.constant(undefined),
    fc.json(),
    fc.string(),
    fc.constantFrom(
      '{"kind":"queue","name":"x","options":{"keys":[{"property":"JMSPriority"}],"thresholds":{}}}',
      '{"to":"origin"}',
      '{"type":"text","body":"b"}',
    ),
  );
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'),
      fc.array(segment, { minLength: 1, maxLength: 6 }),
      fc.option(
        fc.stringMatching(/^[a-z]{1,8}=[A-Za-z0-9%'=<> ]{0,12}$/).map((q) => q.replaceAll(' ', '+')),
        { nil: undefined },
      ),
      body,
      async (method, segments, query, payload) => {
        const path = `/${segments.join('/')}${query === undefined ? '' : `?${query}`}`;
        const answer = await send(server.url, method, path, payload);
        // 501 is the one server answer a request may get here: a reload of a server started
        // without a configuration file (as this one is) cannot be done, whatever is asked.
        const reloadWithoutFile = answer.status === 501 && method === 'POST' && path.startsWith('/reload');
        assert.ok(
          answer.status < 500 || reloadWithoutFile,
          `${method} ${path} ${payload ?? ''} -> ${answer.status} ${answer.text}`,
        );
        assert.notEqual(answer.body, undefined, `${method} ${path}: not JSON: ${answer.text.slice(0, 200)}`);
      },
    ),
    { seed: 20261201, numRuns: 300 },
  );
  assert.equal((await send(server.url, 'GET', '/health')).status, 200);
});
