/**
 * `check --connect` for an AMQP endpoint: connects with the endpoint's URL and timeout, then
 * checks passively (checkQueue, checkExchange) that the queue it consumes, or the exchange (or
 * queue) it publishes to, exists, unless the endpoint declares it at connect. Nothing is created.
 * Each passive check runs on a throwaway channel: a missing queue closes the channel it was
 * asked on.
 */
import type { ChannelModel } from 'amqplib';
import type { CheckContext, EndpointCheck, EndpointProblem } from '../../src/spi/index.js';
import { classify, openConnection, replyCode } from './connection.js';
import { declaredNames } from './declare.js';
import type { AmqpConfig } from './spec.js';

/** NOT_FOUND: the passive declaration found no such queue or exchange. */
const NOT_FOUND = 404;

/** What the endpoint reads or writes, by the field that names it. */
function needed(
  config: AmqpConfig,
  role: CheckContext['role'],
): { field: string; kind: 'queue' | 'exchange'; name: string }[] {
  if (role === 'source' || config.exchange === '')
    return config.queue === undefined ? [] : [{ field: 'queue', kind: 'queue', name: config.queue }];
  return [{ field: 'exchange', kind: 'exchange', name: config.exchange }];
}

/** Whether the queue or exchange exists; rejects for any answer but "not found". */
async function exists(connection: ChannelModel, kind: 'queue' | 'exchange', name: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => {});
  try {
    if (kind === 'queue') await channel.checkQueue(name);
    else await channel.checkExchange(name);
  } catch (error) {
    if (replyCode(error) === NOT_FOUND) return false;
    throw error;
  }
  await channel.close().catch(() => {});
  return true;
}

/** The connector's `check`: see the module comment. */
export async function checkAmqpEndpoint(config: AmqpConfig, context: CheckContext): Promise<EndpointCheck> {
  let connection: ChannelModel;
  try {
    connection = await openConnection(config, context, context.role, context.signal);
  } catch (error) {
    return { problems: [{ field: 'url', message: (error as Error).message }], notes: [] };
  }
  connection.on('error', () => {});
  const declared = declaredNames(config.declare);
  const problems: EndpointProblem[] = [];
  try {
    for (const { field, kind, name } of needed(config, context.role)) {
      if ((kind === 'queue' ? declared.queues : declared.exchanges).has(name)) continue;
      try {
        if (!(await exists(connection, kind, name)))
          problems.push({
            field,
            message: `${kind} '${name}' does not exist on the broker: create it, or declare it at connect under declare.${kind}s`,
          });
      } catch (error) {
        problems.push({ field, message: classify(error, `cannot check ${kind} '${name}'`).message });
      }
    }
  } finally {
    await connection.close().catch(() => {});
  }
  return { problems, notes: [] };
}
