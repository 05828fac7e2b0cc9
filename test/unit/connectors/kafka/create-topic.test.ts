import { test } from 'node:test';
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import type { Admin, ITopicConfig } from 'kafkajs';
import { EndpointConfigurationError } from '../../../../src/spi/index.js';
import {
  TOPIC_CREATION_RETRY,
  createTopicsRetrying,
  topicCreationDelay,
} from '../../../../connectors/kafka/create-topic.js';
import { isSettlingTopicError } from '../../../../connectors/kafka/errors.js';
import { FakeClock, settle } from '../../../helpers/fake-clock.js';

// kafkajs is CommonJS and spreads its errors into its exports, which ESM cannot name.
const {
  KafkaJSAggregateError,
  KafkaJSNumberOfRetriesExceeded,
  KafkaJSProtocolError,
  KafkaJSTopicMetadataNotLoaded,
} = kafkajs;
// Their typings leave out what the classes take (a message; a cause and the topic) or the class.
type ErrorClass<A extends unknown[]> = new (...args: A) => Error;
const errorClasses = kafkajs as unknown as Record<string, unknown>;
const KafkaJSCreateTopicError = errorClasses['KafkaJSCreateTopicError'] as ErrorClass<[Error, string]>;
const KafkaJSTimeout = errorClasses['KafkaJSTimeout'] as ErrorClass<[string]>;
const KafkaJSSASLAuthenticationError = errorClasses['KafkaJSSASLAuthenticationError'] as ErrorClass<[string]>;

function protocolError(type: string, code: number, retriable: boolean): Error {
  return new KafkaJSProtocolError({ message: type, type, code, retriable } as unknown as Error);
}

function afterRetries(error: Error): Error {
  return new KafkaJSNumberOfRetriesExceeded(error, { retryCount: 5, retryTime: 100 });
}

test('kafka topic creation - the answers of a broker still settling are tried again, wrapped or not', () => {
  assert.ok(isSettlingTopicError(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true)));
  assert.ok(isSettlingTopicError(afterRetries(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true))));
  assert.ok(isSettlingTopicError(protocolError('LEADER_NOT_AVAILABLE', 5, true)));
  assert.ok(isSettlingTopicError(afterRetries(protocolError('NOT_CONTROLLER', 41, true))));
  assert.ok(isSettlingTopicError(protocolError('REQUEST_TIMED_OUT', 7, true)));
  assert.ok(isSettlingTopicError(new KafkaJSTimeout('Timed out while waiting for topic leaders')));
  assert.ok(isSettlingTopicError(new KafkaJSTopicMetadataNotLoaded('no metadata', { topic: 't' })));
  const perTopic = new KafkaJSCreateTopicError(protocolError('NOT_CONTROLLER', 41, true), 't');
  assert.ok(isSettlingTopicError(new KafkaJSAggregateError('topics', [perTopic])));
});

test('kafka topic creation - what only an operator can fix is not tried again, even beside a settling answer', () => {
  assert.equal(isSettlingTopicError(protocolError('INVALID_TOPIC_EXCEPTION', 17, false)), false);
  assert.equal(isSettlingTopicError(protocolError('POLICY_VIOLATION', 44, false)), false);
  assert.equal(isSettlingTopicError(protocolError('TOPIC_AUTHORIZATION_FAILED', 29, false)), false);
  assert.equal(isSettlingTopicError(protocolError('INVALID_REPLICATION_FACTOR', 38, false)), false);
  assert.equal(isSettlingTopicError(new KafkaJSSASLAuthenticationError('bad password')), false);
  assert.equal(isSettlingTopicError(new EndpointConfigurationError('wrong')), false);
  assert.equal(isSettlingTopicError(new Error('something else')), false);
  const mixed = new KafkaJSAggregateError('topics', [
    new KafkaJSCreateTopicError(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true), 'a'),
    new KafkaJSCreateTopicError(protocolError('INVALID_TOPIC_EXCEPTION', 17, false), 'b'),
  ]);
  assert.equal(isSettlingTopicError(mixed), false);
});

test('kafka topic creation - the pauses double from 250 ms up to 4 s, eight attempts in all', () => {
  assert.deepEqual(
    Array.from({ length: TOPIC_CREATION_RETRY.attempts - 1 }, (_, i) => topicCreationDelay(i + 1)),
    [250, 500, 1000, 2000, 4000, 4000, 4000],
  );
});

