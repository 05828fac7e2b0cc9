import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startAdminServer } from '../../../src/admin/server.js';
import type { ReloadResult } from '../../../src/admin/routes.js';
import { type CommandIo, adminCommand } from '../../../src/cli/admin-commands.js';
import { Session, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { pendingForEachCause } from '../../helpers/pending-by-cause.js';

function capture(env: Record<string, string | undefined>) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CommandIo = {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    readFile: () => Promise.resolve('{"type":"text","body":"from file","properties":{"n":1}}'),
    env,
    fetch,
  };
  return { io, out, err };
}

test('cli admin commands - send, browse with a selector, and status against a running admin API', async () => {
  const t = testEngine();
  await t.engine.createQueue('orders');
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  const env = { JMS_GATEWAY_ADMIN_URL: server.url };
  const sent = capture(env);
  assert.equal(
    await adminCommand(
      'send',
      ['queue://orders', '--body', '<order/>', '--property', 'region=eu', '--count', '2'],
      sent.io,
    ),
    0,
  );
  assert.equal(sent.out.length, 2);
  assert.match(sent.out[0]!, /^ID:/);
  const fromFile = capture(env);
  assert.equal(
    await adminCommand('send', ['orders', '--message', 'msg.json', '--property', 'region=us'], fromFile.io),
    0,
  );
  const browsed = capture(env);
  assert.equal(await adminCommand('browse', ['orders', '--selector', "region = 'us'"], browsed.io), 0);
  assert.equal(browsed.out.length, 1);
  assert.match(browsed.out[0]!, /region=us/);
  assert.match(browsed.out[0]!, /from file/);
  assert.deepEqual(browsed.err, ['1 message']);
  const status = capture(env);
  assert.equal(await adminCommand('status', [], status.io), 0);
  assert.match(status.out.join('\n'), /queue:\/\/orders\s+3\s+0\s+0/);
  await server.close();
  await t.close();
});

test('cli admin commands - status shows pending messages by cause, a column for each cause (DST-9)', async () => {
  const t = testEngine();
  await pendingForEachCause(t, { scheduled: 2 });
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  const status = capture({ JMS_GATEWAY_ADMIN_URL: server.url });
  assert.equal(await adminCommand('status', [], status.io), 0);
  const [header, row] = status.out;
  assert.match(
    header!,
    /^destination\s+current\s+pending\s+consumers\s+uncommitted\s+scheduled\s+redeliveryDelay\s+unacknowledged\s+errorDestinationFull$/,
  );
  assert.match(row!, /^queue:\/\/orders\s+0\s+4\s+1\s+1\s+2\s+0\s+1\s+0$/);
  await server.close();
  await t.close();
});

test('cli admin commands - replay moves an error queue back to the origins and reports progress', async () => {
  const t = testEngine();
  await t.engine.createQueue('errors');
  await t.engine.createQueue('orders', { errorDestination: 'queue://errors', redeliveryLimit: 0 });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const producer = session.createProducer(session.createQueue('orders'));
  for (let i = 0; i < 3; i++) await producer.send(new TextMessage(`o${i}`));
  const consumer = session.createConsumer(session.createQueue('orders'));
  for (let i = 0; i < 3; i++) await consumer.receiveNoWait();
  await session.recover();
  await consumer.close();
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 3);
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  const run = capture({ JMS_GATEWAY_ADMIN_URL: server.url });
  assert.equal(await adminCommand('replay', ['errors'], run.io), 0);
  assert.deepEqual(run.out, ['moved 3 messages from errors to their origins']);
  assert.deepEqual(run.err, ['moved 3…']);
  assert.equal(t.engine.destinationStatistics('queue://orders').messagesCurrent, 3);
  await server.close();
  await t.close();
});

