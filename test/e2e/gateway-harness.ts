/**
 * Runs the real `jms-gateway` command as a child process for end-to-end tests: from a temporary
 * working directory (so a relative store path lands there), with tsx as in `npm start`. `start`
 * waits for the `gateway ready` log line and returns the admin API's address.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const TSX = join(ROOT, 'node_modules/tsx/dist/loader.mjs');
const MAIN = join(ROOT, 'src/cli/main.ts');

/** A finished command. */
export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A running command. */
export interface CliProcess {
  readonly child: ChildProcess;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process exits. */
  readonly exited: Promise<CliResult>;
}

/** The repository root, for paths to config/ and the like. */
export const repositoryRoot = ROOT;

/** Starts `jms-gateway <args>` in `cwd`; the environment is this one plus `env`. */
export function spawnCli(args: readonly string[], cwd: string, env: Record<string, string> = {}): CliProcess {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<CliResult>((done) =>
    child.on('exit', (code, signal) => done({ code, signal, stdout, stderr })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Runs a command to its end. */
export function runCli(
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<CliResult> {
  return spawnCli(args, cwd, env).exited;
}

/** The JSON log lines a gateway wrote. */
export function logLines(stdout: string): { msg: string; [field: string]: unknown }[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string });
}

/** A running gateway with its admin API. */
export interface RunningGateway extends CliProcess {
  readonly admin: string;
  /** Sends a signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<CliResult>;
}

/**
 * `jms-gateway run --config <file> --admin-port 0` in `cwd`, resolved once it logged
 * `gateway ready` (rejects if it exits first or takes longer than `timeoutMs`).
 */
export async function startGateway(
  configFile: string,
  cwd: string,
  env: Record<string, string> = {},
  timeoutMs = 45_000,
): Promise<RunningGateway> {
  const cli = spawnCli(['run', '--config', configFile, '--admin-port', '0'], cwd, env);
  const admin = await new Promise<string>((ready, fail) => {
    const timer = setTimeout(() => {
      cli.child.kill('SIGKILL');
      fail(new Error(`no 'gateway ready' within ${timeoutMs} ms:\n${cli.stdout()}\n${cli.stderr()}`));
    }, timeoutMs);
    const check = () => {
      const line = logLines(cli.stdout()).find((entry) => entry.msg === 'gateway ready');
      if (!line) return;
      clearTimeout(timer);
      ready(line.admin as string);
    };
    cli.child.stdout?.on('data', check);
    void cli.exited.then((result) => {
      clearTimeout(timer);
      fail(new Error(`the gateway exited (${String(result.code)}) before it was ready:\n${result.stderr}`));
    });
  });
  return {
    ...cli,
    admin,
    stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill(signal);
      return cli.exited;
    },
  };
}

/** Kills a gateway that is still running (a `finally` after a failed assertion). */
export async function killGateway(gateway: CliProcess | undefined): Promise<void> {
  if (!gateway || gateway.child.exitCode !== null || gateway.child.signalCode !== null) return;
  gateway.child.kill('SIGKILL');
  await gateway.exited;
}

/** A temporary working directory with `files` written into it; `cleanup` removes it. */
export async function workspace(
  files: Record<string, string> = {},
): Promise<{ dir: string; path(name: string): string; cleanup(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'jms-gateway-e2e-'));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return {
    dir,
    path: (name) => join(dir, name),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A workspace as `workspace` makes it. */
export type Workspace = Awaited<ReturnType<typeof workspace>>;

/** What `withGateway` starts. */
export interface GatewaySetup {
  /** Files written into the workspace before the start. */
  readonly files?: Record<string, string>;
  /** The configuration file, relative to the workspace or absolute; `gateway.yaml` by default. */
  readonly config?: string;
  /** Added to the gateway's environment. */
  readonly env?: Record<string, string>;
}

/**
 * Runs `fn` with a gateway started in a fresh workspace; afterwards, however `fn` ended, kills the
 * gateway if it still runs and removes the workspace. `fn` stops the gateway itself where it
 * asserts on how it stops.
 */
export async function withGateway(
  setup: GatewaySetup,
  fn: (running: RunningGateway, space: Workspace) => Promise<void>,
): Promise<void> {
  const space = await workspace(setup.files);
  let gateway: RunningGateway | undefined;
  try {
    gateway = await startGateway(setup.config ?? 'gateway.yaml', space.dir, setup.env);
    await fn(gateway, space);
  } finally {
    await killGateway(gateway);
    await space.cleanup();
  }
}

/** JSON from the admin API, failing with the response body on a non-2xx status. */
export async function adminJson<T>(admin: string, path: string, init: RequestInit = {}): Promise<T> {
  const response = await fetch(`${admin}${path}`, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A bridge as `GET /bridges` lists it: the fields the tests read. */
export interface BridgeView {
  readonly name: string;
  readonly status: string;
  readonly counters: Readonly<Record<string, number>>;
  readonly lastError?: string;
}

/** The bridge `name` as the admin API lists it; fails when it is not listed. */
export async function bridgeView(admin: string, name: string): Promise<BridgeView> {
  const bridges = await adminJson<BridgeView[]>(admin, '/bridges');
  const found = bridges.find((b) => b.name === name);
  if (!found) throw new Error(`bridge '${name}' is not listed: ${bridges.map((b) => b.name).join(', ')}`);
  return found;
}

/** Polls until the bridge `name` shows `status`; resolves to its view then. */
export function whenBridgeStatus(
  admin: string,
  name: string,
  status: string,
  timeoutMs = 30_000,
): Promise<BridgeView> {
  return eventually(
    async () => {
      const view = await bridgeView(admin, name);
      return view.status === status ? view : undefined;
    },
    `bridge '${name}' ${status}`,
    timeoutMs,
  );
}
