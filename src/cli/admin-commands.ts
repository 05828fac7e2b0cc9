/**
 * CLI commands that talk to a running gateway through its admin API: `status`, `send`, `browse`,
 * `move`, `replay`, `reload`. Long ones (move, replay, send --count) show progress on standard
 * error; every one exits 1 when it did not do all it was asked, and says what it did do.
 */
import { type Command, Option } from 'commander';
import type { ReloadResult } from '../admin/routes.js';
import { ERROR_ORIGIN } from '../bridge/error-message.js';
import type { BridgeView } from '../admin/bridge-control.js';
import { AdminClient, addressOf, destinationPath } from './admin-client.js';
import { bridgeTable, withAdminUrl } from './bridge-commands.js';
import { type CliIo, OperationError, UsageError } from './cli-io.js';
import type { CommandRunner } from './command-runner.js';
import { integerValue, namedValue } from './option-values.js';
import { Progress } from './progress.js';

/** Messages moved per request: each request is one transaction on the gateway. */
const MOVE_STEP = 500;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Adds the commands for a running gateway to `program`. */
export function registerAdminCommands(program: Command, run: CommandRunner, io: CliIo): void {
  registerStatus(program, run, io);
  registerSend(program, run, io);
  registerBrowse(program, run, io);
  registerMove(program, run, io);
  registerReload(program, run, io);
}

function registerStatus(program: Command, run: CommandRunner, io: CliIo): void {
  withAdminUrl(
    program
      .command('status')
      .description('destinations and bridges of a running gateway at a glance')
      .option(
        '--json',
        'print {destinations, totals, bridges} as JSON (shapes of GET /destinations and GET /bridges)',
      ),
  )
    .addHelpText(
      'after',
      `
Pending messages are broken down by cause, one column per cause the gateway reports.

Examples:
  $ jms-gateway status
  $ jms-gateway status --json | jq '.destinations[] | select(.messagesPending > 0)'
  $ jms-gateway status --url http://gateway-host:8161`,
    )
    .action(
      run(async (options: { url?: string; json?: boolean }) => {
        const client = new AdminClient(options.url, io);
        const { destinations, totals } = (await client.request('GET', '/destinations')) as {
          destinations: DestinationView[];
          totals: unknown;
        };
        const bridges = (await client.request('GET', '/bridges')) as BridgeView[];
        if (options.json) {
          io.stdout(`${JSON.stringify({ destinations, totals, bridges }, null, 2)}\n`);
          return 0;
        }
        const lines = destinationTable(destinations);
        if (bridges.length > 0) lines.push('', ...bridgeTable(bridges));
        io.stdout(`${lines.join('\n')}\n`);
        return 0;
      }),
    );
}

interface SendOptions {
  url?: string;
  body?: string;
  file?: string;
  message?: string;
  property?: [string, string][];
  priority?: number;
  count: number;
  ids?: boolean;
  json?: boolean;
}

