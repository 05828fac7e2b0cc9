/**
 * Where one partition's records stand between fetch and commit. Kafka keeps one position per
 * partition, so the source may only commit up to the first record the bridge has not settled:
 * the committed position is the offset after the longest settled prefix of the records handed
 * out, in offset order (offsets may have gaps: compaction, transaction markers).
 *
 * A retry rewinds the partition: the record and everything after it are read again, in order,
 * in a new epoch. Copies handed out before the rewind are stale; an ack or reject of a stale copy
 * still counts (the bridge is done with that offset), so its fresh copy is skipped rather than
 * delivered twice. A retry of a stale copy changes nothing: its fresh copy comes anyway.
 */
export class PartitionTrack {
  #epoch = 0;
  /** Offsets handed out (or skipped) in this epoch, ascending, from the commit point on. */
  #outstanding: bigint[] = [];
  /** Offsets settled with ack or reject, by any copy, not yet behind the commit point. */
  readonly #done = new Set<bigint>();
  /** The position to commit: the offset after the settled prefix; undefined until something settled. */
  #committable: bigint | undefined;
  /** The last position committed to the broker. */
  #committed: bigint | undefined;
  /** The first offset seen in this track: where the group's committed position stood when it began. */
  #base: bigint | undefined;
  /** The highest offset the bridge has received: a record at or below it is a redelivery. */
  #highest: bigint | undefined;
  /** Where reading goes on: after the last admitted record, or the offset of the last rewind. */
  #next: bigint | undefined;

  /** Bumped by every rewind: deliveries carry the epoch they were handed out in. */
  get epoch(): number {
    return this.#epoch;
  }

  /**
   * A fetched record is about to be read ahead: `deliver` it, or `skip` it because a copy of it
   * was already settled. Either way it now counts in the commit order.
   */
  admit(offset: bigint): 'deliver' | 'skip' {
    this.#base ??= offset;
    this.#next = offset + 1n;
    this.#outstanding.push(offset);
    if (this.#done.has(offset)) {
      this.#advance();
      return 'skip';
    }
    return 'deliver';
  }

  /**
   * The bridge receives the record at `offset`. True when it had received it before (a rewind
   * brought it back): a redelivery. Records only read ahead before a rewind do not count.
   */
  handOut(offset: bigint): boolean {
    if (this.#highest !== undefined && offset <= this.#highest) return true;
    this.#highest = offset;
    return false;
  }

  /** A copy of `offset` was acked or rejected. True when the commit position moved. */
  settle(offset: bigint): boolean {
    if (this.#committable !== undefined && offset < this.#committable) return false;
    this.#done.add(offset);
    return this.#advance();
  }

  /**
   * A copy of `offset` handed out in `epoch` asks to be delivered again. True when the partition
   * must be read again from `offset` (the caller seeks there); false for a stale copy or an offset
   * that another copy already settled.
   */
  rewind(offset: bigint, epoch: number): boolean {
    if (epoch !== this.#epoch || this.#done.has(offset)) return false;
    if (this.#committable !== undefined && offset < this.#committable) return false;
    this.#epoch++;
    this.#next = offset;
    this.#outstanding = this.#outstanding.filter((admitted) => admitted < offset);
    return true;
  }

  /** The position to commit, when it is past the last committed one. */
  pendingCommit(): bigint | undefined {
    if (this.#committable === undefined) return undefined;
    if (this.#committed !== undefined && this.#committable <= this.#committed) return undefined;
    return this.#committable;
  }

  /** The broker has stored `position`. */
  markCommitted(position: bigint): void {
    if (this.#committed === undefined || position > this.#committed) this.#committed = position;
  }

  /**
   * Where reading must restart to lose nothing when this track is abandoned (the partition went to
   * another member): the last committed position, else where the track began. Undefined when
   * nothing was fetched.
   */
  restartPosition(): bigint | undefined {
    return this.#committed ?? this.#base;
  }

  /**
   * Where reading goes on when the track is kept (the partition stayed with this member through
   * a rebalance): after the last record handed out, or at the last rewind.
   */
  resumePosition(): bigint | undefined {
    return this.#next ?? this.restartPosition();
  }

  /** Offsets handed out and not yet settled, for diagnostics and tests. */
  unsettled(): bigint[] {
    return this.#outstanding.filter((offset) => !this.#done.has(offset));
  }

  #advance(): boolean {
    let moved = false;
    while (this.#outstanding.length > 0) {
      const head = this.#outstanding[0]!;
      if (!this.#done.has(head)) break;
      this.#outstanding.shift();
      this.#done.delete(head);
      this.#committable = head + 1n;
      moved = true;
    }
    return moved;
  }
}
