/**
 * Admission of sends (DLV-7, DLV-8): quotas per destination and gateway-wide, flow control that
 * slows producers between a high and a low threshold, and the IQ-Manager producer throttling
 * (`004`). A send that may not go in yet waits here (a throttled producer is paused this way);
 * it fails with a ResourceAllocation error when its send timeout runs out, or at once when the
 * timeout is 0, so a gateway that stays full or loaded shows as an error, not as a hang.
 *
 * An admitted send reserves the room it will take (messages and bytes) at once, and keeps it
 * until its entries are held by their backlogs, so sends admitted together cannot pass a quota
 * together while a store commit is under way. Waiting sends are let in oldest first, each only
 * when there is room for it, and none takes room an older send to the same place waits for.
 */
import type { ScheduledTimer, TimerQueue } from '../clock.js';
import { ResourceAllocationError } from '../errors.js';

/** Message and byte counts held (current + pending). */
export interface Held {
  readonly messages: number;
  readonly bytes: number;
}

/** Limits of one destination or of the whole gateway. */
export interface Quota {
  /** Most messages held; undefined = unlimited. */
  messagesMaximum?: number | undefined;
  /** Most bytes held; undefined = unlimited. */
  bytesMaximum?: number | undefined;
}

/**
 * Flow-control thresholds: while a destination holds more than `messagesHigh` (or `bytesHigh`)
 * producers are slowed, until it holds fewer than the low one.
 */
export interface FlowThresholds {
  /** Messages above which flow control starts. */
  messagesHigh?: number;
  /** Messages below which it stops. Default: `messagesHigh`. */
  messagesLow?: number;
  /** Bytes above which flow control starts. */
  bytesHigh?: number;
  /** Bytes below which it stops. Default: `bytesHigh`. */
  bytesLow?: number;
  /** How long each send waits while flow control is on, in ms. Default 50. */
  delayMs?: number;
}

/** Producer throttling as in the JMS IQ Manager (`004`, DLV-8). */
export interface ThrottlingOptions {
  /** Gateway-wide undelivered messages above which throttling may start. Default 100,000. */
  serverThreshold?: number;
  /** Undelivered messages of a destination above which its producers are paused (each send for up to its send timeout). Default 1,000. */
  destinationThreshold?: number;
  /** Throttling stops once the destination is below threshold minus lag. Default 100. */
  lag?: number;
}

/** Room admitted sends have claimed and not yet filled with entries. */
export interface Reserved {
  messages: number;
  bytes: number;
  /** Messages, as throttling counts them: a topic message once, however many entries it takes. */
  undelivered: number;
}

/** What admission needs to know about one destination. */
export interface AdmissionTarget {
  /** `queue://name`, for error messages. */
  readonly label: string;
  held(): Held;
  /** Messages not yet had by every subscriber, while throttling is on (DLV-8); undefined while it is off. */
  readonly undelivered: { readonly messages: number } | undefined;
  readonly quota: Quota;
  readonly thresholds: FlowThresholds | undefined;
  /** Room reserved by admitted sends whose entries are not held yet; kept here by admission. */
  readonly reserved: Reserved;
  /** Flow-control and throttling state, kept here between sends. */
  flowControlOn: boolean;
  throttled: boolean;
}

/** One destination a send goes to, and how many entries it takes there (a topic: one per subscription). */
export interface AdmissionPart {
  readonly target: AdmissionTarget;
  readonly entries: number;
}

/**
 * The room an admitted send holds. The sender releases it once the send's entries are held by
 * their backlogs (they count from then on), or when the send fails.
 */
export interface Admission {
  release(): void;
}

/** Why a send may not go in now. */
interface Refusal {
  readonly reason: 'destination' | 'server' | 'throttled';
  readonly target: AdmissionTarget;
}

interface Waiter {
  readonly request: Request;
  /** Why it waits, as last seen: the reason it fails with, and whom it holds up. */
  refusal: Refusal;
  resolve(admission: Admission): void;
  reject(error: Error): void;
  timer: ScheduledTimer | undefined;
}

/** A send flow control makes wait `delayMs` before it is admitted; deleting its destination cancels it. */
interface Slowed {
  readonly request: Request;
  reject(error: Error): void;
  timer: ScheduledTimer;
}

const THROTTLING_DEFAULTS: Required<ThrottlingOptions> = {
  serverThreshold: 100_000,
  destinationThreshold: 1_000,
  lag: 100,
};

/** What a send to a destination with nothing to check holds: nothing. */
const FREE: Admission = Object.freeze({ release() {} });

