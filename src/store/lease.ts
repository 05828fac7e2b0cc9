/**
 * The lease that makes one gateway of several the active one (active/standby high availability).
 * Exactly one instance holds it at a time; holding it is what lets an instance write to the shared
 * store and run the bridges. Each grant carries a fencing epoch, one more than the grant before,
 * and every store write checks it (see {@link WriteFence}): an instance whose lease was taken over
 * while it was paused cannot write, whatever it believes.
 */

/** Who holds the lease now, as the database says. */
export interface LeaseHolder {
  /** The holder's instance id, or undefined when the lease was released. */
  readonly holder: string | undefined;
  readonly epoch: number;
  /** When the grant runs out unless renewed, ms since the epoch (the holders' clock). */
  readonly expiresAt: number;
}

/** A lease shared by the instances of one gateway. */
export interface Lease {
  /** This instance's id: unique per process, so a restarted process is a new holder. */
  readonly instanceId: string;
  /**
   * Takes the lease when nobody holds it or the holder's grant ran out; resolves the new fencing
   * epoch, or undefined when another instance holds it. Two instances claiming at once: one wins.
   */
  tryAcquire(): Promise<number | undefined>;
  /** Extends this instance's grant of `epoch`; false when it is no longer this instance's. */
  renew(epoch: number): Promise<boolean>;
  /** Gives up this instance's grant of `epoch` at once, so a standby takes over without waiting. */
  release(epoch: number): Promise<void>;
  /** The current holder, for status and the CLI. */
  read(): Promise<LeaseHolder | undefined>;
  close(): Promise<void>;
}

/**
 * What a store runs first in every write transaction: it fails the transaction unless this
 * instance still holds the grant of `epoch`, and keeps the grant from changing hands until the
 * transaction ends (a takeover waits for writes in progress, so the new active's recovery reads
 * everything the old one committed).
 */
export interface WriteFence {
  /** The statement and its values: it must return exactly one row for the write to go on. */
  statement(): { readonly text: string; readonly values: readonly unknown[] };
  /** Says why a write was refused, for the error the store raises. */
  describe(): string;
}

/** The error a fenced write fails with: the lease is another instance's now. */
export class FencedError extends Error {
  override readonly name = 'FencedError';
}
