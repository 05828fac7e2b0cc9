/**
 * Waiting for a condition on events rather than on time: the condition is checked at once and
 * again after each event of the given sources (once the promise callbacks the event started have
 * run), never on a polling timer. The bound only turns a condition that never comes into a
 * failure naming it, instead of a test that hangs until the runner's timeout.
 */
import { settle } from './fake-clock.js';

/** Subscribes `wake` to something that may change the condition; returns the unsubscribe. */
export type ChangeSource = (wake: () => void) => () => void;

/** Status changes of a bridge (or of none, while it does not exist). */
export function statusChanges(
  bridge: { onStatusChange(listener: () => void): () => void } | undefined,
): ChangeSource {
  return (wake) => (bridge ? bridge.onStatusChange(wake) : () => {});
}

export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  sources: readonly ChangeSource[],
  boundMs = 10_000,
): Promise<void> {
  let changes = 0;
  let wake: (() => void) | undefined;
  const unsubscribe = sources.map((subscribe) =>
    subscribe(() => {
      changes++;
      wake?.();
    }),
  );
  let timedOut = false;
  const bound = setTimeout(() => {
    timedOut = true;
    wake?.();
  }, boundMs);
  try {
    for (;;) {
      const seen = changes;
      if (await condition()) return;
      if (timedOut) throw new Error(`${what} did not happen within ${boundMs} ms`);
      // A change while the condition was being read is not lost: it is checked again at once.
      if (changes === seen) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      await settle();
    }
  } finally {
    clearTimeout(bound);
    for (const stop of unsubscribe) stop();
  }
}
