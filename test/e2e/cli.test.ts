/**
 * The `jms-gateway` command as a user runs it: a real process (through tsx) for each command
 * line, against one real gateway process shared by the tests that need one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, test } from 'node:test';
import {
  type CliResult,
  adminJson,
  killGateway,
  type RunningGateway,
  repositoryRoot,
  runCli,
  startGateway,
  workspace,
} from './gateway-harness.js';

const space = await workspace();
let running: Promise<RunningGateway> | undefined;

/** The gateway on the default configuration (bridge `demo`), started by the first test that needs it. */
function gateway(): Promise<RunningGateway> {
  running ??= startGateway(join(repositoryRoot, 'config/gateway.yaml'), space.dir);
  return running;
}

after(async () => {
  if (running) await killGateway(await running.catch(() => undefined));
  await space.cleanup();
});

const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, space.dir, env);
const atGateway = async (args: string[]) =>
  cli(args, { JMS_GATEWAY_ADMIN_URL: (await gateway()).admin, JMS_GATEWAY_ADMIN_TOKEN: '' });

/** One line on stderr, no stack trace, nothing on stdout. */
function assertOneLineError(result: CliResult, code: number, pattern: RegExp): void {
  assert.equal(result.code, code, `exit ${code}: ${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
  assert.match(result.stderr, pattern);
}

const COMMANDS = [
  [],
  ['run'],
  ['validate'],
  ['selector'],
  ['selector', 'check'],
  ['selector', 'eval'],
  ['status'],
  ['send'],
  ['browse'],
  ['move'],
  ['replay'],
  ['reload'],
  ['bridge'],
  ['bridge', 'list'],
  ['bridge', 'pause'],
  ['bridge', 'resume'],
  ['bridge', 'restart'],
  ['completion'],
  ['version'],
];

test(
  'cli - --help and -h on the program and every command exit 0 and show usage and examples',
  { timeout: 300_000 },
  async () => {
    for (const command of COMMANDS) {
      const long = await cli([...command, '--help']);
      const name = ['jms-gateway', ...command].join(' ');
      assert.equal(long.code, 0, `${name} --help: ${long.stderr}`);
      assert.match(long.stdout, new RegExp(`^Usage: ${name} `), name);
      assert.match(long.stdout, /\nExamples:\n {2}\$ jms-gateway /, `${name} --help has examples`);
      const short = await cli([...command, '-h']);
      assert.equal(short.code, 0, `${name} -h: ${short.stderr}`);
      assert.equal(short.stdout, long.stdout, `${name}: -h is --help`);
    }
    const program = await cli(['--help']);
    assert.match(program.stdout, /Exit status:\n {2}0 {2}done as asked\n {2}1 .*\n.*\n {2}2 {2}usage error/);
    // `help COMMAND` as well.
    assert.equal((await cli(['help', 'replay'])).stdout, (await cli(['replay', '--help'])).stdout);
  },
);

test('cli - --version and -V print the version of package.json', { timeout: 60_000 }, async () => {
  const { version } = JSON.parse(await readFile(join(repositoryRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  for (const flag of ['--version', '-V', 'version']) {
    const result = await cli([flag]);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${version}\n`);
  }
});

test(
  'cli - an unknown option or command exits 2 with one line naming it, no stack trace',
  { timeout: 120_000 },
  async () => {
    assertOneLineError(
      await cli(['run', '--confg', 'gateway.yaml']),
      2,
      /^error: unknown option '--confg' \(did you mean --config\?\)\n$/,
    );
    assertOneLineError(await cli(['validate', '--nope']), 2, /^error: unknown option '--nope'\n$/);
    assertOneLineError(
      await cli(['bridge', 'pause', 'demo', '--jsno']),
      2,
      /unknown option '--jsno' \(did you mean --json\?\)/,
    );
    assertOneLineError(
      await cli(['stauts']),
      2,
      /^error: unknown command 'stauts' \(did you mean status\?\)\n$/,
    );
    assertOneLineError(await cli(['browse']), 2, /^error: missing required argument 'queue'\n$/);
    // An operation that fails is one line too, exit 1.
    assertOneLineError(
      await cli(['status', '--url', 'http://127.0.0.1:9']),
      1,
      /^error: cannot reach the gateway's admin API at http:\/\/127\.0\.0\.1:9/,
    );
  },
);

test(
  'cli - a bad number exits 2 with one line naming the option and the value',
  { timeout: 120_000 },
  async () => {
    for (const [args, pattern] of [
      [
        ['send', 'orders', '--count', 'abc'],
        /^error: option '--count <n>' argument 'abc' is invalid: expected an integer >= 1\n$/,
      ],
      [
        ['browse', 'orders', '--limit', '-1'],
        /^error: option '--limit <n>' argument '-1' is invalid: expected an integer >= 1\n$/,
      ],
      [
        ['send', 'orders', '--priority', '12'],
        /argument '12' is invalid: expected an integer from 0 to 9\n$/,
      ],
      [
        ['run', '--admin-port', '70000'],
        /argument '70000' is invalid: expected an integer from 0 to 65535\n$/,
      ],
    ] as const) {
      assertOneLineError(await cli([...args]), 2, pattern);
    }
  },
);

test('cli - a selector starting with - is the operand it looks like', { timeout: 60_000 }, async () => {
  const checked = await cli(['selector', 'check', '-qty * 2 > 1']);
  assert.equal(checked.code, 0, checked.stderr);
  assert.equal(checked.stdout, 'ok\n');
  const invalid = await cli(['selector', 'check', '--', '-qty']);
  assert.equal(invalid.code, 1, 'checked, and not a valid selector');
  assert.match(invalid.stderr, /^invalid selector at column 1/);
});

