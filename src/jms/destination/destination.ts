/**
 * Destination handles: the values users pass to producers and consumers and that travel in
 * JMSDestination and JMSReplyTo. They name a destination; the engine holds its state.
 */
import { InvalidDestinationError } from '../errors.js';

/** `queue` delivers each message to one consumer; `topic` to every subscription (DST-1, DST-2). */
export type DestinationKind = 'queue' | 'topic';

/** A queue or topic handle. Two handles with the same kind and name denote the same destination. */
export abstract class Destination {
  /** The destination's name, unique per kind in a gateway. */
  readonly name: string;
  abstract readonly kind: DestinationKind;
  /** True for temporary destinations (DST-5). */
  readonly temporary: boolean = false;

  constructor(name: string) {
    this.name = name;
  }

  /** True when both handles denote the same destination. */
  equals(other: Destination | null | undefined): boolean {
    return other != null && other.kind === this.kind && other.name === this.name;
  }

  #key: string | undefined;

  /** `queue://orders` / `topic://prices`: the form used in logs, the admin API and the store. */
  toString(): string {
    // Computed once: the engine looks destinations up by it on every send.
    return (this.#key ??= `${this.kind}://${this.name}`);
  }
}

/** A point-to-point destination. */
export class Queue extends Destination {
  readonly kind = 'queue' as const;

  /** The queue's name (JMS `getQueueName`). */
  getQueueName(): string {
    return this.name;
  }
}

/** A publish/subscribe destination. */
export class Topic extends Destination {
  readonly kind = 'topic' as const;

  /** The topic's name (JMS `getTopicName`). */
  getTopicName(): string {
    return this.name;
  }
}

/** Deletes a temporary destination; supplied by the connection that created it. */
export type TemporaryDeleter = () => void;

/** A queue that lives as long as the connection that created it (DST-5). */
export class TemporaryQueue extends Queue {
  override readonly temporary = true;
  /** Id of the owning connection: only it may consume. */
  readonly ownerConnectionId: string;
  readonly #deleter: TemporaryDeleter;

  constructor(name: string, ownerConnectionId: string, deleter: TemporaryDeleter) {
    super(name);
    this.ownerConnectionId = ownerConnectionId;
    this.#deleter = deleter;
  }

  /** Deletes the queue now; fails while it has consumers (IllegalState). */
  delete(): void {
    this.#deleter();
  }
}

/** A topic that lives as long as the connection that created it (DST-5). */
export class TemporaryTopic extends Topic {
  override readonly temporary = true;
  /** Id of the owning connection: only it may subscribe. */
  readonly ownerConnectionId: string;
  readonly #deleter: TemporaryDeleter;

  constructor(name: string, ownerConnectionId: string, deleter: TemporaryDeleter) {
    super(name);
    this.ownerConnectionId = ownerConnectionId;
    this.#deleter = deleter;
  }

  /** Deletes the topic now; fails while it has subscribers (IllegalState). */
  delete(): void {
    this.#deleter();
  }
}

/** Parses `queue://name` or `topic://name` (the form of {@link Destination.toString}). */
export function parseDestination(text: string): Queue | Topic {
  const match = /^(queue|topic):\/\/(.+)$/.exec(text);
  if (!match)
    throw new InvalidDestinationError(
      `'${text}' is not a destination (expected 'queue://name' or 'topic://name')`,
    );
  return match[1] === 'queue' ? new Queue(match[2]!) : new Topic(match[2]!);
}
