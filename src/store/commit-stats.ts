/** A store's counters of its commits, for tests and metrics: the same for every store that group-commits. */
export interface CommitStats {
  /** `commit` calls made. */
  commits: number;
  /** Transactions written: fewer than commits when group commit merged them. */
  transactions: number;
  /** Commits that failed. */
  failures: number;
}
