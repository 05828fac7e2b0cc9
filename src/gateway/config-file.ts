/**
 * Reads a configuration file and checks it the way `jms-gateway validate` does: the schema and
 * cross-field checks, then building everything on an in-memory engine. `validate` and a reload
 * use the same function, so a file `validate` accepts is one a reload applies.
 */
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import { ConfigError, type LoadedConfig, formatProblems, loadConfig } from '../config/load-config.js';
import { Gateway, type ReloadSource } from './gateway.js';

/** A checked configuration, or every problem as `file:line:col: path: message`. */
export type CheckedConfig =
  | { readonly ok: true; readonly loaded: LoadedConfig }
  | { readonly ok: false; readonly errors: readonly string[] };

/** Reads and checks `file`; never throws for a file that is missing or wrong (that is in `errors`). */
export async function checkConfigFile(
  file: string,
  registry: ConnectorRegistry,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<CheckedConfig> {
  let loaded: LoadedConfig;
  try {
    loaded = await loadConfig(file, env === undefined ? { registry } : { registry, env });
  } catch (error) {
    if (error instanceof ConfigError) return { ok: false, errors: error.problems };
    return {
      ok: false,
      errors: [`cannot read configuration '${file}': ${(error as Error).message}`],
    };
  }
  const problems = await Gateway.check(loaded.config);
  if (problems.length > 0) return { ok: false, errors: formatProblems(loaded.source, problems) };
  return { ok: true, loaded };
}

/** The same checks, as a reload takes their outcome: the configuration, or its problems. */
export async function reloadSourceOf(
  file: string,
  registry: ConnectorRegistry,
  env?: Readonly<Record<string, string | undefined>>,
): Promise<ReloadSource> {
  const checked = await checkConfigFile(file, registry, env);
  return checked.ok ? { ok: true, config: checked.loaded.config } : checked;
}
