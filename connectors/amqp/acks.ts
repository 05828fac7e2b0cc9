/**
 * The acknowledgements of one consuming channel, coalesced. The bridge runtime settles what the
 * target confirmed in batches (BatchSize, BatchInterval), one `settle` call a delivery; written as
 * they come, that is one `basic.ack` frame a message for amqplib to encode and the broker to
 * handle one by one, where the broker's protocol acknowledges a run in one. Here the acks settled
 * in one turn of the event loop go out together: one `basic.ack` with `multiple` set for the
 * longest run of the channel's oldest deliveries that are all settled, and one frame each for
 * acks beyond the first delivery still open (those must not wait: a lost connection would deliver
 * them again).
 *
 * `multiple` acknowledges every delivery of the channel up to the tag that is still unacknowledged
 * at the broker, so the run it covers holds only deliveries settled here: acks, and nacks already
 * written (the broker no longer holds those). A delivery still open ends the run.
 */
import type { Channel, Message } from 'amqplib';
import { NotConnectedError } from '../../src/spi/index.js';

/** What the coalescer writes to: the channel's `ack` and `nack` (amqplib's `Channel`). */
export type AckChannel = Pick<Channel, 'ack' | 'nack'>;

export class ChannelAcks {
  readonly #channel: AckChannel;
  /**
   * The deliveries not yet acknowledged at the broker, by delivery tag, in the order the broker
   * sent them (a Map keeps insertion order, and tags ascend); `ack` is set once it is settled
   * `ack` and waits for the write. What was written leaves at once, so a delivery held open for long
   * (a retry at the head of its unit) keeps only itself here, not everything acknowledged since.
   */
  readonly #unacked = new Map<number, { readonly message: Message; ack: boolean }>();
  /** Acks waiting for the write, with the settles waiting for them. */
  #pending: { message: Message; resolve: () => void; reject: (error: Error) => void }[] = [];
  #lost: Error | undefined;

  constructor(channel: AckChannel) {
    this.#channel = channel;
  }

  /** Deliveries of this channel the broker holds unacknowledged, as far as this side wrote. */
  get unacknowledged(): number {
    return this.#unacked.size;
  }

  /** A delivery the broker sent on this channel, in the order it sent them. */
  delivered(message: Message): void {
    this.#unacked.set(message.fields.deliveryTag, { message, ack: false });
  }

  /** Acknowledges a delivery with the others settled in this turn; resolves once written. */
  ack(message: Message): Promise<void> {
    if (this.#lost) return Promise.reject(this.#lost);
    return new Promise<void>((resolve, reject) => {
      const entry = this.#unacked.get(message.fields.deliveryTag);
      if (entry) entry.ack = true;
      if (this.#pending.length === 0) queueMicrotask(() => this.#write());
      this.#pending.push({ message, resolve, reject });
    });
  }

  /** Rejects a delivery (`requeue`: the broker delivers it again) at once. */
  nack(message: Message, requeue: boolean): void {
    if (this.#lost) throw this.#lost;
    this.#channel.nack(message, false, requeue);
    this.#unacked.delete(message.fields.deliveryTag);
  }

  /** The channel is gone: acks not yet written fail, and so does every later settle. */
  lose(error: Error): void {
    this.#lost ??= error;
    this.#unacked.clear();
    this.#fail(this.#pending.splice(0), error);
  }

  #write(): void {
    const pending = this.#pending.splice(0);
    if (this.#lost) {
      this.#fail(pending, this.#lost);
      return;
    }
    try {
      const last = this.#takeSettledRun();
      if (last) this.#channel.ack(last, true);
      for (const { message } of pending) {
        const tag = message.fields.deliveryTag;
        if (!this.#unacked.get(tag)?.ack) continue;
        this.#channel.ack(message);
        this.#unacked.delete(tag);
      }
    } catch (error) {
      this.lose(new NotConnectedError('could not settle: the channel is closed', { cause: error }));
      this.#fail(pending, this.#lost!);
      return;
    }
    for (const { resolve } of pending) resolve();
  }

  /**
   * Takes the oldest unacknowledged deliveries while they are settled `ack`; returns the last of
   * them (to be written with `multiple`, which covers them all), if any.
   */
  #takeSettledRun(): Message | undefined {
    let last: Message | undefined;
    for (const [tag, entry] of this.#unacked) {
      if (!entry.ack) break;
      last = entry.message;
      this.#unacked.delete(tag);
    }
    return last;
  }

  #fail(pending: readonly { reject: (error: Error) => void }[], error: Error): void {
    for (const { reject } of pending) reject(error);
  }
}
