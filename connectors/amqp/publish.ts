/**
 * Publishing on a confirm channel without amqplib's per-message copy of the header table.
 *
 * `channel.publish(exchange, routingKey, content, options, callback)` first builds the frame's
 * fields with `Object.create(options.headers)`: the header table becomes the prototype of a new
 * object, which V8 turns into a prototype object, and the header encoder then walks a prototype
 * chain. For a message carrying JMS headers that took 2-3 µs of the 6-7 µs amqplib spends to
 * encode a publish (measured on the CI machine), more than anything else the sink does for it.
 *
 * So the sink builds the same fields itself, the headers as an own property, and hands them to
 * the two calls `channel.publish` makes on a confirm channel (`sendMessage`, then
 * `pushConfirmCallback`). Those are amqplib's own methods, not its documented API: a version
 * without them gets `channel.publish` (see {@link confirmPublisher}).
 */
import type { ConfirmChannel } from 'amqplib';
import type { AmqpOutgoing } from './mapping.js';

/** Publishes one message; returns false when the socket's write buffer is full, as `channel.publish` does. */
export type Publish = (
  exchange: string,
  routingKey: string,
  outgoing: AmqpOutgoing,
  mandatory: boolean,
  confirmed: (error: unknown) => void,
) => boolean;

/** The two methods of amqplib's confirm channel that `publish` calls. */
interface ChannelInternals {
  sendMessage(fields: PublishFields, properties: PublishFields, content: Buffer): boolean;
  pushConfirmCallback(callback: (error: unknown) => void): void;
}

/**
 * The method fields and basic properties of a publish, in one object as amqplib's `Args.publish`
 * returns them (its encoder takes each part from it): every key it sets, in its order, so the
 * objects share one shape.
 */
export type PublishFields = ReturnType<typeof publishFields>;

export function publishFields(
  exchange: string,
  routingKey: string,
  outgoing: AmqpOutgoing,
  mandatory: boolean,
) {
  const properties = outgoing.properties;
  return {
    exchange,
    routingKey,
    mandatory,
    immediate: false,
    ticket: undefined,
    contentType: properties.contentType,
    contentEncoding: undefined,
    headers: properties.headers,
    deliveryMode: properties.deliveryMode,
    priority: properties.priority,
    correlationId: properties.correlationId,
    replyTo: properties.replyTo,
    expiration: properties.expiration,
    messageId: properties.messageId,
    timestamp: properties.timestamp,
    type: properties.type,
    userId: properties.userId,
    appId: properties.appId,
    clusterId: undefined,
  };
}

/** How this sink publishes on `channel`: directly where amqplib has the methods, else through `channel.publish`. */
export function confirmPublisher(channel: ConfirmChannel): Publish {
  const internals = channel as unknown as Partial<ChannelInternals>;
  if (typeof internals.sendMessage !== 'function' || typeof internals.pushConfirmCallback !== 'function')
    return (exchange, routingKey, outgoing, mandatory, confirmed) =>
      channel.publish(
        exchange,
        routingKey,
        outgoing.content,
        { ...outgoing.properties, mandatory },
        confirmed,
      );
  const direct = internals as ChannelInternals;
  return (exchange, routingKey, outgoing, mandatory, confirmed) => {
    const fields = publishFields(exchange, routingKey, outgoing, mandatory);
    const writable = direct.sendMessage(fields, fields, outgoing.content);
    direct.pushConfirmCallback(confirmed);
    return writable;
  };
}
