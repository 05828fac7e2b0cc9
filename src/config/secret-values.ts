/**
 * The values a configuration holds that must never be shown: those of fields a connector declares
 * secret (`secret: true` in its spec), reduced to their credentials where they are URLs (a broker
 * URL's password, not its host). Whether a value came from a `${ENV}` reference does not matter:
 * a broker address from the environment is no secret, a password written in the file is one.
 */
import type { FieldSpec } from '../spi/index.js';
import type { ConnectorRegistry } from '../spi/connector-registry.js';
import { credentialsIn } from './credentials.js';
import type { EndpointConfig, GatewayConfig } from './gateway-config.js';

/** Every secret value of the configuration's broker endpoints, named connections and users. */
export function secretValues(
  config: Pick<GatewayConfig, 'bridges' | 'connections' | 'security'> & { store?: { url?: string } },
  registry: ConnectorRegistry,
): Set<string> {
  const found = new Set<string>();
  for (const user of config.security.users ?? []) found.add(user.password);
  if (config.store?.url) for (const part of credentialsIn(config.store.url)) found.add(part);
  for (const bridge of config.bridges) {
    const endpoints: (EndpointConfig | undefined)[] = [bridge.source, bridge.target, bridge.errorDestination];
    for (const endpoint of endpoints)
      if (endpoint !== undefined && 'connector' in endpoint)
        collect(endpoint.connector.config.fields, endpoint.config, found);
  }
  for (const connection of Object.values(config.connections)) {
    const connector = typeof connection.type === 'string' ? registry.get(connection.type) : undefined;
    if (connector) collect(connector.config.fields, connection, found);
  }
  return found;
}

function collect(fields: Readonly<Record<string, FieldSpec>>, value: unknown, found: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  for (const [key, field] of Object.entries(fields)) collectField(field, record[key], found);
}

function collectField(field: FieldSpec, value: unknown, found: Set<string>): void {
  switch (field.type) {
    case 'string':
      if (field.secret && typeof value === 'string') for (const part of credentialsIn(value)) found.add(part);
      return;
    case 'object':
      collect(field.fields, value, found);
      return;
    case 'array':
      if (Array.isArray(value)) for (const item of value) collectField(field.items, item, found);
      return;
    case 'map':
      if (typeof value === 'object' && value !== null)
        for (const item of Object.values(value)) collectField(field.values, item, found);
      return;
    default:
      return;
  }
}
