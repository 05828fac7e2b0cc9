/**
 * `check --connect` for an MQTT endpoint: connects (and disconnects) with a client id of its own
 * and a clean session, so a running gateway's session is neither taken over nor changed. MQTT
 * brokers create topics on first use and have nothing to ask about them: only the connection is
 * checked, and the result says so.
 */
import { randomUUID } from 'node:crypto';
import type { CheckContext, EndpointCheck } from '../../src/spi/index.js';
import { closeClient, openClient } from './connection.js';
import type { MqttConfig } from './spec.js';

/** The connector's `check`: see the module comment. */
export async function checkMqttEndpoint(config: MqttConfig, context: CheckContext): Promise<EndpointCheck> {
  try {
    const client = await openClient(
      config,
      context,
      { clientId: `jms-gateway-check-${randomUUID().slice(0, 8)}`, clean: true },
      () => {},
      context.signal,
    );
    await closeClient(client);
  } catch (error) {
    if (context.signal.aborted) throw error;
    return { problems: [{ field: 'url', message: (error as Error).message }], notes: [] };
  }
  return {
    problems: [],
    notes: [`topic '${config.topic}' is not checked: MQTT brokers create topics on first use`],
  };
}
