import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { BridgeControl, BridgeView } from '../../../src/admin/bridge-control.js';
import { startAdminServer } from '../../../src/admin/server.js';
import type { ReloadResult } from '../../../src/admin/routes.js';
import type { CliIo } from '../../../src/cli/cli-io.js';
import { runCli } from '../../../src/cli/program.js';
import { Session, TextMessage } from '../../../src/index.js';
import { testEngine } from '../../helpers/engine.js';
import { pendingForEachCause } from '../../helpers/pending-by-cause.js';
import { teardown } from '../../helpers/teardown.js';

/** A command's output, in lines, and an io for `runCli` that captures it. */
function capture(
  env: Record<string, string | undefined>,
  options: { tty?: boolean; clock?: () => number } = {},
) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    stderrIsTty: options.tty ?? false,
    readFile: () => Promise.resolve('{"type":"text","body":"from file","properties":{"n":1}}'),
    env,
    fetch,
    now: options.clock ?? (() => 0),
  };
  const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  return {
    io,
    get out() {
      return lines(stdout);
    },
    get err() {
      return lines(stderr);
    },
    get rawErr() {
      return stderr;
    },
  };
}

/** `jms-gateway <command> <argv...>` in process. */
const adminCommand = (command: string, argv: string[], io: CliIo) => runCli([command, ...argv], io);

/** An engine and an admin server on it, closed after the test. */
async function gateway(t: TestContext, options: Partial<Parameters<typeof startAdminServer>[0]> = {}) {
  const engine = testEngine();
  const server = await startAdminServer({ engine: engine.engine, port: 0, ...options });
  t.after(async () => {
    await server.close();
    await engine.close();
  });
  return { t: engine, server, env: { JMS_GATEWAY_ADMIN_URL: server.url } };
}

/** Parks `bodies` in queue://errors the way the engine does: origin queue://orders. */
async function parkInErrors(t: ReturnType<typeof testEngine>, bodies: string[]): Promise<void> {
  await t.engine.createQueue('errors');
  await t.engine.createQueue('orders', { errorDestination: 'queue://errors', redeliveryLimit: 0 });
  const session = t.connect().createSession(false, Session.CLIENT_ACKNOWLEDGE);
  const producer = session.createProducer(session.createQueue('orders'));
  for (const body of bodies) await producer.send(new TextMessage(body));
  const consumer = session.createConsumer(session.createQueue('orders'));
  for (const _ of bodies) await consumer.receiveNoWait();
  await session.recover();
  await consumer.close();
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, bodies.length);
}

test('cli admin commands - send, browse with a selector, and status against a running admin API', async (tc) => {
  const { t, env } = await gateway(tc);
  await t.engine.createQueue('orders');
  const sent = capture(env);
  assert.equal(
    await adminCommand(
      'send',
      ['queue://orders', '--body', '<order/>', '--property', 'region=eu', '--count', '2'],
      sent.io,
    ),
    0,
  );
  assert.deepEqual(sent.out, ['sent 2 messages to queue://orders']);
  const fromFile = capture(env);
  assert.equal(
    await adminCommand(
      'send',
      ['orders', '--message', 'msg.json', '--property', 'region=us', '--priority', '8'],
      fromFile.io,
    ),
    0,
  );
  assert.match(fromFile.out[0]!, /^sent 1 message to queue:\/\/orders: ID:/);
  const browsed = capture(env);
  assert.equal(await adminCommand('browse', ['orders', '--selector', "region = 'us'"], browsed.io), 0);
  assert.equal(browsed.out.length, 2);
  assert.match(browsed.out[0]!, /region=us/);
  assert.match(browsed.out[1]!, /from file/);
  assert.deepEqual(browsed.err, ['1 message']);
  const json = capture(env);
  assert.equal(await adminCommand('browse', ['orders', '--json', '--limit', '1'], json.io), 0);
  const [first] = JSON.parse(json.out.join('\n')) as { headers: { JMSPriority: number } }[];
  assert.equal(first!.headers.JMSPriority, 8, 'highest priority first, as sent with --priority');
  const status = capture(env);
  assert.equal(await adminCommand('status', [], status.io), 0);
  assert.match(status.out.join('\n'), /queue:\/\/orders\s+3\s+0\s+0/);
});