/** An admin whose `createTopics` answers as scripted, one entry an attempt; counts the metadata reads. */
function scriptedAdmin(
  answers: Array<boolean | Error>,
  leaders: number[] = [0],
): Admin & { readonly attempts: number; readonly metadataReads: number } {
  let attempts = 0;
  let metadataReads = 0;
  const admin = {
    get attempts() {
      return attempts;
    },
    get metadataReads() {
      return metadataReads;
    },
    createTopics(request: { topics: ITopicConfig[]; waitForLeaders?: boolean }) {
      assert.equal(request.waitForLeaders, true);
      const answer = answers[attempts++];
      assert.ok(answer !== undefined, 'no more attempts expected');
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
    fetchTopicMetadata({ topics }: { topics: string[] }) {
      const leader = leaders[Math.min(metadataReads++, leaders.length - 1)]!;
      return Promise.resolve({
        topics: topics.map((name) => ({
          name,
          partitions: [{ partitionId: 0, leader, replicas: [], isr: [] }],
        })),
      });
    },
  };
  return admin as unknown as Admin & { readonly attempts: number; readonly metadataReads: number };
}

const TOPIC: ITopicConfig[] = [{ topic: 't', numPartitions: 1 }];

test('kafka topic creation - a first attempt that makes the topic or finds it is the answer, with no pause', async () => {
  const clock = new FakeClock();
  assert.equal(await createTopicsRetrying(scriptedAdmin([true]), TOPIC, { clock }), true);
  const existing = scriptedAdmin([false]);
  assert.equal(await createTopicsRetrying(existing, TOPIC, { clock }), false);
  assert.equal(existing.metadataReads, 0);
});

test('kafka topic creation - UNKNOWN_TOPIC_OR_PARTITION from a fresh broker is asked again after a pause on the clock', async () => {
  const clock = new FakeClock();
  const unknown = afterRetries(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true));
  const admin = scriptedAdmin([unknown, unknown, true]);
  const retries: Array<[number, number]> = [];
  const created = createTopicsRetrying(admin, TOPIC, {
    clock,
    onRetry: (error, attempt, delayMs) => {
      assert.equal(error, unknown);
      retries.push([attempt, delayMs]);
    },
  });
  await settle();
  assert.equal(admin.attempts, 1);
  await clock.advance(249);
  assert.equal(admin.attempts, 1, 'not before the pause is over');
  await clock.advance(1);
  assert.equal(admin.attempts, 2);
  await clock.advance(500);
  assert.equal(await created, true);
  assert.equal(admin.attempts, 3);
  assert.deepEqual(retries, [
    [1, 250],
    [2, 500],
  ]);
});

test('kafka topic creation - a retry that finds the topic an earlier attempt made waits for its leaders and counts it made', async () => {
  const clock = new FakeClock();
  const admin = scriptedAdmin(
    [afterRetries(protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true)), false, false],
    [-1, 0],
  );
  const created = createTopicsRetrying(admin, TOPIC, { clock });
  await clock.advance(250);
  assert.equal(admin.metadataReads, 1, 'the leader was missing at the first look');
  await clock.advance(500);
  assert.equal(await created, true);
  assert.equal(admin.attempts, 3);
  assert.equal(admin.metadataReads, 2);
});

test('kafka topic creation - an error only an operator can fix is thrown at once', async () => {
  const refused = protocolError('INVALID_TOPIC_EXCEPTION', 17, false);
  const admin = scriptedAdmin([refused]);
  await assert.rejects(
    createTopicsRetrying(admin, TOPIC, { clock: new FakeClock() }),
    (error) => error === refused,
  );
  assert.equal(admin.attempts, 1);
});

test('kafka topic creation - a broker that stays unsettled fails after the last attempt, with its error', async () => {
  const clock = new FakeClock();
  const unknown = protocolError('UNKNOWN_TOPIC_OR_PARTITION', 3, true);
  const admin = scriptedAdmin(Array.from({ length: TOPIC_CREATION_RETRY.attempts }, () => unknown));
  const created = createTopicsRetrying(admin, TOPIC, { clock });
  const failed = assert.rejects(created, (error) => error === unknown);
  await clock.advance(60_000);
  await failed;
  assert.equal(admin.attempts, TOPIC_CREATION_RETRY.attempts);
});

test('kafka topic creation - an abort during a pause ends the wait with the signal reason', async () => {
  const clock = new FakeClock();
  const admin = scriptedAdmin([protocolError('LEADER_NOT_AVAILABLE', 5, true), true]);
  const controller = new AbortController();
  const created = createTopicsRetrying(admin, TOPIC, { clock, signal: controller.signal });
  await settle();
  const reason = new Error('closing');
  controller.abort(reason);
  await assert.rejects(created, (error) => error === reason);
  await clock.advance(10_000);
  assert.equal(admin.attempts, 1, 'no attempt after the abort');
});