function registerSend(program: Command, run: CommandRunner, io: CliIo): void {
  withAdminUrl(
    program
      .command('send')
      .description('send messages to a destination of a running gateway')
      .argument('<destination>', 'queue://name, topic://name, or a bare queue name')
      .addOption(new Option('--body <text>', 'the body, as text').conflicts(['file']))
      .option('--file <file>', "the body: the file's text")
      .option(
        '--message <file>',
        'the message in the JSON message form (docs/selectors.md); --body and --property override it',
      )
      .option('-p, --property <name=value>', 'a string property; repeat for more', namedValue)
      .option('--priority <0-9>', 'JMSPriority of the message', integerValue(0, 9))
      .option('--count <n>', 'send the message this many times, in order', integerValue(1), 1)
      .option('--ids', 'print the JMSMessageID of each message sent, one a line')
      .option('--json', 'print {destination, sent, messageIds} as JSON'),
  )
    .addHelpText(
      'after',
      `
Prints a summary (sent N messages to ...); with --count, progress goes to standard error.

Examples:
  $ jms-gateway send orders --body '<order id="1"/>' --property region=eu
  $ jms-gateway send topic://prices --message price.json --priority 7
  $ jms-gateway send orders --file order.xml --count 10000
  $ jms-gateway send orders --body test --ids`,
    )
    .action(
      run(async (destination: string, options: SendOptions) => {
        const client = new AdminClient(options.url, io);
        const message = await messageToSend(options, io);
        const address = addressOf(destination);
        const progress = options.count > 1 ? new Progress(io, 'sent', options.count) : undefined;
        const ids: string[] = [];
        let failure: unknown;
        try {
          while (ids.length < options.count) {
            const { messageId } = (await client.request(
              'POST',
              `${destinationPath(destination)}/messages`,
              message,
            )) as { messageId: string };
            ids.push(messageId);
            progress?.update(ids.length);
          }
        } catch (error) {
          failure = error;
        }
        progress?.finish(ids.length);
        if (options.json) {
          io.stdout(
            `${JSON.stringify({ destination: address, sent: ids.length, messageIds: ids }, null, 2)}\n`,
          );
        } else if (options.ids) {
          if (ids.length > 0) io.stdout(`${ids.join('\n')}\n`);
        } else if (failure === undefined) {
          io.stdout(
            `sent ${plural(ids.length, 'message')} to ${address}${ids.length === 1 ? `: ${ids[0]}` : ''}\n`,
          );
        }
        if (failure === undefined) return 0;
        const reason = (failure as Error).message;
        if (ids.length === 0) throw new OperationError(reason);
        throw new OperationError(
          `sent ${ids.length} of ${plural(options.count, 'message')} to ${address}, then: ${reason}`,
        );
      }),
    );
}

