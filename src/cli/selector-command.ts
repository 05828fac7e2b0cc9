/**
 * `jms-gateway selector check|eval`: checks a message selector, or evaluates one against a
 * message written as JSON, offline (SEL-1..5).
 */
import type { Command } from 'commander';
import { InvalidSelectorError, MessageFormatError } from '../jms/errors.js';
import type { Message } from '../jms/message/message.js';
import { messageFromJson } from '../jms/message/message-json.js';
import { parseSelector, type Explanation, type MessageSelector } from '../jms/selector/index.js';
import type { CliIo } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';

/** Where the command writes and how it reads files. */
export type SelectorCommandIo = Pick<CliIo, 'stdout' | 'stderr' | 'readFile'>;

const EXIT_OK = 0;
const EXIT_NO = 1;
const EXIT_USAGE = 2;

/** Adds `selector check` and `selector eval` to `program`. */
export function registerSelectorCommands(program: Command, run: CommandRunner, io: SelectorCommandIo): void {
  const selector = program
    .command('selector')
    .description('check or evaluate a message selector, offline')
    .addHelpText(
      'after',
      `
Examples:
  $ jms-gateway selector check "color = 'red' AND weight > 10"
  $ jms-gateway selector eval "JMSPriority > 3" --message msg.json`,
    );
  selector
    .command('check')
    .description('parse a selector: prints ok, or the error with a caret under its column')
    .argument(
      '<selector...>',
      'the selector; quote it for the shell (an unquoted one is joined back with spaces)',
    )
    .addHelpText(
      'after',
      `
Exit status: 0 valid, 1 invalid, 2 usage error.
A selector may start with '-' ('-qty * 2 > 1'); one that looks like an option (-qty) needs -- before it.

Examples:
  $ jms-gateway selector check "color = 'red' AND weight > 10"
  $ jms-gateway selector check '-qty * 2 > 1'
  $ jms-gateway selector check -- -qty`,
    )
    .action(run((words: string[]) => Promise.resolve(check(words.join(' '), io))));
  selector
    .command('eval')
    .description('evaluate a selector against a message given as JSON, explaining every part')
    .argument('<selector...>', 'the selector; quote it for the shell')
    .requiredOption(
      '-m, --message <file>',
      'the message in the JSON form (type, headers, properties, body; see docs/selectors.md)',
    )
    .option(
      '-b, --body <file>',
      "replace the body with the file's text (an XML document for XPath selectors)",
    )
    .addHelpText(
      'after',
      `
Prints TRUE, FALSE or UNKNOWN, whether the message is selected, and the value of every part.
Exit status: 0 selected (TRUE), 1 not selected (FALSE or UNKNOWN), 2 usage error, invalid
selector, unreadable or invalid message file.

Examples:
  $ jms-gateway selector eval "JMSPriority > 3 AND color = 'red'" --message msg.json
  $ jms-gateway selector eval "JMS_BEA_SELECT('xpath', '/order/@id') = '7'" -m msg.json --body order.xml`,
    )
    .action(
      run((words: string[], options: { message: string; body?: string }) =>
        evaluate(words.join(' '), options.message, options.body, io),
      ),
    );
}

function check(text: string, io: SelectorCommandIo): number {
  const selector = compile(text, io);
  if (selector === null) return EXIT_NO;
  io.stdout(selector.text === null ? 'ok (an empty selector selects every message)\n' : 'ok\n');
  return EXIT_OK;
}

/** Parses the selector, printing the error with a caret when it is invalid. */
function compile(text: string, io: SelectorCommandIo): MessageSelector | null {
  try {
    return parseSelector(text);
  } catch (error) {
    if (!(error instanceof InvalidSelectorError)) throw error;
    io.stderr(`${error.message}\n${caret(text, error.column)}\n`);
    return null;
  }
}

