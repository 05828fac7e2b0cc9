/**
 * CLI commands that talk to a running gateway through its admin API: `send`, `browse`, `move`,
 * `replay`, `status`, `reload`. The API address comes from `--url` or JMS_GATEWAY_ADMIN_URL (default
 * http://127.0.0.1:8161); the token only from JMS_GATEWAY_ADMIN_TOKEN, never from the command
 * line where other users could see it.
 */
import { parseArgs } from 'node:util';
import type { ReloadResult } from '../admin/routes.js';

/** Where a command writes; tests capture it. */
export interface CommandIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readFile: (path: string) => Promise<string>;
  env: Readonly<Record<string, string | undefined>>;
  fetch: typeof fetch;
}

export const ADMIN_COMMANDS = ['send', 'browse', 'move', 'replay', 'status', 'reload'] as const;
export type AdminCommand = (typeof ADMIN_COMMANDS)[number];

const MOVE_STEP = 500;

class AdminClient {
  constructor(
    private readonly base: string,
    private readonly token: string | undefined,
    private readonly io: CommandIo,
  ) {}

  /** JSON of a 2xx answer, or of an answer with one of the `accepted` statuses; throws otherwise. */
  async request(method: string, path: string, body?: unknown, accepted: number[] = []): Promise<unknown> {
    let response: Response;
    try {
      response = await this.io.fetch(`${this.base}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new Error(
        `cannot reach the gateway's admin API at ${this.base}: ${(error as Error).message} (start the gateway, or set --url / JMS_GATEWAY_ADMIN_URL)`,
      );
    }
    const text = await response.text();
    const json = text ? (JSON.parse(text) as unknown) : null;
    if (!response.ok && !accepted.includes(response.status)) {
      const message = (json as { error?: { message?: string } } | null)?.error?.message ?? text;
      const hint = response.status === 401 ? ' (set JMS_GATEWAY_ADMIN_TOKEN)' : '';
      throw new Error(`${method} ${path} failed with ${response.status}: ${message}${hint}`);
    }
    return json;
  }
}

/** `queue://name`, `topic://name` or a bare queue name → `kind/name` for API paths. */
/** A destination named on the command line: `queue://x` or `topic://x`, and a bare name is a queue. */
function parseNamed(destination: string): { kind: string; name: string } {
  const match = /^(queue|topic):\/\/(.+)$/.exec(destination);
  return match ? { kind: match[1]!, name: match[2]! } : { kind: 'queue', name: destination };
}

function apiPath(destination: string): string {
  const { kind, name } = parseNamed(destination);
  return `/destinations/${kind}/${encodeURIComponent(name)}`;
}

/** A move or replay target as the API takes it: `origin`, or a destination address. */
function moveTarget(to: string): string {
  if (to === 'origin') return to;
  const { kind, name } = parseNamed(to);
  return `${kind}://${name}`;
}

