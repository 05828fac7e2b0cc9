/**
 * The built-in connectors, as an explicit list (docs/architecture.md: the registry is an instance
 * built from an explicit list; tests build their own with fakes).
 */
import { ConnectorRegistry, type ConnectorDefinition } from '../src/spi/index.js';
import { amqpConnector } from './amqp/index.js';
import { kafkaConnector } from './kafka/index.js';
import { mqttConnector } from './mqtt/index.js';

/** Every connector the gateway ships, in the order the docs list them. */
export const builtinConnectors: readonly ConnectorDefinition[] = [
  amqpConnector,
  mqttConnector,
  kafkaConnector,
];

/** The registry `jms-gateway run` and `validate` use. */
export const builtinRegistry = new ConnectorRegistry(builtinConnectors);
