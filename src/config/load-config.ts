/**
 * Loads the gateway's YAML configuration. Every problem names the file, line, column and path and
 * says what was expected: `gateway.yaml:4:7: destinations.queues[0].name: expected a string`.
 * `${ENV_VAR}` references in strings are substituted from the environment first; their values
 * are never echoed in problems. The values of fields declared secret (credentials) are collected
 * in `secrets`, for the logs to mask.
 */
import { open } from 'node:fs/promises';
import { checkConfig } from './checks.js';
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import { type GatewayConfig, toGatewayConfig } from './gateway-config.js';
import { gatewaySchema } from './gateway-schema.js';
import { MAX_CONFIG_BYTES, tooLarge } from './limits.js';
import { secretValues } from './secret-values.js';
import { type ValidationContext, resolveNode } from './validate.js';
import { ConfigSource, type Problem } from './yaml-source.js';

/** A configuration with problems: every one of them, formatted, in file order. */
export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'ConfigError';
  }
}

/** How a configuration is read. */
export interface LoadOptions {
  /** The connector types endpoints may use. */
  readonly registry: ConnectorRegistry;
  /** Where `${ENV_VAR}` references and the admin token come from. Default: process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A parsed configuration and the file it came from, to place problems found later (when building). */
export interface LoadedConfig {
  readonly config: GatewayConfig;
  readonly source: ConfigSource;
}

/** Reads and validates a configuration file. Throws {@link ConfigError} listing every problem. */
export async function loadConfig(path: string, options: LoadOptions): Promise<LoadedConfig> {
  return parseConfig(await readConfigText(path), path, options);
}

/**
 * The file's text, refused past {@link MAX_CONFIG_BYTES} before more is read: a file of
 * gigabytes, or a device or pipe that never ends (`/dev/zero`), would take the memory first.
 */
async function readConfigText(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    if (size > MAX_CONFIG_BYTES) throw new ConfigError([`${path}:1:1: ${tooLarge(size)}`]);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const { bytesRead } = await file.read(chunk, 0, chunk.length, null);
      if (bytesRead === 0) return Buffer.concat(chunks).toString('utf8');
      total += bytesRead;
      if (total > MAX_CONFIG_BYTES) throw new ConfigError([`${path}:1:1: ${tooLarge(undefined)}`]);
      chunks.push(chunk.subarray(0, bytesRead));
    }
  } finally {
    await file.close();
  }
}

/** Validates configuration text; `file` names it in problems. Throws {@link ConfigError}. */
export function parseConfig(text: string, file: string, options: LoadOptions): LoadedConfig {
  const env = options.env ?? process.env;
  const source = new ConfigSource(text, file, env);
  if (source.syntaxErrors.length > 0) throw new ConfigError(source.syntaxErrors);
  const problems: Problem[] = [...source.envProblems];
  const context: ValidationContext = {
    problems,
    isCoercible: (path) => source.isCoercible(path),
    connections: new Map(),
  };
  if (source.data === undefined || source.data === null)
    throw new ConfigError([
      source.format({
        path: '',
        message:
          'the configuration is empty (nothing but comments, or null): write the settings to run (config/gateway.yaml is an example), or {} for every default',
      }),
    ]);
  const data = source.data;
  const resolved = resolveNode(gatewaySchema(options.registry), data, '', context) as
    Record<string, unknown> | undefined;
  if (resolved !== undefined) problems.push(...checkConfig(resolved, env));
  const reported = problems.filter(
    (problem, index) => index < source.envProblems.length || !source.isBroken(problem.path),
  );
  if (reported.length > 0) throw new ConfigError(formatProblems(source, reported));
  const config = toGatewayConfig(resolved!, file, new Set());
  return { config: { ...config, secrets: secretValues(config, options.registry) }, source };
}

/** Formats problems in file order (line, then column), without repeats. */
export function formatProblems(source: ConfigSource, problems: readonly Problem[]): string[] {
  const placed = problems.map((problem) => ({
    text: source.format(problem),
    position: source.position(problem.path, problem.at ?? 'value'),
  }));
  placed.sort((a, b) => a.position.line - b.position.line || a.position.col - b.position.col);
  return [...new Set(placed.map((p) => p.text))];
}
