/** Waiting on the injected clock, cancellable by an AbortSignal: the runtime never sleeps on real time. */
import type { Clock } from '../jms/clock.js';

/** Resolves after `ms` on `clock`, or at once (without error) when `signal` aborts. Returns whether the full time passed. */
export function wait(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = () => {
      clock.clearTimer(handle);
      resolve(false);
    };
    const handle = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
