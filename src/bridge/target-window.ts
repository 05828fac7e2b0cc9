/**
 * How an exactly-once bridge's duplicate window keeps in step with its target (BRG-2), so that
 * after a crash or a lost confirm the window still knows what the target holds:
 *
 * - an engine destination whose store keeps the window takes the window's record in the same
 *   store commit as the message ({@link stagedTargetOf});
 * - a sink that can list what it committed (a transactional Kafka topic) refills the window at
 *   every connect ({@link rebuildFromTarget}).
 *
 * Any other target confirms first and the window records after: the gap docs/bridges.md names.
 */
import type { ForwardedIdsQuery, Sink } from '../spi/connector.js';
import { type DuplicateWindow, StoreDuplicateWindow } from './duplicate-window.js';
import { InternalSink } from './internal-endpoint.js';

/** A target that writes the window's record with the message: an internal sink and a window in its store. */
export interface StagedTarget {
  readonly sink: InternalSink;
  readonly window: StoreDuplicateWindow;
}

/** The staged target of a bridge, when its sink and window allow one. */
export function stagedTargetOf(window: DuplicateWindow | undefined, sink: Sink): StagedTarget | undefined {
  return window instanceof StoreDuplicateWindow &&
    sink instanceof InternalSink &&
    window.isKeptIn(sink.engine.store)
    ? { sink, window }
    : undefined;
}

/**
 * Asks a connected sink what it committed from earlier sends, as far back as the window keeps,
 * and adds that to the window. Resolves the number of ids added, or undefined when the sink (or
 * the window) cannot do this; rejects when the target could not be read.
 */
export async function rebuildFromTarget(
  window: DuplicateWindow,
  sink: Sink,
  now: number,
  signal: AbortSignal,
): Promise<number | undefined> {
  if (!window.seed || !window.bounds || !sink.forwardedIds) return undefined;
  const { maxEntries, maxAgeMs } = window.bounds;
  const query: ForwardedIdsQuery =
    maxAgeMs === undefined ? { maxEntries } : { maxEntries, notBefore: now - maxAgeMs };
  const seen = await sink.forwardedIds(query, signal);
  if (!seen) return undefined;
  // Oldest first, so a window smaller than what the target lists keeps the newest.
  window.seed([...seen].sort((a, b) => a.at - b.at));
  return seen.length;
}
