/**
 * The connector types a gateway knows, by their YAML `type:`. An instance built from an explicit
 * list (`connectors/index.ts` builds the built-in one); tests build their own with fakes.
 */
import { InvalidArgumentError } from '../jms/errors.js';
import type { ConnectorDefinition } from './connector.js';

/** The `type:` of the gateway's own queues and topics, which no connector may take. */
export const INTERNAL_ENDPOINT_TYPE = 'jms';

/** Connector definitions by type. */
export class ConnectorRegistry {
  readonly #byType = new Map<string, ConnectorDefinition>();

  /** Registers each definition; two with the same type, or one named `jms`, are refused. */
  constructor(definitions: readonly ConnectorDefinition[]) {
    for (const definition of definitions) {
      if (!/^[a-z][a-z0-9-]*$/.test(definition.type))
        throw new InvalidArgumentError(
          `connector type '${definition.type}' is not valid (expected lower-case letters, digits and '-')`,
        );
      if (definition.type === INTERNAL_ENDPOINT_TYPE)
        throw new InvalidArgumentError(
          `connector type '${INTERNAL_ENDPOINT_TYPE}' is reserved for the gateway's own destinations`,
        );
      if (this.#byType.has(definition.type))
        throw new InvalidArgumentError(`connector type '${definition.type}' is registered twice`);
      this.#byType.set(definition.type, definition);
    }
  }

  /** The definition of `type`, or undefined. */
  get(type: string): ConnectorDefinition | undefined {
    return this.#byType.get(type);
  }

  /** Every registered type, sorted. */
  types(): string[] {
    return [...this.#byType.keys()].sort();
  }

  /** Every definition, sorted by type. */
  definitions(): ConnectorDefinition[] {
    return this.types().map((type) => this.#byType.get(type)!);
  }
}
