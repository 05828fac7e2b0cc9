/**
 * The commander `Command` every `jms-gateway` command is made of. It differs in one way: an
 * argument that starts with '-' but cannot be an option (it has a space, an operator, a quote)
 * is an operand, so `jms-gateway selector check '-qty * 2 > 1'` checks that selector instead of
 * complaining about an unknown option. A dashed word that looks like an option (`-qty`, `--x=1`)
 * is still read as one; `--` before it makes it an operand.
 */
import { Command, type ParseOptionsResult } from 'commander';

/** What an option looks like: `-x`, `-abc`, `--name`, `--name=value`. */
const OPTION_SHAPED = /^(-[A-Za-z0-9]+|--[A-Za-z][\w-]*(=[\s\S]*)?)$/;

/** A commander command whose subcommands are CliCommands too, and which reads dashed operands as operands. */
export class CliCommand extends Command {
  override createCommand(name?: string): CliCommand {
    return new CliCommand(name);
  }

  override parseOptions(argv: string[]): ParseOptionsResult {
    const parsed = super.parseOptions(argv);
    const [first, ...rest] = parsed.unknown;
    if (first === undefined || OPTION_SHAPED.test(first) || first === '--') return parsed;
    // Commander stops at the first word it does not know; read on after this operand.
    const after = this.parseOptions(rest);
    return { operands: [...parsed.operands, first, ...after.operands], unknown: after.unknown };
  }
}

/** `command` and every command below it. */
export function commandTree(command: Command): Command[] {
  return [command, ...command.commands.flatMap((sub) => commandTree(sub))];
}

/** `jms-gateway selector check`: the command's name with its parents'. */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}
