/**
 * Loads the gateway's YAML configuration. Every error names the file, line, column and path and
 * says what was expected: `gateway.yaml:4:7: destinations.queues[0].name: expected a non-empty string`.
 */
import { readFile } from 'node:fs/promises';
import { LineCounter, type Node, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { DestinationOptions } from '../jms/destination/destination-options.js';

/** A destination declared in the configuration. */
export interface DestinationConfig {
  name: string;
  options: DestinationOptions;
}

/** Where the admin HTTP API listens (the token comes only from JMS_GATEWAY_ADMIN_TOKEN). */
export interface AdminConfig {
  /** Default 127.0.0.1; anywhere else needs a token. */
  host: string;
  /** Default 8161. */
  port: number;
}

/** The gateway configuration as far as it is defined today. */
export interface GatewayConfig {
  destinations: { queues: DestinationConfig[]; topics: DestinationConfig[] };
  admin: AdminConfig;
  store: { path: string | null };
}

/** A configuration problem with its place in the file. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

const DESTINATION_OPTION_TYPES: Record<string, 'number' | 'string' | 'boolean' | 'number|string'> = {
  storeEnabled: 'boolean',
  redeliveryDelayOverride: 'number',
  redeliveryLimit: 'number',
  errorDestination: 'string',
  timeToLiveOverride: 'number',
  timeToDeliverOverride: 'number|string',
  messagesMaximum: 'number',
  bytesMaximum: 'number',
};

/** Reads and validates a configuration file. Throws {@link ConfigError} listing every problem. */
export async function loadConfig(path: string): Promise<GatewayConfig> {
  return parseConfig(await readFile(path, 'utf8'), path);
}

/** Validates configuration text; `file` names it in errors. */
export function parseConfig(text: string, file: string): GatewayConfig {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false });
  const problems: string[] = [];
  const at = (node: Node | null | undefined, path: string, message: string) => {
    const offset = node?.range?.[0] ?? 0;
    const { line, col } = lineCounter.linePos(offset);
    problems.push(`${file}:${line}:${col}: ${path ? `${path}: ` : ''}${message}`);
  };
  for (const error of document.errors) {
    const { line, col } = lineCounter.linePos(error.pos[0]);
    problems.push(`${file}:${line}:${col}: ${error.message.split('\n')[0]}`);
  }
  const config: GatewayConfig = {
    destinations: { queues: [], topics: [] },
    admin: { host: '127.0.0.1', port: 8161 },
    store: { path: null },
  };
  if (problems.length > 0) throw new ConfigError(problems);
  const root = document.contents;
  if (root === null) return config;
  if (!isMap(root)) {
    at(root, '', 'expected a mapping of settings (destinations: ...)');
    throw new ConfigError(problems);
  }
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    if (key === 'admin' || key === 'store') {
      readScalars(
        pair.value,
        key,
        key === 'admin' ? ADMIN_FIELDS : STORE_FIELDS,
        at,
        config[key] as unknown as Record<string, unknown>,
      );
      continue;
    }
    if (key !== 'destinations') {
      at(pair.key, key, `unknown setting (known: admin, destinations, store)`);
      continue;
    }
    const destinations = pair.value as Node | null;
    if (!isMap(destinations)) {
      at(destinations, 'destinations', 'expected a mapping with queues and topics');
      continue;
    }
    for (const kindPair of destinations.items) {
      const kind = isScalar(kindPair.key) ? String(kindPair.key.value) : '?';
      if (kind !== 'queues' && kind !== 'topics') {
        at(kindPair.key as Node, `destinations.${kind}`, 'unknown setting (known: queues, topics)');
        continue;
      }
      const list = kindPair.value as Node | null;
      if (!isSeq(list)) {
        at(list, `destinations.${kind}`, 'expected a list of destinations');
        continue;
      }
      list.items.forEach((item, index) => {
        const path = `destinations.${kind}[${index}]`;
        const parsed = parseDestination(item as Node, path, at);
        if (parsed) config.destinations[kind].push(parsed);
      });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

type Report = (node: Node | null | undefined, path: string, message: string) => void;

const ADMIN_FIELDS: Record<string, 'string' | 'number'> = { host: 'string', port: 'number' };
const STORE_FIELDS: Record<string, 'string' | 'number'> = { path: 'string' };

/** Reads a mapping of scalar settings into `into`, reporting unknown keys and wrong types. */
function readScalars(
  node: Node | null,
  path: string,
  fields: Record<string, 'string' | 'number'>,
  at: Report,
  into: Record<string, unknown>,
): void {
  if (!isMap(node)) {
    at(node, path, `expected a mapping (${Object.keys(fields).join(', ')})`);
    return;
  }
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    const value = pair.value as Node | null;
    const expected = fields[key];
    if (!expected)
      at(pair.key as Node, `${path}.${key}`, `unknown setting (known: ${Object.keys(fields).join(', ')})`);
    else if (!isScalar(value) || typeof value.value !== expected)
      at(value ?? (pair.key as Node), `${path}.${key}`, `expected a ${expected}`);
    else into[key] = value.value;
  }
}

function parseDestination(node: Node, path: string, at: Report): DestinationConfig | undefined {
  if (!isMap(node)) {
    at(node, path, 'expected a mapping with a name');
    return undefined;
  }
  let name: string | undefined;
  const options: Record<string, unknown> = {};
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : '?';
    const value = pair.value as Node | null;
    if (key === 'name') {
      if (isScalar(value) && typeof value.value === 'string' && value.value.trim() !== '') name = value.value;
      else at(value ?? (pair.key as Node), `${path}.name`, 'expected a non-empty string');
    } else if (key === 'options') {
      if (!isMap(value)) {
        at(value, `${path}.options`, 'expected a mapping of destination settings');
        continue;
      }
      for (const option of value.items) {
        const optionKey = isScalar(option.key) ? String(option.key.value) : '?';
        const expected = DESTINATION_OPTION_TYPES[optionKey];
        const optionValue = option.value as Node | null;
        if (!expected) {
          at(
            option.key as Node,
            `${path}.options.${optionKey}`,
            `unknown setting (known: ${Object.keys(DESTINATION_OPTION_TYPES).join(', ')})`,
          );
        } else if (!isScalar(optionValue) || !expected.split('|').includes(typeof optionValue.value)) {
          at(
            optionValue ?? (option.key as Node),
            `${path}.options.${optionKey}`,
            `expected a ${expected.replace('|', ' or ')}`,
          );
        } else {
          options[optionKey] = optionValue.value;
        }
      }
    } else {
      at(pair.key as Node, `${path}.${key}`, 'unknown setting (known: name, options)');
    }
  }
  if (name === undefined) {
    if (!node.items.some((pair) => isScalar(pair.key) && pair.key.value === 'name'))
      at(node, `${path}.name`, 'is required');
    return undefined;
  }
  return { name, options: options };
}