export class FlowControl {
  /** Waiting sends, oldest first. */
  readonly #waiters: Waiter[] = [];
  readonly #slowed = new Set<Slowed>();
  readonly #throttling: Required<ThrottlingOptions> | undefined;
  /** Room reserved against the gateway-wide quota. */
  readonly #reserved: Reserved = { messages: 0, bytes: 0, undelivered: 0 };
  /** Whether anything gateway-wide can hold a send back: a quota or throttling. */
  readonly #serverChecks: boolean;

  constructor(
    private readonly timers: TimerQueue,
    /** Gateway-wide held counts. */
    private readonly server: () => Held,
    /** Gateway-wide undelivered messages (throttling's server threshold). */
    private readonly serverUndelivered: () => number,
    private readonly serverQuota: Quota,
    throttling: ThrottlingOptions | boolean | undefined,
  ) {
    this.#throttling = throttling
      ? { ...THROTTLING_DEFAULTS, ...(throttling === true ? {} : throttling) }
      : undefined;
    this.#serverChecks = this.#throttling !== undefined || limits(serverQuota);
  }

  /** Resolved throttling settings, or undefined when throttling is off. */
  get throttling(): Required<ThrottlingOptions> | undefined {
    return this.#throttling;
  }

  /**
   * Admits a send of `size` bytes that takes `entries` entries in `target`. Returns the room it
   * holds when it may go at once (a destination with nothing to check costs nothing), else a
   * promise of it that rejects when the send may not go in.
   */
  admit(
    target: AdmissionTarget,
    entries: number,
    size: number,
    timeoutMs: number,
  ): Admission | Promise<Admission> {
    if (!this.#serverChecks && !checks(target)) return FREE;
    return this.#admit(new Request(this, target, entries, size), timeoutMs);
  }

  /** Admits a send that goes to several destinations (a distributed topic): all have room, or it waits. */
  admitAll(parts: readonly AdmissionPart[], size: number, timeoutMs: number): Admission | Promise<Admission> {
    if (!this.#serverChecks && parts.every((part) => !checks(part.target))) return FREE;
    const [first] = parts;
    if (!first) return FREE;
    return this.#admit(new Request(this, first.target, first.entries, size, parts), timeoutMs);
  }

  /** Whether `target` has room for one entry of `size` bytes under its quotas, now. */
  hasRoom(target: AdmissionTarget, size: number): boolean {
    return (
      !exceeds(target.held(), target.reserved, 1, size, target.quota) &&
      !exceeds(this.server(), this.#reserved, 1, size, this.serverQuota)
    );
  }

  /** Room was freed (messages left, a reservation ended): let in waiting sends that fit, oldest first. */
  changed(): void {
    if (this.#waiters.length === 0) return;
    const heldUp = new Set<AdmissionTarget>();
    let serverHeldUp = false;
    for (const waiter of [...this.#waiters]) {
      const { request } = waiter;
      if (!serverHeldUp && !request.parts.some((part) => heldUp.has(part.target))) {
        const refusal = this.#refusal(request);
        if (refusal === undefined || refusal === 'slow') {
          // It already waited for room: flow control does not slow it on top.
          this.#remove(waiter);
          waiter.timer?.cancel();
          waiter.resolve(request.hold());
          continue;
        }
        waiter.refusal = refusal;
      }
      // Still waiting: no younger send takes room it waits for.
      for (const part of request.parts) heldUp.add(part.target);
      if (waiter.refusal.reason === 'server') serverHeldUp = true;
    }
  }

  /** The destination was deleted: its blocked and slowed sends fail (DST-6). */
  cancel(target: AdmissionTarget): void {
    const error = () =>
      new ResourceAllocationError(
        `send cancelled: destination '${target.label}' was deleted while the send waited for room`,
      );
    for (const slowed of [...this.#slowed]) {
      if (!slowed.request.goesTo(target)) continue;
      this.#slowed.delete(slowed);
      slowed.timer.cancel();
      slowed.reject(error());
    }
    let cancelled = false;
    for (const waiter of [...this.#waiters]) {
      if (!waiter.request.goesTo(target)) continue;
      this.#remove(waiter);
      waiter.timer?.cancel();
      waiter.reject(error());
      cancelled = true;
    }
    // Sends behind the cancelled ones may fit now.
    if (cancelled) this.changed();
  }

  /** Sends waiting now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** @internal Counts room taken (or, negative, given back) against the gateway's quota and thresholds. */
  reserveOnServer(entries: number, bytes: number, undelivered: number): void {
    this.#reserved.messages += entries;
    this.#reserved.bytes += bytes;
    this.#reserved.undelivered += undelivered;
  }

  #admit(request: Request, timeoutMs: number): Admission | Promise<Admission> {
    const refusal = this.#waiterAhead(request) ?? this.#refusal(request);
    if (refusal === undefined) return request.hold();
    if (refusal === 'slow') return this.#slowDown(request, timeoutMs);
    return this.#wait(request, timeoutMs, timeoutMs, refusal);
  }

  #remove(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index >= 0) this.#waiters.splice(index, 1);
  }

  /** An older waiting send that wants room this one would take: this one queues behind it. */
  #waiterAhead(request: Request): Refusal | undefined {
    for (const waiter of this.#waiters) {
      if (waiter.refusal.reason === 'server') return waiter.refusal;
      if (request.parts.some((part) => waiter.request.goesTo(part.target))) return waiter.refusal;
    }
    return undefined;
  }

  /** Why a send may not go in: a quota it would exceed, throttling, 'slow' (flow control), or undefined. */
  #refusal(request: Request): Refusal | 'slow' | undefined {
    const { parts, size } = request;
    for (const { target, entries } of parts) {
      if (exceeds(target.held(), target.reserved, entries, size, target.quota))
        return { reason: 'destination', target };
    }
    if (exceeds(this.server(), this.#reserved, request.totalEntries, size, this.serverQuota))
      return { reason: 'server', target: request.target };
    if (this.#throttling) {
      for (const { target } of parts)
        if (this.#updateThrottle(target)) return { reason: 'throttled', target };
    }
    let slow = false;
    for (const { target } of parts) if (target.thresholds && this.#updateFlowControl(target)) slow = true;
    return slow ? 'slow' : undefined;
  }

  #wait(request: Request, timeoutMs: number, remainingMs: number, refusal: Refusal): Promise<Admission> {
    if (remainingMs <= 0) return Promise.reject(this.#fullError(refusal, timeoutMs));
    return new Promise<Admission>((resolve, reject) => {
      const waiter: Waiter = { request, refusal, resolve, reject, timer: undefined };
      waiter.timer = this.timers.after(remainingMs, () => {
        this.#remove(waiter);
        const now = this.#refusal(request);
        reject(this.#fullError(now !== undefined && now !== 'slow' ? now : waiter.refusal, timeoutMs));
        // It may have held up sends behind it that fit.
        this.changed();
      });
      this.#waiters.push(waiter);
    });
  }

  /** The gateway's undelivered messages as throttling counts them: sends admitted but not landed too. */
  #serverUndeliveredCount(): number {
    return this.serverUndelivered() + this.#reserved.undelivered;
  }

  /**
   * DLV-8: on when the gateway and the destination are both over their thresholds; off when
   * either is back under (the destination: under threshold minus lag). Both count undelivered
   * messages, as `004` does, and sends admitted but not yet landed.
   */
  #updateThrottle(target: AdmissionTarget): boolean {
    const t = this.#throttling!;
    const server = this.#serverUndeliveredCount();
    const undelivered = undeliveredCount(target);
    if (!target.throttled) {
      target.throttled = server > t.serverThreshold && undelivered > t.destinationThreshold;
    } else if (server < t.serverThreshold || undelivered < t.destinationThreshold - t.lag) {
      target.throttled = false;
    }
    return target.throttled;
  }

  /**
   * On once the destination holds more than a high threshold, off once it holds fewer than the
   * low one (messages and bytes alike): holding exactly a threshold changes nothing, as the
   * docs' "above" and "below" say. A missing low threshold is the high one.
   */
  #updateFlowControl(target: AdmissionTarget): boolean {
    const th = target.thresholds!;
    const held = target.held();
    const messages = held.messages + target.reserved.messages;
    const bytes = held.bytes + target.reserved.bytes;
    if (!target.flowControlOn) {
      target.flowControlOn =
        (th.messagesHigh !== undefined && messages > th.messagesHigh) ||
        (th.bytesHigh !== undefined && bytes > th.bytesHigh);
    } else {
      const belowMessages = th.messagesHigh === undefined || messages < (th.messagesLow ?? th.messagesHigh);
      const belowBytes = th.bytesHigh === undefined || bytes < (th.bytesLow ?? th.bytesHigh);
      if (belowMessages && belowBytes) target.flowControlOn = false;
    }
    return target.flowControlOn;
  }

  /** Flow control: the send is admitted after a delay, unless a quota (or an older send) stops it then. */
  #slowDown(request: Request, timeoutMs: number): Promise<Admission> {
    let delay = 0;
    for (const { target } of request.parts)
      if (target.flowControlOn) delay = Math.max(delay, target.thresholds?.delayMs ?? 50);
    return new Promise<Admission>((resolve, reject) => {
      const slowed: Slowed = {
        request,
        reject,
        timer: this.timers.after(delay, () => {
          this.#slowed.delete(slowed);
          const refusal = this.#waiterAhead(request) ?? this.#refusal(request);
          if (refusal === undefined || refusal === 'slow') resolve(request.hold());
          else resolve(this.#wait(request, timeoutMs, timeoutMs - delay, refusal));
        }),
      };
      this.#slowed.add(slowed);
    });
  }

  #fullError(refusal: Refusal, timeoutMs: number): ResourceAllocationError {
    const { reason, target } = refusal;
    if (reason === 'throttled') return this.#throttledError(target, timeoutMs);
    const what =
      reason === 'destination'
        ? `destination '${target.label}' is full (${describeQuota(target.quota)})`
        : `the gateway is full (${describeQuota(this.serverQuota)})`;
    return new ResourceAllocationError(
      `${what}: the send ${timeoutMs > 0 ? `waited ${timeoutMs} ms` : 'has a send timeout of 0'} and failed; consume messages or raise the quota`,
    );
  }

  /**
   * A throttled send paused for as long as its send timeout allows (DLV-8): says so, with the
   * thresholds and the counts they were compared with, and when sends resume.
   */
  #throttledError(target: AdmissionTarget, timeoutMs: number): ResourceAllocationError {
    const t = this.#throttling!;
    const server = this.#serverUndeliveredCount();
    const destination = undeliveredCount(target);
    const send =
      timeoutMs > 0
        ? `the send was paused for its send timeout of ${timeoutMs} ms and failed`
        : 'the send has a send timeout of 0, so it failed instead of pausing';
    return new ResourceAllocationError(
      `producers to '${target.label}' are throttled: the gateway holds ${server} undelivered messages (serverThreshold ${t.serverThreshold}) ` +
        `and the destination ${destination} (destinationThreshold ${t.destinationThreshold}); ${send}; ` +
        `sends resume once the gateway holds fewer than ${t.serverThreshold} or the destination fewer than ${t.destinationThreshold - t.lag} (destinationThreshold minus lag ${t.lag})`,
    );
  }
}

/**
 * A send asking for room: where it goes and, once admitted, the room it holds. A send to one
 * destination is its own one part, so asking costs one object and its one-element list.
 */
class Request implements Admission, AdmissionPart {
  readonly parts: readonly AdmissionPart[];
  /** Entries over every part: what the gateway-wide quota counts. */
  readonly totalEntries: number;
  #held = false;

  constructor(
    private readonly flow: FlowControl,
    readonly target: AdmissionTarget,
    readonly entries: number,
    readonly size: number,
    parts?: readonly AdmissionPart[],
  ) {
    this.parts = parts ?? [this];
    let total = 0;
    for (const part of this.parts) total += part.entries;
    this.totalEntries = total;
  }

  goesTo(target: AdmissionTarget): boolean {
    return this.parts.some((part) => part.target === target);
  }

  /** Takes the room: the send is admitted. */
  hold(): this {
    this.#count(1);
    this.#held = true;
    return this;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.#count(-1);
    // Usually the send's entries hold the room now; when the send failed it is free again.
    this.flow.changed();
  }

  #count(sign: 1 | -1): void {
    let undelivered = 0;
    for (const { target, entries } of this.parts) {
      if (entries === 0) continue;
      target.reserved.messages += sign * entries;
      target.reserved.bytes += sign * entries * this.size;
      target.reserved.undelivered += sign;
      undelivered += sign;
    }
    this.flow.reserveOnServer(sign * this.totalEntries, sign * this.totalEntries * this.size, undelivered);
  }
}

/** A destination's undelivered messages as throttling counts them: sends admitted but not landed too. */
function undeliveredCount(target: AdmissionTarget): number {
  return (target.undelivered?.messages ?? 0) + target.reserved.undelivered;
}

/** Whether a quota limits anything. */
function limits(quota: Quota): boolean {
  return quota.messagesMaximum !== undefined || quota.bytesMaximum !== undefined;
}

/** Whether admission has anything to check for sends to `target` itself. */
function checks(target: AdmissionTarget): boolean {
  return target.thresholds !== undefined || limits(target.quota);
}

/** Whether `entries` more entries of `size` bytes would pass the quota, counting room already reserved. */
function exceeds(held: Held, reserved: Reserved, entries: number, size: number, quota: Quota): boolean {
  if (entries === 0) return false;
  return (
    (quota.messagesMaximum !== undefined &&
      held.messages + reserved.messages + entries > quota.messagesMaximum) ||
    (quota.bytesMaximum !== undefined && held.bytes + reserved.bytes + entries * size > quota.bytesMaximum)
  );
}

function describeQuota(quota: Quota): string {
  const parts = [];
  if (quota.messagesMaximum !== undefined) parts.push(`messagesMaximum ${quota.messagesMaximum}`);
  if (quota.bytesMaximum !== undefined) parts.push(`bytesMaximum ${quota.bytesMaximum}`);
  return parts.join(', ');
}