test('cli admin commands - status shows pending messages by cause, a column for each cause (DST-9)', async (context) => {
  const cleanup = teardown(context);
  const t = testEngine();
  cleanup(() => t.close());
  await pendingForEachCause(t, { scheduled: 2 });
  const server = await startAdminServer({ engine: t.engine, port: 0 });
  cleanup(() => server.close());
  const status = capture({ JMS_GATEWAY_ADMIN_URL: server.url });
  assert.equal(await adminCommand('status', [], status.io), 0);
  const [header, row] = status.out;
  assert.match(
    header!,
    /^destination\s+current\s+pending\s+consumers\s+uncommitted\s+scheduled\s+redeliveryDelay\s+unacknowledged\s+errorDestinationFull$/,
  );
  assert.match(row!, /^queue:\/\/orders\s+0\s+4\s+1\s+1\s+2\s+0\s+1\s+0$/);
});

test('cli admin commands - send --count prints a summary, ids only with --ids or --json, progress on stderr', async (tc) => {
  const { t, env } = await gateway(tc);
  await t.engine.createQueue('many');
  let now = 0;
  // Every reading of the clock is a second later: each message sent shows up in the progress.
  const clock = () => (now += 1_000);
  const summary = capture(env, { clock });
  assert.equal(await adminCommand('send', ['many', '--body', 'x', '--count', '12'], summary.io), 0);
  assert.deepEqual(summary.out, ['sent 12 messages to queue://many']);
  assert.ok(summary.err.length >= 2, summary.rawErr);
  assert.match(summary.err[0]!, /^sent \d+\/12 \(\d+%\) \d+\/s$/);
  assert.match(summary.err.at(-1)!, /^sent 12\/12 \(100%\) \d+\/s$/);
  const ids = capture(env);
  assert.equal(await adminCommand('send', ['many', '--body', 'x', '--count', '3', '--ids'], ids.io), 0);
  assert.equal(ids.out.length, 3);
  for (const id of ids.out) assert.match(id, /^ID:/);
  const json = capture(env);
  assert.equal(await adminCommand('send', ['many', '--body', 'x', '--count', '2', '--json'], json.io), 0);
  const parsed = JSON.parse(json.out.join('\n')) as {
    destination: string;
    sent: number;
    messageIds: string[];
  };
  assert.equal(parsed.destination, 'queue://many');
  assert.equal(parsed.sent, 2);
  assert.equal(parsed.messageIds.length, 2);
  assert.equal(t.engine.destinationStatistics('queue://many').messagesCurrent, 17);
});