/** What bash completes for `words`, the last being the word under the cursor, with the generated script. */
async function bashCompletes(script: string, words: string[]): Promise<string[]> {
  const quoted = words.map((word) => `'${word}'`).join(' ');
  const program = `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _jms_gateway; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const child = spawn('bash', ['--norc', '-c', program], {
    cwd: space.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  assert.equal(code, 0, err);
  assert.equal(err, '');
  return out.split('\n').filter(Boolean);
}

test(
  'cli - completion bash completes commands, subcommands, options and choices in a real bash; zsh prints its script',
  { timeout: 60_000 },
  async () => {
    const bash = await cli(['completion', 'bash']);
    assert.equal(bash.code, 0, bash.stderr);
    const script = join(space.dir, 'jms-gateway.bash');
    await writeFile(script, bash.stdout);
    assert.deepEqual(await bashCompletes(script, ['jms-gateway', 'br']), ['browse', 'bridge']);
    assert.deepEqual(await bashCompletes(script, ['jms-gateway', 'bridge', 'p']), ['pause']);
    assert.deepEqual(await bashCompletes(script, ['jms-gateway', 'send', 'orders', '--co']), ['--count']);
    assert.deepEqual(await bashCompletes(script, ['jms-gateway', 'completion', '']), ['bash', 'zsh']);
    assert.deepEqual(await bashCompletes(script, ['jms-gateway', 'run', '--config', 'jms-gateway.b']), [
      'jms-gateway.bash',
    ]);

    const zsh = await cli(['completion', 'zsh']);
    assert.equal(zsh.code, 0, zsh.stderr);
    assert.match(zsh.stdout, /^#compdef jms-gateway\n/);
    assert.match(zsh.stdout, /compdef _jms_gateway jms-gateway/);
    assert.match(zsh.stdout, /"\/bridge"\) commands=\('list:every bridge/);
    assertOneLineError(
      await cli(['completion', 'fish']),
      2,
      /'fish' is invalid for argument 'shell'\. Allowed choices are bash, zsh/,
    );
  },
);

test(
  'cli - status --json is JSON with the destinations, totals and bridges',
  { timeout: 120_000 },
  async () => {
    const result = await atGateway(['status', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const status = JSON.parse(result.stdout) as {
      destinations: { destination: string }[];
      totals: { messagesCurrent: number };
      bridges: { name: string; status: string }[];
    };
    assert.ok(status.destinations.some((d) => d.destination === 'queue://demo.in'));
    assert.equal(typeof status.totals.messagesCurrent, 'number');
    assert.deepEqual(
      status.bridges.map((b) => b.name),
      ['demo'],
    );
  },
);

test(
  'cli - bridge list, pause, resume and restart drive a running gateway',
  { timeout: 120_000 },
  async () => {
    const { admin } = await gateway();
    const statusOfDemo = async () =>
      (await adminJson<{ name: string; status: string }[]>(admin, '/bridges')).find((b) => b.name === 'demo')!
        .status;
    const list = await atGateway(['bridge', 'list']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^bridge\s+status\s+in\s+out/);
    assert.match(list.stdout, /\ndemo\s+connected\s/);
    const paused = await atGateway(['bridge', 'pause', 'demo']);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal(paused.stdout, "paused bridge 'demo': paused\n");
    assert.equal(await statusOfDemo(), 'paused');
    const listed = await atGateway(['bridge', 'list', '--json']);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { name: string; status: string }[]).map((b) => [b.name, b.status]),
      [['demo', 'paused']],
    );
    const resumed = await atGateway(['bridge', 'resume', 'demo', '--json']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((JSON.parse(resumed.stdout) as { status: string }).status, await statusOfDemo());
    assert.notEqual(await statusOfDemo(), 'paused');
    const restarted = await atGateway(['bridge', 'restart', 'demo']);
    assert.equal(restarted.code, 0, restarted.stderr);
    assert.match(restarted.stdout, /^restarted bridge 'demo': /);
    assertOneLineError(await atGateway(['bridge', 'pause', 'nope']), 1, /^error: there is no bridge 'nope'/);
  },
);

test(
  'cli - replay of messages without an origin exits 1, says how many and where they stayed, and moves none',
  { timeout: 120_000 },
  async () => {
    const { admin } = await gateway();
    const queue = `parked-${randomUUID()}`;
    await adminJson(admin, '/destinations', {
      method: 'POST',
      body: JSON.stringify({ kind: 'queue', name: queue }),
    });
    const sent = await atGateway(['send', queue, '--body', 'no origin', '--count', '2']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(sent.stdout, `sent 2 messages to queue://${queue}\n`);

    const replay = await atGateway(['replay', queue]);
    assert.equal(replay.code, 1, replay.stderr);
    assert.equal(replay.stdout, `moved 0 messages from ${queue} to their origins\n`);
    assert.match(
      replay.stderr,
      new RegExp(
        `^2 messages had no origin \\(no JMS_ErrorOrigin property\\) and stayed in queue://${queue}; `,
      ),
    );
    const left = await adminJson<{ body: string }[]>(admin, `/destinations/queue/${queue}/messages`);
    assert.deepEqual(
      left.map((m) => m.body),
      ['no origin', 'no origin'],
    );
  },
);
