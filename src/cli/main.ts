#!/usr/bin/env node
/**
 * The `jms-gateway` command: `run` starts the gateway, `validate` checks a configuration,
 * `selector` checks and evaluates selectors offline, `completion` prints a shell completion
 * script, and the rest talk to a running gateway. `jms-gateway --help` lists them all.
 */
import { processIo } from './cli-io.js';
import { runCli } from './program.js';

// Output piped into a command that stops reading (`| head`) is not an error of this one.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

process.exitCode = await runCli(process.argv.slice(2), processIo());
// Whatever a client library may leave scheduled (a reconnect timer) must not keep a stopped gateway alive.
setTimeout(() => process.exit(), 2_000).unref();