/** The selector's line holding `column` (1-based) with a `^` under that column. */
export function caret(text: string, column: number): string {
  const offset = column - 1;
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const lineEndAt = text.indexOf('\n', offset);
  const line = text.slice(lineStart, lineEndAt < 0 ? text.length : lineEndAt).replace(/[\t\r\f]/g, ' ');
  const lineNumber = text.slice(0, lineStart).split('\n').length;
  const prefix = text.includes('\n') ? `line ${lineNumber}: ` : '  ';
  return `${prefix}${line}\n${' '.repeat(prefix.length + offset - lineStart)}^`;
}

async function evaluate(
  text: string,
  messagePath: string,
  bodyPath: string | undefined,
  io: SelectorCommandIo,
): Promise<number> {
  const selector = compile(text, io);
  if (selector === null) return EXIT_USAGE;
  const message = await loadMessage(messagePath, bodyPath, io);
  if (message === null) return EXIT_USAGE;
  const explanation = selector.explain(message);
  const selected = explanation.value === 'TRUE';
  io.stdout(`${explanation.value}\n${selected ? 'selected' : 'not selected'}\n${formatTree(explanation)}`);
  return selected ? EXIT_OK : EXIT_NO;
}

async function loadMessage(
  path: string,
  bodyPath: string | undefined,
  io: SelectorCommandIo,
): Promise<Message | null> {
  const source = await read(path, 'message', io);
  if (source === null) return null;
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    io.stderr(`message file '${path}' is not valid JSON: ${(error as Error).message}\n`);
    return null;
  }
  if (bodyPath !== undefined) {
    const body = await read(bodyPath, 'body', io);
    if (body === null) return null;
    if (typeof json === 'object' && json !== null && !Array.isArray(json)) {
      const type = (json as { type?: unknown }).type;
      if (type !== undefined && type !== 'text' && type !== 'xml') {
        io.stderr(`--body needs a text or xml message, but '${path}' has type ${JSON.stringify(type)}\n`);
        return null;
      }
      // Without a type the body file makes an XML message: --body is there for XPath selectors.
      json = { ...json, type: type ?? 'xml', body };
    }
  }
  try {
    return messageFromJson(json);
  } catch (error) {
    if (!(error instanceof MessageFormatError)) throw error;
    io.stderr(`message file '${path}': ${error.message}\n`);
    return null;
  }
}

async function read(path: string, what: string, io: SelectorCommandIo): Promise<string | null> {
  try {
    return await io.readFile(path);
  } catch (error) {
    io.stderr(`cannot read ${what} file '${path}': ${(error as Error).message}\n`);
    return null;
  }
}

/** The explanation as an indented tree: `sub-expression  =>  value  (details)`. */
export function formatTree(explanation: Explanation, depth = 0): string {
  const details = describeDetails(explanation);
  let out = `${'  '.repeat(depth)}${explanation.text || '(empty selector)'}  =>  ${explanation.value}${details}\n`;
  for (const child of explanation.children) out += formatTree(child, depth + 1);
  return out;
}

function describeDetails(explanation: Explanation): string {
  const xpath = explanation.xpath;
  if (xpath !== undefined) {
    if (xpath.body === 'not-text') return '  (the body is not text: XPath not evaluated)';
    if (xpath.limit !== undefined)
      return `  (XPath ${xpath.expression} not answered: over the XPath limit '${xpath.limit}')`;
    if (xpath.body === 'malformed')
      return '  (the body is not well-formed XML or has a DTD: XPath not evaluated)';
    if (xpath.found === undefined) return `  (XPath ${xpath.expression})`;
    return xpath.found === null
      ? `  (XPath ${xpath.expression} found nothing with a value)`
      : `  (XPath ${xpath.expression} found ${JSON.stringify(xpath.found)})`;
  }
  switch (explanation.type) {
    case undefined:
      return '';
    case 'header':
      return '  (header)';
    case 'absent':
      return '  (no such property)';
    default:
      return `  (${explanation.type} property)`;
  }
}
