/**
 * Declares an endpoint's exchanges, queues and bindings (`declare:`) at connect. Each declaration
 * is idempotent: RabbitMQ creates what is missing and accepts what exists with the same settings.
 * What exists with other settings (PRECONDITION_FAILED) is never changed by the broker, so it is
 * an endpoint configuration error that names the queue or exchange and what differs.
 */
import type { Channel, ChannelModel } from 'amqplib';
import { EndpointConfigurationError } from '../../src/spi/index.js';
import { classify, replyCode } from './connection.js';
import type { AmqpDeclarations } from './spec.js';

/** PRECONDITION_FAILED: a declaration that does not match what the broker has. */
const PRECONDITION_FAILED = 406;

/**
 * RabbitMQ's text for a mismatch:
 * `inequivalent arg 'durable' for queue 'orders' in vhost '/': received 'false' but current is 'true'`.
 */
const INEQUIVALENT =
  /inequivalent arg '([^']+)' for (queue|exchange) '([^']*)' in vhost '[^']*': received (.+?) but current is (.+?)"?$/;

/** One declaration, with its place in the configuration for the error message. */
interface Step {
  readonly path: string;
  readonly what: string;
  run(channel: Channel): Promise<unknown>;
}

function steps(declarations: AmqpDeclarations): Step[] {
  return [
    ...(declarations.exchanges ?? []).map((exchange, index): Step => ({
      path: `declare.exchanges[${index}]`,
      what: `exchange '${exchange.name}'`,
      run: (channel) => channel.assertExchange(exchange.name, exchange.type, { durable: exchange.durable }),
    })),
    ...(declarations.queues ?? []).map((queue, index): Step => ({
      path: `declare.queues[${index}]`,
      what: `queue '${queue.name}'`,
      run: (channel) =>
        channel.assertQueue(queue.name, {
          durable: queue.durable,
          ...(queue.arguments === undefined ? {} : { arguments: { ...queue.arguments } }),
        }),
    })),
    ...(declarations.bindings ?? []).map((binding, index): Step => ({
      path: `declare.bindings[${index}]`,
      what: `the binding of queue '${binding.queue}' to exchange '${binding.exchange}' with key '${binding.routingKey}'`,
      run: (channel) => channel.bindQueue(binding.queue, binding.exchange, binding.routingKey),
    })),
  ];
}

/**
 * The error for a failed declaration: a mismatch says what the broker has and what the
 * configuration asks for; anything else is classified as any broker error.
 */
export function declarationError(error: unknown, path: string, what: string): Error {
  const text = error instanceof Error ? error.message : String(error);
  const mismatch = INEQUIVALENT.exec(text);
  if (replyCode(error) === PRECONDITION_FAILED && mismatch) {
    const [, argument, kind, name, wanted, current] = mismatch;
    return new EndpointConfigurationError(
      `${path}: ${kind} '${name}' exists on the broker with other settings: '${argument}' is ${current} there, the configuration asks for ${wanted}; declare it as it is, or delete the ${kind} first (the broker never changes an existing ${kind})`,
      { cause: error },
    );
  }
  return classify(error, `${path}: cannot declare ${what}`);
}

/**
 * Runs every declaration, exchanges first, then queues, then bindings, on a channel of its own:
 * a failed declaration closes its channel, which must not be the endpoint's.
 */
export async function declareTopology(
  connection: ChannelModel,
  declarations: AmqpDeclarations,
): Promise<void> {
  const all = steps(declarations);
  if (all.length === 0) return;
  let channel: Channel;
  try {
    channel = await connection.createChannel();
  } catch (error) {
    throw classify(error, 'cannot open a channel to declare the topology');
  }
  // A failed declaration closes the channel with an error event; the rejection below reports it.
  channel.on('error', () => {});
  let failed = false;
  try {
    for (const step of all) {
      try {
        await step.run(channel);
      } catch (error) {
        failed = true;
        throw declarationError(error, step.path, step.what);
      }
    }
  } finally {
    if (!failed) await channel.close().catch(() => {});
  }
}

/** The queue and exchange names `declarations` creates, for checks that need not find them on the broker. */
export function declaredNames(declarations: AmqpDeclarations | undefined): {
  queues: Set<string>;
  exchanges: Set<string>;
} {
  return {
    queues: new Set((declarations?.queues ?? []).map((queue) => queue.name)),
    exchanges: new Set((declarations?.exchanges ?? []).map((exchange) => exchange.name)),
  };
}