test('cli admin commands - progress on a terminal rewrites one line on stderr', async (tc) => {
  const { t, env } = await gateway(tc);
  await t.engine.createQueue('tty');
  let now = 0;
  const run = capture(env, { tty: true, clock: () => (now += 1_000) });
  assert.equal(await adminCommand('send', ['tty', '--body', 'x', '--count', '3'], run.io), 0);
  assert.equal(run.err.length, 1, 'one line, rewritten');
  // Back to the line's start, the new state, then clear the rest of the line (ESC [ K).
  const CLEAR_TO_END = '\u001b[K';
  const draws = run.rawErr.split('\r').slice(1);
  assert.ok(draws.every((draw) => draw.includes(CLEAR_TO_END)));
  assert.match(draws[0]!, /^sent 1\/3 \(33%\) \d+\/s.\[K$/u);
  assert.match(draws.at(-1)!, /^sent 3\/3 \(100%\) \d+\/s.\[K\n$/u);
});

test('cli admin commands - replay moves an error queue back to the origins and reports progress', async (tc) => {
  const { t, env } = await gateway(tc);
  await parkInErrors(t, ['o0', 'o1', 'o2']);
  const run = capture(env);
  assert.equal(await adminCommand('replay', ['errors'], run.io), 0);
  assert.deepEqual(run.out, ['moved 3 messages from errors to their origins']);
  assert.deepEqual(run.err, ['moved 3/3 (100%)']);
  assert.equal(t.engine.destinationStatistics('queue://orders').messagesCurrent, 3);
});

test('cli admin commands - replay of messages without an origin exits 1, says how many and where they stayed', async (tc) => {
  const { t, env } = await gateway(tc);
  await parkInErrors(t, ['with origin']);
  const session = t.connect().createSession();
  const producer = session.createProducer(session.createQueue('errors'));
  for (const body of ['no origin 1', 'no origin 2']) await producer.send(new TextMessage(body));
  const run = capture(env);
  assert.equal(await adminCommand('replay', ['errors'], run.io), 1);
  assert.deepEqual(run.out, ['moved 1 message from errors to their origins']);
  assert.match(
    run.err.at(-1)!,
    /^2 messages had no origin \(no JMS_ErrorOrigin property\) and stayed in queue:\/\/errors; give them a destination: jms-gateway move errors DESTINATION/,
  );
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 2, 'they stayed');
  assert.equal(t.engine.destinationStatistics('queue://orders').messagesCurrent, 1);
  const json = capture(env);
  assert.equal(await adminCommand('replay', ['errors', '--json'], json.io), 1);
  assert.deepEqual(JSON.parse(json.out.join('\n')), {
    from: 'queue://errors',
    to: 'origin',
    total: 0,
    moved: 0,
    withoutOrigin: 2,
  });
  assert.equal(t.engine.destinationStatistics('queue://errors').messagesCurrent, 2);
});

test('cli admin commands - replay to origin of a message a bridge read from an external broker fails and says to give a target', async (tc) => {
  const { t, env } = await gateway(tc);
  await t.engine.createQueue('errors');
  await t.engine.createQueue('retry-here');
  const session = t.connect().createSession();
  const parked = new TextMessage('from rabbit');
  parked.setProviderProperty('JMS_ErrorOrigin', { type: 'string', value: 'bridge://amqp-in' });
  parked.setProviderProperty('JMS_ErrorBridge', { type: 'string', value: 'amqp-in' });
  await session.createProducer(session.createQueue('errors')).send(parked);
  const refused = capture(env);
  assert.equal(await adminCommand('replay', ['errors'], refused.io), 1);
  assert.match(
    refused.err.join('\n'),
    /^error: stopped after moving 0 of 1 message: .*came through bridge 'amqp-in' from an external source, which the gateway cannot send to; give a target destination.*; 1 message not moved is still in queue:\/\/errors$/,
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
});

test('cli admin commands - bridge list, pause, resume and restart, as text and as JSON', async (tc) => {
  const views: BridgeView[] = [{ name: 'orders', status: 'connected', counters: { in: 5, out: 4 } }];
  const set = (status: string) => (name: string) => {
    views.find((v) => v.name === name)!.status = status;
    return Promise.resolve();
  };
  const bridges: BridgeControl = {
    list: () => views,
    pause: set('paused'),
    resume: set('connected'),
    restart: set('connected'),
  };
  const { env } = await gateway(tc, { bridges });
  const list = capture(env);
  assert.equal(await runCli(['bridge', 'list'], list.io), 0);
  assert.match(list.out[1]!, /^orders\s+connected\s+5\s+4\s+0\s+0$/);
  const paused = capture(env);
  assert.equal(await runCli(['bridge', 'pause', 'orders'], paused.io), 0);
  assert.deepEqual(paused.out, ["paused bridge 'orders': paused"]);
  assert.equal(views[0]!.status, 'paused');
  const json = capture(env);
  assert.equal(await runCli(['bridge', 'list', '--json'], json.io), 0);
  assert.deepEqual(JSON.parse(json.out.join('\n')), views);
  const resumed = capture(env);
  assert.equal(await runCli(['bridge', 'resume', 'orders', '--json'], resumed.io), 0);
  assert.equal((JSON.parse(resumed.out.join('\n')) as BridgeView).status, 'connected');
  assert.equal(await runCli(['bridge', 'restart', 'orders'], capture(env).io), 0);
  const missing = capture(env);
  assert.equal(await runCli(['bridge', 'pause', 'nope'], missing.io), 1);
  assert.deepEqual(missing.err, ["error: there is no bridge 'nope' (see 'jms-gateway bridge list')"]);
});

test('cli admin commands - status --json gives destinations, totals and bridges', async (tc) => {
  const { t, env } = await gateway(tc);
  await t.engine.createQueue('orders');
  const run = capture(env);
  assert.equal(await adminCommand('status', ['--json'], run.io), 0);
  const status = JSON.parse(run.out.join('\n')) as {
    destinations: { destination: string; messagesCurrent: number }[];
    totals: { messagesCurrent: number };
    bridges: unknown[];
  };
  assert.deepEqual(
    status.destinations.map((d) => [d.destination, d.messagesCurrent]),
    [['queue://orders', 0]],
  );
  assert.equal(status.totals.messagesCurrent, 0);
  assert.deepEqual(status.bridges, []);
});

test('cli admin commands - clear errors: no gateway, wrong token, bad usage', async (tc) => {
  const offline = capture({ JMS_GATEWAY_ADMIN_URL: 'http://127.0.0.1:9' });
  assert.equal(await adminCommand('status', [], offline.io), 1);
  assert.match(offline.err[0]!, /cannot reach the gateway's admin API at http:\/\/127\.0\.0\.1:9/);
  const { env } = await gateway(tc, { token: '3f9c2a7be41d08c6f5a9e2d7b1c40e8a' });
  const wrong = capture({ ...env, JMS_GATEWAY_ADMIN_TOKEN: 'wrong' });
  assert.equal(await adminCommand('status', [], wrong.io), 1);
  assert.match(wrong.err[0]!, /failed with 401: .*\(set JMS_GATEWAY_ADMIN_TOKEN\)/);
  assert.ok(!wrong.rawErr.includes('3f9c2a7be41d08c6f5a9e2d7b1c40e8a'));
  for (const [argv, problem] of [
    [['browse'], /^error: missing required argument 'queue'$/],
    [
      ['browse', 'q', '--limit', 'x'],
      /^error: option '--limit <n>' argument 'x' is invalid: expected an integer >= 1$/,
    ],
    [['browse', 'q', '--limit', '-1'], /argument '-1' is invalid: expected an integer >= 1$/],
    [['send', 'q', '--count', 'abc'], /^error: option '--count <n>' argument 'abc' is invalid/],
    [['send', 'q', '--priority', '12'], /argument '12' is invalid: expected an integer from 0 to 9$/],
    [['send', 'q', '--property', 'novalue'], /argument 'novalue' is invalid: expected name=value$/],
    [['send', 'q', '--body', 'a', '--file', 'b'], /cannot be used with option '--file <file>'/],
    [['status', '--jsno'], /^error: unknown option '--jsno' \(did you mean --json\?\)$/],
    [['reload', 'extra'], /^error: too many arguments for 'reload'/],
    [
      ['status', '--url', '127.0.0.1:8161'],
      /argument '127.0.0.1:8161' is invalid: expected an http:\/\/ or https:\/\/ address/,
    ],
    [
      ['status', '--url', 'not a url'],
      /argument 'not a url' is invalid: expected an http:\/\/ or https:\/\/ address/,
    ],
    [['bridge', 'list', '--url', 'ftp://host'], /argument 'ftp:\/\/host' is invalid: expected an http:\/\//],
  ] as const) {
    const usage = capture(env);
    assert.equal(await adminCommand(argv[0], argv.slice(1), usage.io), 2, argv.join(' '));
    assert.equal(usage.err.length, 1, usage.rawErr);
    assert.match(usage.err[0]!, problem);
  }
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
