/**
 * SIGHUP reloads the configuration file. Signals are not lost: one that comes while a reload runs
 * is followed by one more reload, so the file as it is after the last signal is what runs. A
 * reload through the admin API that is running when the signal comes read the file before it:
 * the signal waits for that one to finish and then reads the file again, instead of being refused.
 */
import type { Gateway } from './gateway.js';

export function reloadOnSignal(
  gateway: Pick<Gateway, 'reload' | 'reloadFinished'>,
  logger: { warn(fields: object, message: string): void },
): () => void {
  let again = false;
  let running = false;
  return () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    void (async () => {
      do {
        await gateway.reloadFinished();
        // Signals up to here are served by the read below; one during it asks for another round.
        again = false;
        // The gateway logs the outcome; refused now only while it stops.
        await gateway.reload().catch((error: unknown) => {
          logger.warn({ err: error, signal: 'SIGHUP' }, 'reload refused');
        });
      } while (again);
      running = false;
    })();
  };
}