test('cli admin commands - replay to origin of a message a bridge read from an external broker fails and says to give a target', async () => {
  const t = testEngine();
  await t.engine.createQueue('errors');
  await t.engine.createQueue('retry-here');
  const session = t.connect().createSession();
  const parked = new TextMessage('from rabbit');
  parked.setProviderProperty('JMS_ErrorOrigin', { type: 'string', value: 'bridge://amqp-in' });
  parked.setProviderProperty('JMS_ErrorBridge', { type: 'string', value: 'amqp-in' });
  await session.createProducer(session.createQueue('errors')).send(parked);
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  const env = { JMS_GATEWAY_ADMIN_URL: server.url };
  const refused = capture(env);
  assert.equal(await adminCommand('replay', ['errors'], refused.io), 1);
  assert.match(
    refused.err.join('\n'),
    /came through bridge 'amqp-in' from an external source, which the gateway cannot send to; give a target destination/,
  );
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 1, 'nothing moved');
  const explicit = capture(env);
  assert.equal(await adminCommand('replay', ['errors', 'queue://retry-here'], explicit.io), 0);
  assert.equal(t.engine.destinationStatistics('queue://retry-here').messagesCurrent, 1);
  // A bare name is a queue, for the target as for the source.
  const bare = capture(env);
  assert.equal(await adminCommand('move', ['retry-here', 'errors'], bare.io), 0);
  assert.deepEqual(bare.out, ['moved 1 message from retry-here to queue://errors']);
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 1);
  await server.close();
  await t.close();
});

test('cli admin commands - clear errors: no gateway, wrong token, bad usage', async () => {
  const offline = capture({ JMS_GATEWAY_ADMIN_URL: 'http://127.0.0.1:9' });
  assert.equal(await adminCommand('status', [], offline.io), 1);
  assert.match(offline.err[0]!, /cannot reach the gateway's admin API at http:\/\/127\.0\.0\.1:9/);
  const t = testEngine();
  const server = await startAdminServer({
    engine: t.engine,
    port: 0,
    token: '3f9c2a7be41d08c6f5a9e2d7b1c40e8a',
  });
  const wrong = capture({ JMS_GATEWAY_ADMIN_URL: server.url, JMS_GATEWAY_ADMIN_TOKEN: 'wrong' });
  assert.equal(await adminCommand('status', [], wrong.io), 1);
  assert.match(wrong.err[0]!, /failed with 401: .*\(set JMS_GATEWAY_ADMIN_TOKEN\)/);
  assert.ok(!wrong.err.join('').includes('right'));
  const usage = capture({});
  assert.equal(await adminCommand('browse', [], usage.io), 2);
  assert.match(usage.err[0]!, /usage: jms-gateway browse QUEUE/);
  assert.equal(await adminCommand('browse', ['q', '--limit', 'x'], capture({}).io), 2);
  await server.close();
  await t.close();
});

test('cli admin commands - reload prints what changed, or the problems and exit 1 when the gateway kept its configuration', async () => {
  const t = testEngine();
  const results: ReloadResult[] = [
    {
      reloaded: true,
      added: ['fresh'],
      removed: [],
      restarted: ['orders'],
      unchanged: ['demo'],
      created: ['queue://orders.v2'],
      changes: { orders: ['target'] },
      warnings: ["destination 'queue://old' is no longer configured: it keeps running with its messages"],
      errors: [],
    },
    {
      reloaded: false,
      added: [],
      removed: [],
      restarted: [],
      unchanged: [],
      created: [],
      changes: {},
      warnings: [],
      errors: ['gw.yaml:7:5: bridges[1].prefetch: unknown setting'],
    },
  ];
  const server = await startAdminServer({
    engine: t.engine,
    port: 0,
    reload: () => Promise.resolve(results.shift()!),
  });
  const env = { JMS_GATEWAY_ADMIN_URL: server.url };
  try {
    const applied = capture(env);
    assert.equal(await adminCommand('reload', [], applied.io), 0);
    assert.deepEqual(applied.out, [
      'reloaded: added fresh; removed -; restarted orders; unchanged demo',
      'created queue://orders.v2',
    ]);
    assert.deepEqual(applied.err, [
      "warning: destination 'queue://old' is no longer configured: it keeps running with its messages",
    ]);
    const refused = capture(env);
    assert.equal(await adminCommand('reload', [], refused.io), 1);
    assert.deepEqual(refused.out, []);
    assert.deepEqual(refused.err, [
      'gw.yaml:7:5: bridges[1].prefetch: unknown setting',
      'not reloaded: the gateway keeps running its previous configuration',
    ]);
    const usage = capture(env);
    assert.equal(await adminCommand('reload', ['extra'], usage.io), 2);
  } finally {
    await server.close();
    await t.close();
  }
});
