import { test } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import {
  BackOffError,
  EndpointConfigurationError,
  NotConnectedError,
  PoisonMessageError,
  isPoison,
} from '../../../../src/spi/index.js';
import { classifyConnectionError, classifySendError } from '../../../../connectors/kafka/errors.js';

// kafkajs is CommonJS and spreads its errors into its exports, which ESM cannot name.
const {
  KafkaJSConnectionError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSSASLAuthenticationError,
} = kafkajs;

function protocolError(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError({ message: type, type, code, retriable } as unknown as Error);
}

function afterRetries(error: Error): Error {
  return new KafkaJSNumberOfRetriesExceeded(error, { retryCount: 5, retryTime: 100 });
}

test('kafka connector - a record the broker finds too large is a poison message (DLV-9, BRG-4)', () => {
  const error = classifySendError(afterRetries(protocolError('MESSAGE_TOO_LARGE', 10, false)), 't');
  assert.ok(error instanceof PoisonMessageError);
  assert.ok(isPoison(error));
  assert.match(error.message, /kafka topic 't' refused the record/);
  assert.ok(
    classifySendError(protocolError('RECORD_LIST_TOO_LARGE', 18, false), 't') instanceof PoisonMessageError,
  );
  assert.ok(classifySendError(protocolError('INVALID_RECORD', 87, false), 't') instanceof PoisonMessageError);
});

test('kafka connector - retriable broker errors ask the runtime to back off (BRG-4)', () => {
  const error = classifySendError(afterRetries(protocolError('NOT_ENOUGH_REPLICAS', 19, true)), 't');
  assert.ok(error instanceof BackOffError);
  assert.ok(classifySendError(new Error('something else'), 't') instanceof BackOffError);
});

test('kafka connector - lost connections and fenced producers are not-connected errors (BRG-5)', () => {
  const lost = new KafkaJSConnectionError('Connection error: ECONNREFUSED', { broker: 'b:9092' });
  assert.ok(classifySendError(afterRetries(lost), 't') instanceof NotConnectedError);
  assert.ok(
    classifySendError(protocolError('INVALID_PRODUCER_EPOCH', 47, false), 't') instanceof NotConnectedError,
  );
  assert.ok(classifySendError(protocolError('UNKNOWN', 90, false), 't') instanceof NotConnectedError);
  assert.ok(classifySendError(new Error('The producer is disconnected'), 't') instanceof NotConnectedError);
});

test('kafka connector - missing topics and refused credentials are configuration errors (BRG-5)', () => {
  assert.ok(
    classifySendError(afterRetries(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true)), 't') instanceof
      EndpointConfigurationError,
  );
  assert.ok(
    classifyConnectionError(protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false), 'connecting') instanceof
      EndpointConfigurationError,
  );
  const sasl = classifyConnectionError(
    new (KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error)('bad password'),
    'connecting',
  );
  assert.ok(sasl instanceof EndpointConfigurationError);
  assert.match(sasl.message, /^connecting failed: /);
});

test('kafka connector - typed errors pass through unchanged, the cause is kept (BRG-4)', () => {
  const poison = new PoisonMessageError('bad');
  assert.equal(classifySendError(poison, 't'), poison);
  const original = protocolError('NOT_LEADER_FOR_PARTITION', 6, true);
  assert.equal(classifySendError(original, 't').cause, original);
});
