/**
 * The numbers the engine hands out: send sequence numbers (the order every backlog keeps),
 * JMSMessageIDs made from them, unique per gateway and restart (MSG-1), and connection ids.
 */
import { randomBytes } from 'node:crypto';

export class EngineIds {
  readonly #messageIdPrefix = `ID:${randomBytes(6).toString('hex')}-`;
  #seq = 0;
  #connections = 0;

  /** The next send sequence number. */
  nextSeq(): number {
    return ++this.#seq;
  }

  /** Continues after the highest sequence number a previous run stored (PER-1). */
  continueAfter(seq: number): void {
    this.#seq = Math.max(this.#seq, seq);
  }

  /** The JMSMessageID of the message sent with sequence `seq` (MSG-1). */
  messageIdFor(seq: number): string {
    return this.#messageIdPrefix + seq.toString(36);
  }

  /** What every id of this run starts with: {@link messageIdFor} is it and the sequence in base 36. */
  get messageIdPrefix(): string {
    return this.#messageIdPrefix;
  }

  /** A new connection id. */
  newConnectionId(): string {
    return `connection-${++this.#connections}`;
  }
}