/** Runs one admin command; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function adminCommand(command: AdminCommand, argv: string[], io: CommandIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        selector: { type: 'string' },
        limit: { type: 'string' },
        body: { type: 'string' },
        file: { type: 'string' },
        message: { type: 'string' },
        property: { type: 'string', multiple: true },
        count: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${USAGE[command]}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const client = new AdminClient(
    values.url ?? io.env.JMS_GATEWAY_ADMIN_URL ?? 'http://127.0.0.1:8161',
    io.env.JMS_GATEWAY_ADMIN_TOKEN,
    io,
  );
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    io.stderr(`--limit '${values.limit}' is not valid (expected an integer >= 1)`);
    return 2;
  }
  try {
    switch (command) {
      case 'send': {
        const [destination] = positionals;
        if (!destination) return usage(io, command);
        const message = await messageToSend(values, io);
        const count = Number(values.count ?? 1);
        for (let i = 0; i < count; i++) {
          const { messageId } = (await client.request(
            'POST',
            `${apiPath(destination)}/messages`,
            message,
          )) as { messageId: string };
          io.stdout(messageId);
        }
        return 0;
      }
      case 'browse': {
        const [queue] = positionals;
        if (!queue) return usage(io, command);
        const query = new URLSearchParams();
        if (values.selector) query.set('selector', values.selector);
        query.set('limit', String(limit ?? 100));
        const messages = (await client.request(
          'GET',
          `${apiPath(queue)}/messages?${query.toString()}`,
        )) as MessageView[];
        if (values.json) io.stdout(JSON.stringify(messages, null, 2));
        else for (const message of messages) io.stdout(describeMessage(message));
        if (!values.json) io.stderr(`${messages.length} message${messages.length === 1 ? '' : 's'}`);
        return 0;
      }
      case 'move':
      case 'replay': {
        const [from, named] =
          command === 'replay' ? [positionals[0], positionals[1] ?? 'origin'] : positionals;
        if (!from || !named) return usage(io, command);
        const to = moveTarget(named);
        let moved = 0;
        // In steps, so a long replay shows progress and each step is its own transaction.
        for (;;) {
          const step = Math.min(MOVE_STEP, (limit ?? Infinity) - moved);
          const body: Record<string, unknown> = { to, limit: step };
          if (values.selector) body.selector = values.selector;
          const result = (await client.request('POST', `${apiPath(from)}/move`, body)) as { moved: number };
          moved += result.moved;
          if (result.moved > 0) io.stderr(`moved ${moved}…`);
          if (result.moved < step || moved >= (limit ?? Infinity)) break;
        }
        io.stdout(
          `moved ${moved} message${moved === 1 ? '' : 's'} from ${from} to ${to === 'origin' ? 'their origins' : to}`,
        );
        return 0;
      }
      case 'reload': {
        if (positionals.length > 0) return usage(io, command);
        // 422 is an answer, not a failure of the request: the problems are in the body.
        const result = (await client.request('POST', '/reload', undefined, [422])) as ReloadResult;
        for (const warning of result.warnings) io.stderr(`warning: ${warning}`);
        if (!result.reloaded) {
          for (const error of result.errors) io.stderr(error);
          io.stderr('not reloaded: the gateway keeps running its previous configuration');
          return 1;
        }
        const list = (names: string[]) => (names.length === 0 ? '-' : names.join(', '));
        io.stdout(
          `reloaded: added ${list(result.added)}; removed ${list(result.removed)}; restarted ${list(result.restarted)}; unchanged ${list(result.unchanged)}`,
        );
        if (result.created.length > 0) io.stdout(`created ${result.created.join(', ')}`);
        return 0;
      }
      case 'status': {
        const { destinations } = (await client.request('GET', '/destinations')) as {
          destinations: DestinationView[];
        };
        const bridges = (await client.request('GET', '/bridges')) as BridgeView[];
        for (const line of destinationTable(destinations)) io.stdout(line);
        if (bridges.length > 0) {
          io.stdout('\nbridge                    status        in       out   retried  dead-lettered');
          for (const b of bridges) {
            const c = b.counters;
            io.stdout(
              `${b.name.padEnd(24)} ${b.status.padEnd(12)} ${String(c.in ?? 0).padStart(6)} ${String(c.out ?? 0).padStart(9)} ${String(c.retried ?? 0).padStart(9)} ${String(c.deadLettered ?? 0).padStart(14)}`,
            );
          }
        }
        return 0;
      }
    }
  } catch (error) {
    io.stderr((error as Error).message);
    return 1;
  }
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
interface BridgeView {
  name: string;
  status: string;
  counters: Record<string, number>;
}

async function messageToSend(
  values: {
    body?: string | undefined;
    file?: string | undefined;
    message?: string | undefined;
    property?: string[] | undefined;
  },
  io: CommandIo,
): Promise<unknown> {
  const message = values.message
    ? (JSON.parse(await io.readFile(values.message)) as Record<string, unknown>)
    : { type: 'text' };
  if (values.body !== undefined) message.body = values.body;
  if (values.file !== undefined) message.body = await io.readFile(values.file);
  const properties = { ...((message.properties as Record<string, unknown> | undefined) ?? {}) };
  for (const pair of values.property ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--property '${pair}' is not name=value`);
    properties[pair.slice(0, at)] = pair.slice(at + 1);
  }
  message.properties = properties;
  return message;
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

const USAGE: Record<AdminCommand, string> = {
  send: 'usage: jms-gateway send DESTINATION [--body TEXT | --file FILE | --message MSG.json] [--property name=value ...] [--count N]',
  browse: 'usage: jms-gateway browse QUEUE [--selector SELECTOR] [--limit N] [--json]',
  move: 'usage: jms-gateway move FROM_QUEUE TO_DESTINATION [--selector SELECTOR] [--limit N]  (a bare name is a queue)',
  replay:
    "usage: jms-gateway replay ERROR_QUEUE [TO_DESTINATION] [--selector SELECTOR] [--limit N]  (default: back to each message's origin)",
  status: 'usage: jms-gateway status',
  reload: 'usage: jms-gateway reload',
};

function usage(io: CommandIo, command: AdminCommand): number {
  io.stderr(USAGE[command]);
  return 2;
}
