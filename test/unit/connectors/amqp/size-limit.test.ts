import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bodyLimit, checkBodySize, tooLargeAnswer } from '../../../../connectors/amqp/size-limit.js';
import { MessageTooLargeError, isPoison } from '../../../../src/spi/index.js';

test("amqp size limit - the default is the reporting rabbitmq version's max_message_size; maxMessageBytes wins (DLV-9)", () => {
  assert.equal(bodyLimit(undefined, 'RabbitMQ', '3.10.8')?.bytes, 134_217_728);
  assert.equal(bodyLimit(undefined, 'RabbitMQ', '3.13.7')?.bytes, 134_217_728);
  assert.equal(bodyLimit(undefined, 'RabbitMQ', '4.0.5')?.bytes, 16_777_216);
  assert.equal(bodyLimit(undefined, 'RabbitMQ', '3.7.28'), undefined, 'no max_message_size before 3.8');
  assert.equal(bodyLimit(undefined, 'LavinMQ', '2.0.0'), undefined, 'another broker: no guess');
  assert.deepEqual(bodyLimit(5_000, 'RabbitMQ', '4.0.5'), {
    bytes: 5_000,
    source: "the amqp sink's maxMessageBytes",
  });
});

test('amqp size limit - a body over the limit is poison naming both sizes; one at the limit passes (DLV-9)', () => {
  const limit = bodyLimit(undefined, 'RabbitMQ', '4.1.0');
  checkBodySize(16_777_216, 'ID:1', limit);
  assert.throws(
    () => checkBodySize(16_777_217, 'ID:1', limit),
    (error: unknown) =>
      error instanceof MessageTooLargeError &&
      isPoison(error) &&
      error.message ===
        "message 'ID:1' is too large: 16777217 bytes, over the limit of 16777216 bytes of rabbitmq 4.1.0 (its default max_message_size)",
  );
  checkBodySize(1e12, 'ID:1', undefined);
});

test("amqp size limit - rabbitmq's channel close for a too-large message reads as poison with its sizes (DLV-9)", () => {
  const error = tooLargeAnswer(
    'Channel closed by server: 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - message size 134217729 is larger than configured max size 134217728"',
    'ID:2',
    undefined,
  );
  assert.ok(error instanceof MessageTooLargeError);
  assert.equal(error.size, 134_217_729);
  assert.equal(error.limit, 134_217_728);
  assert.equal(tooLargeAnswer('PRECONDITION_FAILED - inequivalent arg', 'ID:2', undefined), undefined);
});
