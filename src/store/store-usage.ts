/** What the file store takes, as its `maxBytes` counts it, and that bound (the store metrics). */
export interface StoreUsage {
  /** The database's pages and the large-body files. */
  bytes: number;
  /** Undefined without a bound. */
  maxBytes: number | undefined;
}
