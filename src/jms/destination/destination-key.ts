/** Published on its own so a destination's settings name it without naming the engine's entries. */

/** A destination's sort order: by a header or property, ascending or descending ("destination keys", DST-1). */
export interface DestinationKey {
  /** A header (`JMSPriority`, `JMSTimestamp`, ...) or property name. */
  property: string;
  direction: 'ascending' | 'descending';
}
