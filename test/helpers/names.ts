import { randomUUID } from 'node:crypto';

/**
 * A name no other test (or earlier run against the same broker) uses: `${prefix}-${uuid}`.
 * Use it for queues, topics, consumer groups and client ids so tests never share broker state.
 */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID()}`;
}
