/**
 * Delivery times (DLV-5, DLV-6): when a sent message becomes deliverable, the destination's
 * TimeToDeliverOverride winning over the producer's delivery delay. Schedules are parsed once
 * per text, not per send, and an invalid one is refused when the destination is created.
 */
import type { DestinationState } from '../destination/destination-state.js';
import { type DestinationOptions, deliveryTimeOverrideOf } from '../destination/destination-options.js';
import { type Schedule, parseSchedule } from '../schedule.js';

export class DeliveryTimes {
  readonly #schedules = new Map<string, Schedule>();

  /** Refuses an invalid TimeToDeliverOverride schedule, with its position (DLV-6). */
  check(options: DestinationOptions): void {
    const deliveryTime = deliveryTimeOverrideOf(options.timeToDeliverOverride);
    if (deliveryTime.kind === 'schedule') this.#schedule(deliveryTime.schedule);
  }

  /** The absolute delivery time of a send made `now` with the producer's `deliveryDelay`. */
  timeFor(state: DestinationState, now: number, deliveryDelay: number): number {
    const override = state.deliveryTimeOverride;
    if (override.kind === 'schedule') return this.#schedule(override.schedule).nextScheduledTime(now);
    return now + (override.kind === 'relative' ? override.ms : deliveryDelay);
  }

  #schedule(text: string): Schedule {
    let schedule = this.#schedules.get(text);
    if (!schedule) this.#schedules.set(text, (schedule = parseSchedule(text)));
    return schedule;
  }
}
