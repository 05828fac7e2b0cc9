/**
 * The MQTT connector (3.1.1 and 5, mqtt.js): a source subscribing to a topic filter that
 * acknowledges to the broker only once the bridge settled a message, a sink publishing with
 * QoS 0/1/2. Mapping: `mapping.ts` and `docs/mapping.md`.
 */
import type { ConnectorDefinition } from '../../src/spi/index.js';
import { checkMqttEndpoint } from './check.js';
import { MqttSink } from './sink.js';
import { MqttSource } from './source.js';
import { mqttConfigSchema, type MqttConfig } from './spec.js';

/** The `type: mqtt` connector. */
export const mqttConnector: ConnectorDefinition<MqttConfig> = {
  type: 'mqtt',
  summary:
    'MQTT 3.1.1 and 5: subscribe to a topic filter (acknowledged after settlement), publish with QoS 0/1/2',
  config: mqttConfigSchema,
  createSource: (config, context) => new MqttSource(config, context),
  createSink: (config, context) => new MqttSink(config, context),
  check: checkMqttEndpoint,
};

export type { MqttConfig } from './spec.js';
export { mqttConfigSchema } from './spec.js';
export { MqttSource } from './source.js';
export { MqttSink } from './sink.js';
