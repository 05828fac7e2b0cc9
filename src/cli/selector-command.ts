/**
 * `jms-gateway selector check|eval`: checks a message selector, or evaluates one against a
 * message written as JSON, offline (SEL-1..5). The main CLI passes the arguments after `selector`.
 */
import { parseArgs } from 'node:util';
import { InvalidSelectorError, MessageFormatError } from '../jms/errors.js';
import type { Message } from '../jms/message/message.js';
import { messageFromJson } from '../jms/message/message-json.js';
import { parseSelector, type Explanation, type MessageSelector } from '../jms/selector/index.js';

/** Where the command writes and how it reads files; tests pass their own. */
export interface SelectorCommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readFile: (path: string) => Promise<string>;
}

/** Printed for `--help` and with usage errors. */
export const SELECTOR_USAGE = `usage: jms-gateway selector check SELECTOR
       jms-gateway selector eval SELECTOR --message FILE [--body FILE]

  check   parse SELECTOR: prints "ok", or the error with a caret under its column
  eval    evaluate SELECTOR against the message in FILE (JSON: type, headers,
          properties, body; see docs/selectors.md); --body FILE replaces the body with
          the file's text (an XML document for XPath selectors). Prints TRUE, FALSE or
          UNKNOWN, whether the message is selected, and the value of every part

exit status:
  check   0 valid, 1 invalid, 2 usage error
  eval    0 selected (TRUE), 1 not selected (FALSE or UNKNOWN),
          2 usage error, invalid selector, unreadable or invalid message file

Quote the selector for the shell: jms-gateway selector check "color = 'red'".
Put -- before a selector that starts with '-'.`;

const EXIT_OK = 0;
const EXIT_NO = 1;
const EXIT_USAGE = 2;

/** Runs `selector <argv...>`; resolves to the exit status. */
export async function selectorCommand(argv: string[], io: SelectorCommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        message: { type: 'string', short: 'm' },
        body: { type: 'string', short: 'b' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return usage(io, (error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(`${SELECTOR_USAGE}\n`);
    return EXIT_OK;
  }
  const [command, ...words] = positionals;
  if (command === undefined) return usage(io, 'missing command: check or eval');
  if (words.length === 0) return usage(io, `missing SELECTOR after '${command}'`);
  // An unquoted selector arrives split into words; joining them back is what the user meant.
  const text = words.join(' ');
  switch (command) {
    case 'check':
      if (values.message !== undefined || values.body !== undefined) {
        return usage(io, "--message and --body belong to 'eval', not 'check'");
      }
      return check(text, io);
    case 'eval':
      if (values.message === undefined) return usage(io, "'eval' needs --message FILE");
      return evaluate(text, values.message, values.body, io);
    default:
      return usage(io, `unknown command '${command}' (expected check or eval)`);
  }
}

function usage(io: SelectorCommandIo, problem: string): number {
  io.stderr(`${problem}\n${SELECTOR_USAGE}\n`);
  return EXIT_USAGE;
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
