/**
 * Admission of sends (DLV-7, DLV-8): quotas per destination and gateway-wide, flow control that
 * slows producers between a high and a low threshold, and the IQ-Manager producer throttling
 * (`004`). A send that may not go in yet waits here; it fails with a ResourceAllocation error
 * when its send timeout runs out, or at once when the timeout is 0.
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
  /** Undelivered messages of a destination above which its producers are paused. Default 1,000. */
  destinationThreshold?: number;
  /** Throttling stops once the destination is below threshold minus lag. Default 100. */
  lag?: number;
}

/** What admission needs to know about one destination. */
export interface AdmissionTarget {
  /** `queue://name`, for error messages. */
  readonly label: string;
  held(): Held;
  readonly quota: Quota;
  readonly thresholds: FlowThresholds | undefined;
  /** Flow-control and throttling state, kept here between sends. */
  flowControlOn: boolean;
  throttled: boolean;
}

interface Waiter {
  target: AdmissionTarget;
  size: number;
  resolve(): void;
  reject(error: Error): void;
  timer: ScheduledTimer | undefined;
}

const THROTTLING_DEFAULTS: Required<ThrottlingOptions> = {
  serverThreshold: 100_000,
  destinationThreshold: 1_000,
  lag: 100,
};

export class FlowControl {
  readonly #waiters: Waiter[] = [];
  readonly #throttling: Required<ThrottlingOptions> | undefined;

  constructor(
    private readonly timers: TimerQueue,
    /** Gateway-wide held counts. */
    private readonly server: () => Held,
    private readonly serverQuota: Quota,
    throttling: ThrottlingOptions | boolean | undefined,
  ) {
    this.#throttling = throttling
      ? { ...THROTTLING_DEFAULTS, ...(throttling === true ? {} : throttling) }
      : undefined;
  }

  /** Resolved throttling settings, or undefined when throttling is off. */
  get throttling(): Required<ThrottlingOptions> | undefined {
    return this.#throttling;
  }

  /**
   * Lets a send of `size` bytes into `target` go on. Returns undefined when it may go at once
   * (the hot path allocates nothing), else a promise that settles when it may, or rejects.
   */
  admit(target: AdmissionTarget, size: number, timeoutMs: number): Promise<void> | undefined {
    const wait = this.#mustWait(target, size);
    if (wait === undefined) return undefined;
    if (wait === 'slow') return this.#slowDown(target, size, timeoutMs);
    if (timeoutMs <= 0) return Promise.reject(this.#fullError(target, wait, timeoutMs));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { target, size, resolve, reject, timer: undefined };
      waiter.timer = this.timers.after(timeoutMs, () => {
        this.#remove(waiter);
        reject(this.#fullError(target, this.#mustWait(target, size) ?? wait, timeoutMs));
      });
      this.#waiters.push(waiter);
    });
  }

  /** Whether `target` has room for a message of `size` bytes under its quotas, now. */
  hasRoom(target: AdmissionTarget, size: number): boolean {
    return !exceeds(target.held(), size, target.quota) && !exceeds(this.server(), size, this.serverQuota);
  }

