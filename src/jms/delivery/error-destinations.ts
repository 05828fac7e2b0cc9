/**
 * Error destinations (DLV-3, DLV-9): where a message goes that will not be delivered again (it
 * used up its redeliveries, was rejected as poison, or expired under the redirect policy). It is
 * copied to its destination's error destination ({@link errorDestinationCopy}) and removed where
 * it was; deleted, counted and logged, when there is none; parked while the error destination is
 * full (see error-destination-parking.ts).
 */
import type { TimerQueue } from '../clock.js';
import type { Backlog } from '../destination/backlog.js';
import { type Queue, type Topic, parseDestination } from '../destination/destination.js';
import type { DestinationState } from '../destination/destination-state.js';
import { type Entry, StoredMessage } from '../destination/entry.js';
import type { DestinationRegistry } from '../destination/registry.js';
import type { EngineIds } from '../engine/ids.js';
import type { StoreLink } from '../engine/store-link.js';
import type { SendPipeline } from '../engine/send-pipeline.js';
import { InvalidDestinationError } from '../errors.js';
import { type EngineLogger, logsDebug } from '../logger.js';
import { errorDestinationCopy } from './error-copy.js';
import { ErrorDestinationParking, type ParkedMove } from './error-destination-parking.js';
import type { FlowControl } from './flow-control.js';

/** How an entry leaves its backlog: counted as deleted, or as expired. */
export type Removal = 'deleted' | 'expired';

/** What error destinations need of the engine. */
export interface ErrorDestinationsContext {
  readonly registry: DestinationRegistry;
  readonly flowControl: FlowControl;
  readonly storeLink: StoreLink;
  readonly sendPipeline: SendPipeline;
  readonly ids: EngineIds;
  readonly timers: TimerQueue;
  readonly logger: EngineLogger;
  now(): number;
}

/**
 * Refuses an error destination the engine could never move a message to (DLV-3): the
 * destination itself (its undeliverable messages would come straight back), or a distributed
 * destination or one of its `name/member` aliases (a move goes to one queue or topic).
 */
export function checkErrorDestinationSetting(
  registry: DestinationRegistry,
  handle: Queue | Topic,
  errorDestination: string | undefined,
): void {
  if (errorDestination === undefined) return;
  const of = `error destination '${errorDestination}' of '${handle.toString()}'`;
  let target: Queue | Topic;
  try {
    target = parseDestination(errorDestination);
  } catch {
    throw new InvalidDestinationError(`${of} is not valid (expected 'queue://name' or 'topic://name')`);
  }
  const key = target.toString();
  if (key === handle.toString())
    throw new InvalidDestinationError(
      `destination '${key}' cannot be its own error destination: its undeliverable messages would come straight back to it`,
    );
  const distributed = registry.distributed(key);
  if (distributed)
    throw new InvalidDestinationError(
      `${of} is a distributed destination: name one of its members instead (${distributed.members.map((m) => `'${m.state.handle.toString()}'`).join(', ')})`,
    );
  const member = registry.aliased(key);
  if (member)
    throw new InvalidDestinationError(
      `${of} is a member's alias: name the member itself, '${member.handle.toString()}'`,
    );
}

export class ErrorDestinations {
  readonly #context: ErrorDestinationsContext;
  /** Undeliverable messages waiting for room in a full error destination (DLV-3). */
  readonly #parking: ErrorDestinationParking;
  /** Messages moved to an error destination, ever. */
  messagesMoved = 0;
  /** Undeliverable messages deleted because their destination has no error destination (DLV-3). */
  messagesDiscarded = 0;

  constructor(context: ErrorDestinationsContext) {
    this.#context = context;
    this.#parking = new ErrorDestinationParking({
      timers: context.timers,
      logger: context.logger,
      now: () => context.now(),
      hasRoom: (target, size) => context.flowControl.hasRoom(target, size),
      move: (move, target) => this.#moveParked(move, target),
    });
  }

  /**
   * Moves an entry to its destination's error destination, keeping headers and properties and
   * recording origin, reason, delivery count and time (DLV-3, DLV-9); deletes it (counted and
   * logged) when there is none. An error destination over its quota is not written past: the
   * message is parked where it is, pending for no consumer, and moved once there is room.
   */
  move(backlog: Backlog, entry: Entry, reason: string, removal: Removal = 'deleted'): void {
    // Its destination was deleted after delivery: the message went with it (DST-6), whether it
    // was rejected as poison or used up its redeliveries, rather than surviving in the error destination.
    if (backlog.closed) {
      backlog.remove(entry, removal);
      return;
    }
    const { registry, flowControl } = this.#context;
    const errorName = registry.ownerOf(backlog)?.options.errorDestination;
    const target = errorName ? registry.findByKey(errorName) : undefined;
    if (!target) {
      this.#discard(backlog, entry, errorName, reason, removal);
      return;
    }
    // Behind those already waiting, so the error destination gets them in the order they failed.
    if (this.#parking.holds(target) || !flowControl.hasRoom(target, entry.size)) {
      this.#parking.park(target, { backlog, entry, reason, removal });
      return;
    }
    this.#copy(backlog, entry, target, reason, removal);
  }

  /** Some backlog drained: a full error destination may have room now. */
  drained(): void {
    this.#parking.drained();
  }

  /** Stops retrying parked moves (the engine closes). */
  close(): void {
    this.#parking.close();
  }

  /** A parked message's error destination has room (or was deleted meanwhile: then it is looked up again). */
  #moveParked(move: ParkedMove, target: DestinationState): void {
    if (target.deleted) this.move(move.backlog, move.entry, move.reason, move.removal);
    else this.#copy(move.backlog, move.entry, target, move.reason, move.removal);
  }

  #discard(
    backlog: Backlog,
    entry: Entry,
    errorName: string | undefined,
    reason: string,
    removal: Removal,
  ): void {
    this.messagesDiscarded++;
    const { registry, logger } = this.#context;
    const fields = {
      messageId: entry.id,
      destination: registry.ownerOf(backlog)?.handle.toString(),
      errorDestination: errorName,
      reason,
    };
    if (errorName)
      logger.error(fields, `undeliverable message deleted: error destination '${errorName}' does not exist`);
    else logger.warn(fields, 'undeliverable message deleted: no error destination');
    backlog.remove(entry, removal);
  }

  #copy(backlog: Backlog, entry: Entry, target: DestinationState, reason: string, removal: Removal): void {
    const { registry, storeLink, sendPipeline, ids, logger } = this.#context;
    const origin = registry.ownerOf(backlog)!.handle.toString();
    const moved = errorDestinationCopy(entry.stored.load(), {
      origin,
      reason,
      deliveryCount: entry.deliveryCount,
      now: this.#context.now(),
    });
    moved.setJMSDestination(target.handle);
    moved.setJMSExpiration(0);
    moved.setJMSDeliveryTime(0);
    const persistent = entry.stored.persistent && target.options.storeEnabled !== false;
    const stored = new StoredMessage(
      moved,
      ids.nextSeq(),
      moved.getSize(),
      persistent,
      entry.stored.connectionId,
      entry.stored.clientId,
    );
    const routed = sendPipeline.route(target, stored);
    // One batch: the copy is stored in the error destination and removed from here together.
    storeLink.writeLater(storeLink.sendRecords(stored, routed));
    backlog.remove(entry, removal);
    for (const r of routed) r.backlog.add(r.entry);
    this.messagesMoved++;
    if (logsDebug(logger))
      logger.debug(
        { messageId: entry.id, from: origin, to: target.handle.toString(), reason },
        'message moved to error destination',
      );
  }
}
