/**
 * The acknowledgements of one consuming channel, coalesced. The bridge runtime settles what the
 * target confirmed in batches (BatchSize, BatchInterval), one `settle` call a delivery; written as
 * they come, that is one `basic.ack` frame a message, which the broker handles one by one (at a
 * few thousand messages a second RabbitMQ spent as much CPU on those acks as on everything else).
 * Here the acks settled in one turn of the event loop go out together: one `basic.ack` with
 * `multiple` set for the longest run of the channel's oldest deliveries that are all settled, and
 * one frame each for acks beyond the first delivery still open (those must not wait: a lost
 * connection would deliver them again).
 *
 * `multiple` acknowledges every delivery of the channel up to the tag that is still unacknowledged
 * at the broker, so the run it covers holds only deliveries settled here: acks, and nacks already
 * written (the broker no longer holds those). A delivery still open ends the run.
 */
import type { Channel, Message } from 'amqplib';
import { NotConnectedError } from '../../src/spi/index.js';

type Settlement = 'open' | 'ack' | 'done';

/** What the coalescer writes to: the channel's `ack` and `nack` (amqplib's `Channel`). */
export type AckChannel = Pick<Channel, 'ack' | 'nack'>;

export class ChannelAcks {
  readonly #channel: AckChannel;
  /** Deliveries in the order the broker sent them (ascending delivery tags), from `#head` on. */
  #deliveries: Message[] = [];
  #head = 0;
  /** The settlement of each delivery from `#head` on: open, ack waiting for the write, or done. */
  readonly #state = new Map<number, Settlement>();
  /** Acks waiting for the write, with the settles waiting for them. */
  #pending: { message: Message; resolve: () => void; reject: (error: Error) => void }[] = [];
  #lost: Error | undefined;

  constructor(channel: AckChannel) {
    this.#channel = channel;
  }

  /** A delivery the broker sent on this channel, in the order it sent them. */
  delivered(message: Message): void {
    this.#deliveries.push(message);
    this.#state.set(message.fields.deliveryTag, 'open');
  }

  /** Acknowledges a delivery with the others settled in this turn; resolves once written. */
  ack(message: Message): Promise<void> {
    if (this.#lost) return Promise.reject(this.#lost);
    return new Promise<void>((resolve, reject) => {
      this.#state.set(message.fields.deliveryTag, 'ack');
      if (this.#pending.length === 0) queueMicrotask(() => this.#write());
      this.#pending.push({ message, resolve, reject });
    });
  }

  /** Rejects a delivery (`requeue`: the broker delivers it again) at once. */
  nack(message: Message, requeue: boolean): void {
    if (this.#lost) throw this.#lost;
    this.#channel.nack(message, false, requeue);
    this.#state.set(message.fields.deliveryTag, 'done');
  }

  /** The channel is gone: acks not yet written fail, and so does every later settle. */
  lose(error: Error): void {
    this.#lost ??= error;
    this.#fail(this.#pending.splice(0), error);
  }

  #write(): void {
    const pending = this.#pending.splice(0);
    if (this.#lost) {
      this.#fail(pending, this.#lost);
      return;
    }
    try {
      const last = this.#passSettledRun();
      if (last) this.#channel.ack(last, true);
      for (const { message } of pending) {
        const tag = message.fields.deliveryTag;
        if (this.#state.get(tag) !== 'ack') continue;
        this.#channel.ack(message);
        this.#state.set(tag, 'done');
      }
    } catch (error) {
      this.lose(new NotConnectedError('could not settle: the channel is closed', { cause: error }));
      this.#fail(pending, this.#lost!);
      return;
    }
    for (const { resolve } of pending) resolve();
  }

  /**
   * Moves the head past the oldest deliveries that are all settled; returns the last ack among
   * them (to be written with `multiple`), if any.
   */
  #passSettledRun(): Message | undefined {
    let last: Message | undefined;
    const deliveries = this.#deliveries;
    while (this.#head < deliveries.length) {
      const message = deliveries[this.#head]!;
      const tag = message.fields.deliveryTag;
      const state = this.#state.get(tag);
      if (state === 'open') break;
      if (state === 'ack') last = message;
      this.#state.delete(tag);
      this.#head++;
    }
    // Drop what the head passed once it is most of the array, so neither grows without bound.
    if (this.#head > 1024 && this.#head * 2 > deliveries.length) {
      this.#deliveries = deliveries.slice(this.#head);
      this.#head = 0;
    }
    return last;
  }

  #fail(pending: readonly { reject: (error: Error) => void }[], error: Error): void {
    for (const { reject } of pending) reject(error);
  }
}
