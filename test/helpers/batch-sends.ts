/**
 * What the AMQP and MQTT connector tests of `sendBatch` share: numbered messages whose arrival
 * order can be read back, the results by kind, the batch with one oversize message, and a relay
 * in front of the broker to cut the connection in the middle of a batch.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { MessageTooLargeError, TextMessage, type SendResult } from '../../src/spi/index.js';
import { type TcpRelay, tcpRelay } from './tcp-relay.js';

/** Messages `m-0` ... `m-(count - 1)`, with bodies padded to `bytes`. */
export function numbered(count: number, bytes = 16): TextMessage[] {
  return Array.from({ length: count }, (_, index) => {
    const message = new TextMessage(`m-${index}`.padEnd(bytes, '.'));
    message.setJMSMessageID(`ID:m-${index}`);
    return message;
  });
}

/** The number of a {@link numbered} message from its body. */
export function numberOf(body: string): number {
  return Number(/^m-(\d+)/.exec(body)![1]);
}

/** The results as `ok` or the error's class name. */
export function kinds(results: readonly SendResult[]): string[] {
  return results.map((result) => (result.ok ? 'ok' : result.error.constructor.name));
}

/** The message of {@link oversizeBatch} that is too large. */
export const OVERSIZE_AT = 7;

/** 20 {@link numbered} messages, the one at {@link OVERSIZE_AT} padded to `bytes`. */
export function oversizeBatch(bytes: number): TextMessage[] {
  const batch = numbered(20);
  batch[OVERSIZE_AT] = new TextMessage(`m-${OVERSIZE_AT}`.padEnd(bytes, '!'));
  return batch;
}

/** The results of {@link oversizeBatch}: the oversize message failed alone, as MessageTooLargeError. */
export function assertOversizeFailedAlone(results: readonly SendResult[]): void {
  const expected = Array<string>(20).fill('ok');
  expected[OVERSIZE_AT] = 'MessageTooLargeError';
  assert.deepEqual(kinds(results), expected);
  const failed = results[OVERSIZE_AT]!;
  assert.ok(!failed.ok && failed.error instanceof MessageTooLargeError);
}

/**
 * A relay on loopback to the broker at `url` (`defaultPort` when it names none), closed after the
 * test, and the URL that connects through it.
 */
export async function relayedBroker(
  t: TestContext,
  url: string,
  defaultPort: number,
): Promise<{ relay: TcpRelay; url: string }> {
  const target = new URL(url);
  const relay = await tcpRelay(target.hostname, Number(target.port || defaultPort));
  t.after(() => relay.close());
  const relayed = new URL(url);
  relayed.host = `127.0.0.1:${relay.port}`;
  return { relay, url: relayed.toString() };
}