function registerBrowse(program: Command, run: CommandRunner, io: CliIo): void {
  withAdminUrl(
    program
      .command('browse')
      .description('show the available messages of a queue in delivery order, without taking them')
      .argument('<queue>', 'queue://name or a bare queue name')
      .option('--selector <selector>', 'only messages this selector selects')
      .option('--limit <n>', 'at most this many messages', integerValue(1), 100)
      .option('--json', 'print the messages as a JSON array in the JSON message form'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ jms-gateway browse orders.errors
  $ jms-gateway browse orders.errors --selector "JMS_ErrorReason LIKE 'poison%'" --json
  $ jms-gateway browse orders --limit 5`,
    )
    .action(
      run(
        async (
          queue: string,
          options: { url?: string; selector?: string; limit: number; json?: boolean },
        ) => {
          const query = new URLSearchParams();
          if (options.selector) query.set('selector', options.selector);
          query.set('limit', String(options.limit));
          const messages = (await new AdminClient(options.url, io).request(
            'GET',
            `${destinationPath(queue)}/messages?${query.toString()}`,
          )) as MessageView[];
          if (options.json) {
            io.stdout(`${JSON.stringify(messages, null, 2)}\n`);
            return 0;
          }
          for (const message of messages) io.stdout(`${describeMessage(message)}\n`);
          io.stderr(`${plural(messages.length, 'message')}\n`);
          return 0;
        },
      ),
    );
}

interface MoveOptions {
  url?: string;
  selector?: string;
  limit?: number;
  json?: boolean;
}

function registerMove(program: Command, run: CommandRunner, io: CliIo): void {
  const moveOptions = (command: Command) =>
    withAdminUrl(
      command
        .option('--selector <selector>', 'only messages this selector selects')
        .option('--limit <n>', 'at most this many messages', integerValue(1))
        .option('--json', 'print {from, to, total, moved, withoutOrigin} as JSON'),
    );
  moveOptions(
    program
      .command('move')
      .description('move the available messages of a queue to another destination')
      .argument('<from>', 'the queue to take them from (queue://name or a bare name)')
      .argument('<to>', 'where they go: queue://name, topic://name or a bare queue name'),
  )
    .addHelpText(
      'after',
      `
Moves in transactions of ${MOVE_STEP}: a failure leaves the messages of its batch where they were.

Examples:
  $ jms-gateway move orders.errors queue://orders.retry --selector "region = 'eu'"
  $ jms-gateway move orders.stuck orders --limit 100`,
    )
    .action(run((from: string, to: string, options: MoveOptions) => moveMessages(from, to, options, io)));

  moveOptions(
    program
      .command('replay')
      .description("move the messages of an error destination back to each message's origin")
      .argument('<error-queue>', 'the error destination (queue://name or a bare name)')
      .argument('[to]', "a destination for all of them instead of each message's origin", 'origin'),
  )
    .addHelpText(
      'after',
      `
The origin is the message's ${ERROR_ORIGIN} property. Messages without one stay in the error
destination and the replay exits 1 saying how many; give them a destination with 'move'.

Examples:
  $ jms-gateway replay orders.errors
  $ jms-gateway replay orders.errors --selector "JMS_ErrorOrigin NOT LIKE 'bridge://%'"
  $ jms-gateway replay orders.errors queue://orders.in --selector "JMS_ErrorBridge = 'amqp-orders'"`,
    )
    .action(run((from: string, to: string, options: MoveOptions) => moveMessages(from, to, options, io)));
}

/**
 * Moves (or, with `to` = `origin`, replays) in steps of MOVE_STEP, each its own transaction on
 * the gateway, against a total counted first; messages without an origin are counted apart, as a
 * replay leaves them where they are.
 */
async function moveMessages(from: string, to: string, options: MoveOptions, io: CliIo): Promise<number> {
  const client = new AdminClient(options.url, io);
  const source = addressOf(from);
  const target = to === 'origin' ? 'origin' : addressOf(to);
  const count = async (selector: string | undefined) => {
    const query = selector ? `?${new URLSearchParams({ selector }).toString()}` : '';
    return ((await client.request('GET', `${destinationPath(from)}/count${query}`)) as { count: number })
      .count;
  };
  const matching = await count(options.selector);
  const withoutOrigin =
    target === 'origin' ? await count(both(options.selector, `${ERROR_ORIGIN} IS NULL`)) : 0;
  const total = Math.min(options.limit ?? Infinity, matching - withoutOrigin);
  const progress = new Progress(io, 'moved', total);
  let moved = 0;
  try {
    while (moved < total) {
      // Up to the total counted: a replay whose messages fail again and come back is not replayed twice.
      const step = Math.min(MOVE_STEP, total - moved);
      const body: Record<string, unknown> = { to: target, limit: step };
      if (options.selector) body.selector = options.selector;
      const result = (await client.request('POST', `${destinationPath(from)}/move`, body)) as {
        moved: number;
      };
      moved += result.moved;
      progress.update(moved);
      if (result.moved < step) break;
    }
  } catch (error) {
    progress.finish(moved);
    const left = matching - moved;
    throw new OperationError(
      `stopped after moving ${moved} of ${plural(total, 'message')}: ${(error as Error).message}; ${plural(left, 'message')} not moved ${left === 1 ? 'is' : 'are'} still in ${source}`,
    );
  }
  progress.finish(moved);
  if (options.json) {
    io.stdout(`${JSON.stringify({ from: source, to: target, total, moved, withoutOrigin }, null, 2)}\n`);
  } else {
    io.stdout(
      `moved ${plural(moved, 'message')} from ${from} to ${target === 'origin' ? 'their origins' : target}\n`,
    );
  }
  if (withoutOrigin === 0) return 0;
  io.stderr(
    `${plural(withoutOrigin, 'message')} had no origin (no ${ERROR_ORIGIN} property) and stayed in ${source}; give ${withoutOrigin === 1 ? 'it' : 'them'} a destination: jms-gateway move ${from} DESTINATION --selector "${ERROR_ORIGIN} IS NULL"\n`,
  );
  return 1;
}

/** Both selectors, either of which may be absent. */
function both(selector: string | undefined, condition: string): string {
  return selector ? `(${selector}) AND ${condition}` : condition;
}

function registerReload(program: Command, run: CommandRunner, io: CliIo): void {
  withAdminUrl(
    program
      .command('reload')
      .description("re-read the running gateway's configuration file and apply it")
      .option('--json', 'print what the reload did as JSON (the answer of POST /reload)'),
  )
    .addHelpText(
      'after',
      `
Changed bridges restart without loss, the rest is untouched. An invalid file changes nothing:
the problems are printed (file:line:col: path: message) and the command exits 1.

Examples:
  $ jms-gateway reload
  $ jms-gateway reload --json`,
    )
    .action(
      run(async (options: { url?: string; json?: boolean }) => {
        // 422 is an answer, not a failure of the request: the problems are in the body.
        const result = (await new AdminClient(options.url, io).request(
          'POST',
          '/reload',
          undefined,
          [422],
        )) as ReloadResult;
        if (options.json) {
          io.stdout(`${JSON.stringify(result, null, 2)}\n`);
          return result.reloaded ? 0 : 1;
        }
        for (const warning of result.warnings) io.stderr(`warning: ${warning}\n`);
        if (!result.reloaded) {
          for (const error of result.errors) io.stderr(`${error}\n`);
          io.stderr('not reloaded: the gateway keeps running its previous configuration\n');
          return 1;
        }
        const list = (names: string[]) => (names.length === 0 ? '-' : names.join(', '));
        io.stdout(
          `reloaded: added ${list(result.added)}; removed ${list(result.removed)}; restarted ${list(result.restarted)}; unchanged ${list(result.unchanged)}\n`,
        );
        if (result.created.length > 0) io.stdout(`created ${result.created.join(', ')}\n`);
        return 0;
      }),
    );
}

interface MessageView {
  type: string;
  headers: Record<string, unknown>;
  properties: Record<string, unknown>;
  body?: unknown;
}
interface DestinationView {
  destination: string;
  messagesCurrent: number;
  messagesPending: number;
  /** Pending messages by cause (uncommitted, scheduled, ...): whatever causes the gateway reports. */
  pendingMessagesByCause?: Record<string, number>;
  consumersCurrent: number;
}

/**
 * The destinations of `status`: current, pending and consumers, then pending broken down by
 * cause, one column per cause the gateway reports, so "why are messages pending?" (`003`) is
 * answered on one line.
 */
function destinationTable(destinations: readonly DestinationView[]): string[] {
  const causes = [...new Set(destinations.flatMap((d) => Object.keys(d.pendingMessagesByCause ?? {})))];
  const row = (name: string, values: readonly (string | number)[], widths: readonly number[]) =>
    [name.padEnd(34), ...values.map((value, i) => String(value).padStart(widths[i]!))].join(' ');
  const widths = [8, 8, 10, ...causes.map((cause) => Math.max(cause.length, 8))];
  return [
    row('destination', ['current', 'pending', 'consumers', ...causes], widths),
    ...destinations.map((d) =>
      row(
        d.destination,
        [
          d.messagesCurrent,
          d.messagesPending,
          d.consumersCurrent,
          ...causes.map((cause) => d.pendingMessagesByCause?.[cause] ?? 0),
        ],
        widths,
      ),
    ),
  ];
}

/** The message `send` posts: from --message, with --body, --file, --property and --priority applied. */
async function messageToSend(options: SendOptions, io: CliIo): Promise<unknown> {
  const message = options.message
    ? await jsonFile(options.message, 'message', io)
    : ({ type: 'text' } as Record<string, unknown>);
  if (options.body !== undefined) message.body = options.body;
  if (options.file !== undefined) message.body = await readText(options.file, 'body', io);
  const properties = { ...((message.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const [name, value] of options.property ?? []) properties[name] = value;
  message.properties = properties;
  if (options.priority !== undefined) {
    const headers = (message.headers ?? {}) as Record<string, unknown>;
    message.headers = { ...headers, JMSPriority: options.priority };
  }
  return message;
}

async function readText(path: string, what: string, io: CliIo): Promise<string> {
  try {
    return await io.readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read ${what} file '${path}': ${(error as Error).message}`);
  }
}

async function jsonFile(path: string, what: string, io: CliIo): Promise<Record<string, unknown>> {
  const text = await readText(path, what, io);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} file '${path}' is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new UsageError(`${what} file '${path}' must hold a JSON object (the JSON message form)`);
  return json as Record<string, unknown>;
}

function describeMessage(message: MessageView): string {
  const id = typeof message.headers.JMSMessageID === 'string' ? message.headers.JMSMessageID : '';
  const properties = Object.entries(message.properties)
    .map(
      ([name, value]) =>
        `${name}=${typeof value === 'object' && value !== null ? String((value as { value: unknown }).value) : String(value)}`,
    )
    .join(' ');
  const body = typeof message.body === 'string' ? message.body : JSON.stringify(message.body ?? null);
  return `${id}  ${message.type}  ${properties}\n  ${body.length > 200 ? `${body.slice(0, 200)}…` : body}`;
}
