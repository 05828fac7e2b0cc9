import assert from 'node:assert/strict';
import { test } from 'node:test';
import mqttPacket from 'mqtt-packet';
import { toMqtt311, toMqtt5 } from '../../../../connectors/mqtt/mapping.js';
import {
  MAX_REMAINING_LENGTH,
  checkPublishSize,
  packetLimit,
  publishSize,
} from '../../../../connectors/mqtt/size-limit.js';
import { MessageTooLargeError, isPoison } from '../../../../src/spi/index.js';
import { ALL_BODY_TYPES, sampleMessage } from '../../spi/sample-messages.js';

const NOW = 1_700_000_000_000;

test('mqtt size limit - the sink counts a PUBLISH as mqtt.js encodes it, for every body type, MQTT 5 and 3.1.1, every QoS (DLV-9)', () => {
  for (const bodyType of ALL_BODY_TYPES) {
    const message = sampleMessage(bodyType, NOW - 1_000);
    for (const qos of [0, 1, 2] as const) {
      for (const topic of ['t', 'orders/ü/'.repeat(30)]) {
        const { payload, properties } = toMqtt5(message, { ttl: true, now: NOW });
        const encoded5 = mqttPacket.generate(
          { cmd: 'publish', topic, payload, qos, messageId: 1, properties, retain: false, dup: false },
          { protocolVersion: 5 },
        );
        assert.equal(
          publishSize(topic, payload.length, qos, properties, 5).packet,
          encoded5.length,
          bodyType,
        );
        const envelope = toMqtt311(message, 'envelope');
        const encoded4 = mqttPacket.generate(
          { cmd: 'publish', topic, payload: envelope, qos, messageId: 1, retain: false, dup: false },
          { protocolVersion: 4 },
        );
        assert.equal(
          publishSize(topic, envelope.length, qos, undefined, 4).packet,
          encoded4.length,
          bodyType,
        );
      }
    }
  }
});

test("mqtt size limit - the limit is maxMessageBytes, else the broker's maximum packet size, else the protocol's remaining length (DLV-9)", () => {
  assert.deepEqual(packetLimit(1_000, 5_000), {
    bytes: 1_000,
    counts: 'packet',
    source: "the mqtt sink's maxMessageBytes",
  });
  assert.equal(packetLimit(undefined, 5_000).bytes, 5_000);
  assert.deepEqual(packetLimit(undefined, undefined), {
    bytes: MAX_REMAINING_LENGTH,
    counts: 'remaining',
    source: 'mqtt (the largest remaining length)',
  });
  const limit = packetLimit(undefined, 100);
  checkPublishSize({ packet: 100, remaining: 98 }, 'ID:1', limit);
  assert.throws(
    () => checkPublishSize({ packet: 101, remaining: 99 }, 'ID:1', limit),
    (error: unknown) =>
      error instanceof MessageTooLargeError &&
      isPoison(error) &&
      error.message ===
        "message 'ID:1' is too large: 101 bytes, over the limit of 100 bytes of the mqtt broker (the maximum packet size in its CONNACK)",
  );
  const protocol = packetLimit(undefined, undefined);
  checkPublishSize({ packet: MAX_REMAINING_LENGTH + 5, remaining: MAX_REMAINING_LENGTH }, 'ID:2', protocol);
  assert.throws(
    () => checkPublishSize({ packet: 0, remaining: MAX_REMAINING_LENGTH + 1 }, 'ID:2', protocol),
    MessageTooLargeError,
  );
});
