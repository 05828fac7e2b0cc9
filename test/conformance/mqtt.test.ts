/**
 * The conformance suite against Mosquitto (MQTT 5, QoS 1): each endpoint is a fresh topic; every
 * source resumes its own persistent session (`clean: false`, a stable client id per member), so
 * Mosquitto keeps unacknowledged and queued messages across a reconnect and a broker restart.
 * The parallel test reads through a shared subscription (`$share/<group>/<topic>`) of three
 * members. The source hands out one message per settlement (docs/mapping.md), so bridges reading
 * it use `batchSize: 1`.
 */
import assert from 'node:assert/strict';
import { connectAsync } from 'mqtt';
import { resolveConfig } from '../../src/spi/index.js';
import { mqttConnector, type MqttConfig } from '../../connectors/mqtt/index.js';
import { uniqueName } from '../helpers/names.js';
import { conformanceSuite } from './suite.js';

function config(fields: Record<string, unknown>): MqttConfig {
  const { config, errors } = resolveConfig(mqttConnector.config, fields, 'endpoint');
  assert.deepEqual(errors, []);
  return config!;
}

conformanceSuite('mqtt', {
  broker: 'mqtt',
  endpoint: ({ url }, { partitions }) => {
    const name = uniqueName('conformance');
    const topic = `jms-gateway/${name}`;
    const sessions = new Set<string>();
    let sinks = 0;
    return Promise.resolve({
      source: (context, member = 0) => {
        const clientId = `${name}-source-${member}`;
        sessions.add(clientId);
        return mqttConnector.createSource!(
          config({
            url,
            topic,
            qos: 1,
            clean: false,
            clientId,
            ...(partitions > 1 ? { shareGroup: name } : {}),
          }),
          context,
        );
      },
      sink: (context) =>
        mqttConnector.createSink!(
          config({ url, topic, qos: 1, clientId: `${name}-sink-${sinks++}` }),
          context,
        ),
      cleanup: async () => {
        // Ends the persistent sessions, so Mosquitto forgets their subscriptions and queues.
        for (const clientId of sessions) {
          const client = await connectAsync(url, { clientId, clean: true, reconnectPeriod: 0 });
          await client.endAsync();
        }
      },
    });
  },
  parallel: { readers: 3, perUnitOrder: false },
  // Mosquitto drops, without a word, what it queues for a subscriber beyond its
  // max_queued_messages (1000 by default): the writer is paced to keep at most `maxBacklog` in
  // the broker, and at most `maxInFlight` more may already be on their way when it pauses.
  bridge: { batchSize: 1, maxInFlight: 100 },
  maxBacklog: 500,
});
