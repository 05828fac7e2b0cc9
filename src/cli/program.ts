/**
 * The `jms-gateway` program: every command on commander, its help, version, and one rule for
 * what goes wrong. A usage error (unknown command or option, missing or invalid argument) is one
 * line on standard error and exit 2; an operation that fails is one line and exit 1; never a
 * stack trace.
 */
import { CommanderError } from 'commander';
import { registerAdminCommands } from './admin-commands.js';
import { registerBridgeCommands } from './bridge-commands.js';
import { registerHaCommands } from './ha-commands.js';
import { CliCommand, commandTree } from './cli-command.js';
import { type CliIo, EXIT, UsageError } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';
import { registerCompletion } from './completion.js';
import { registerGatewayCommands } from './gateway-commands.js';
import { registerSelectorCommands } from './selector-command.js';
import { registerStoreCommands } from './store-commands.js';
import { packageVersion } from './version.js';

const PROGRAM_HELP = `
Exit status:
  0  done as asked
  1  the operation failed or did only part of what was asked (the message says what);
     validate: the file has problems; selector check: invalid; selector eval: not selected
  2  usage error: unknown command or option, missing or invalid argument

Commands for a running gateway find its admin API with --url or JMS_GATEWAY_ADMIN_URL
(default http://127.0.0.1:8161) and take its token only from JMS_GATEWAY_ADMIN_TOKEN.
An operand starting with '-' is read as one unless it looks like an option; put -- before it
then. Progress of move, replay and send --count goes to standard error.

Examples:
  $ jms-gateway run --config gateway.yaml
  $ jms-gateway validate gateway.yaml
  $ jms-gateway status --json
  $ jms-gateway replay orders.errors
  $ jms-gateway bridge pause orders-to-kafka
  $ jms-gateway <command> --help`;

/** Builds the program; `exitWith` receives the exit code of the action that ran. */
export function buildProgram(io: CliIo, version: string, exitWith: (code: number) => void): CliCommand {
  const run: CommandRunner =
    (action) =>
    async (...args) =>
      exitWith(await action(...args));
  const program = new CliCommand('jms-gateway');
  program
    .description(
      'a messaging gateway with JMS destination semantics and bridges to AMQP 0-9-1, MQTT and Kafka',
    )
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(output(io))
    .addHelpText('after', PROGRAM_HELP);

  registerGatewayCommands(program, run, io);
  registerSelectorCommands(program, run, io);
  registerAdminCommands(program, run, io);
  registerBridgeCommands(program, run, io);
  registerHaCommands(program, run, io);
  registerStoreCommands(program, run, io);
  registerCompletion(program, run, io);
  program
    .command('version')
    .description('print the version (as --version)')
    .addHelpText('after', '\nExamples:\n  $ jms-gateway version\n  $ jms-gateway --version')
    .action(
      run(() => {
        io.stdout(`${version}\n`);
        return Promise.resolve(EXIT.ok);
      }),
    );
  // The same -h/--help wording on every command, whichever way it was added.
  for (const command of commandTree(program)) command.helpOption('-h, --help', 'show help');
  return program;
}

/** Commander's output through `io`, with its errors on one line. */
function output(io: CliIo) {
  return {
    writeOut: (text: string) => io.stdout(text),
    writeErr: (text: string) => io.stderr(text),
    outputError: (text: string, write: (text: string) => void) => write(`${oneLine(text)}\n`),
  };
}

/** `error: unknown option '--confg'\n(Did you mean --config?)` → one line. */
export function oneLine(text: string): string {
  return text
    .trim()
    .replace(/\n\(Did you mean (.*)\?\)/, ' (did you mean $1?)')
    .replace(/ is invalid\. /, ' is invalid: ')
    .replace(/\s*\n\s*/g, ' ');
}

/** Runs the command line `argv` (without node and the script); resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, await packageVersion(), (exit) => (code = exit));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) return exitCodeOf(error);
    const message = (error as Error).message ?? String(error);
    io.stderr(`${message.startsWith('error: ') ? message : `error: ${message}`}\n`);
    return error instanceof UsageError ? EXIT.usage : EXIT.failed;
  }
}

/** Help and version asked for are success; help shown for a missing command and every parse error are usage errors. */
function exitCodeOf(error: CommanderError): number {
  if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT.ok;
  return EXIT.usage;
}