  /** Messages left some destination: wake the sends that may now go in, oldest first. */
  changed(): void {
    if (this.#waiters.length === 0) return;
    for (const waiter of [...this.#waiters]) {
      const wait = this.#mustWait(waiter.target, waiter.size);
      if (wait !== undefined && wait !== 'slow') continue;
      this.#remove(waiter);
      waiter.timer?.cancel();
      waiter.resolve();
    }
  }

  /** The destination was deleted: its blocked sends fail (DST-6). */
  cancel(target: AdmissionTarget): void {
    for (const waiter of [...this.#waiters]) {
      if (waiter.target !== target) continue;
      this.#remove(waiter);
      waiter.timer?.cancel();
      waiter.reject(
        new ResourceAllocationError(
          `send cancelled: destination '${target.label}' was deleted while the send waited for room`,
        ),
      );
    }
  }

  /** Sends waiting now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  #remove(waiter: Waiter): void {
    const index = this.#waiters.indexOf(waiter);
    if (index >= 0) this.#waiters.splice(index, 1);
  }

  /** Why a send must wait: a quota it would exceed, throttling, 'slow' (flow control), or undefined. */
  #mustWait(
    target: AdmissionTarget,
    size: number,
  ): 'destination' | 'server' | 'throttled' | 'slow' | undefined {
    const held = target.held();
    if (exceeds(held, size, target.quota)) return 'destination';
    if (exceeds(this.server(), size, this.serverQuota)) return 'server';
    if (this.#throttling && this.#updateThrottle(target, held)) return 'throttled';
    if (target.thresholds && this.#updateFlowControl(target, held)) return 'slow';
    return undefined;
  }

  /** DLV-8: on when server and destination are both over; off when either is back under (destination: under threshold minus lag). */
  #updateThrottle(target: AdmissionTarget, held: Held): boolean {
    const t = this.#throttling!;
    const server = this.server().messages;
    if (!target.throttled) {
      target.throttled = server > t.serverThreshold && held.messages > t.destinationThreshold;
    } else if (server < t.serverThreshold || held.messages < t.destinationThreshold - t.lag) {
      target.throttled = false;
    }
    return target.throttled;
  }

  /**
   * On once the destination holds more than a high threshold, off once it holds fewer than the
   * low one (messages and bytes alike): holding exactly a threshold changes nothing, as the
   * docs' "above" and "below" say. A missing low threshold is the high one.
   */
  #updateFlowControl(target: AdmissionTarget, held: Held): boolean {
    const th = target.thresholds!;
    if (!target.flowControlOn) {
      target.flowControlOn =
        (th.messagesHigh !== undefined && held.messages > th.messagesHigh) ||
        (th.bytesHigh !== undefined && held.bytes > th.bytesHigh);
    } else {
      const belowMessages =
        th.messagesHigh === undefined || held.messages < (th.messagesLow ?? th.messagesHigh);
      const belowBytes = th.bytesHigh === undefined || held.bytes < (th.bytesLow ?? th.bytesHigh);
      if (belowMessages && belowBytes) target.flowControlOn = false;
    }
    return target.flowControlOn;
  }

  /** Flow control: the send goes in after a delay (or sooner if the destination drains), unless a quota stops it. */
  #slowDown(target: AdmissionTarget, size: number, timeoutMs: number): Promise<void> {
    const delay = target.thresholds?.delayMs ?? 50;
    return new Promise<void>((resolve) => this.timers.after(delay, resolve)).then(() => {
      const wait = this.#mustWait(target, size);
      if (wait === undefined || wait === 'slow') return undefined;
      return this.admit(target, size, Math.max(0, timeoutMs - delay));
    });
  }

  #fullError(target: AdmissionTarget, why: string, timeoutMs: number): ResourceAllocationError {
    const what =
      why === 'destination'
        ? `destination '${target.label}' is full (${describeQuota(target.quota)})`
        : why === 'server'
          ? `the gateway is full (${describeQuota(this.serverQuota)})`
          : `producers to '${target.label}' are throttled (the gateway holds more than ${this.#throttling?.serverThreshold} undelivered messages and the destination more than ${this.#throttling?.destinationThreshold})`;
    return new ResourceAllocationError(
      `${what}: the send ${timeoutMs > 0 ? `waited ${timeoutMs} ms` : 'has a send timeout of 0'} and failed; consume messages or raise the quota`,
    );
  }
}

function exceeds(held: Held, size: number, quota: Quota): boolean {
  return (
    (quota.messagesMaximum !== undefined && held.messages + 1 > quota.messagesMaximum) ||
    (quota.bytesMaximum !== undefined && held.bytes + size > quota.bytesMaximum)
  );
}

function describeQuota(quota: Quota): string {
  const parts = [];
  if (quota.messagesMaximum !== undefined) parts.push(`messagesMaximum ${quota.messagesMaximum}`);
  if (quota.bytesMaximum !== undefined) parts.push(`bytesMaximum ${quota.bytesMaximum}`);
  return parts.join(', ');
}
