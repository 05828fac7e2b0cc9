/**
 * A FIFO that `receive` waits on: items pushed by broker callbacks are taken in order; a taker
 * waits until one arrives, the queue fails (connection lost, closed) or its signal aborts.
 */
export class WaitingQueue<T> {
  readonly #items: T[] = [];
  readonly #takers: Array<{ resolve: (item: T) => void; reject: (error: unknown) => void }> = [];
  #failure: Error | undefined;

  /** Number of items waiting to be taken. */
  get size(): number {
    return this.#items.length;
  }

  /** Hands an item to the oldest taker, or keeps it. Ignored once failed. */
  push(item: T): void {
    if (this.#failure !== undefined) return;
    const taker = this.#takers.shift();
    if (taker) taker.resolve(item);
    else this.#items.push(item);
  }

  /** Puts an item back at the front, to be taken next. */
  pushFront(item: T): void {
    if (this.#failure !== undefined) return;
    const taker = this.#takers.shift();
    if (taker) taker.resolve(item);
    else this.#items.unshift(item);
  }

  /** The next item; waits for one. Rejects with the failure, or the signal's reason on abort. */
  take(signal: AbortSignal): Promise<T> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (signal.aborted) return Promise.reject(signal.reason as unknown);
    const item = this.#items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise<T>((resolve, reject) => {
      const taker = {
        resolve: (value: T) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        reject: (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = (): void => {
        const index = this.#takers.indexOf(taker);
        if (index >= 0) this.#takers.splice(index, 1);
        reject(signal.reason as unknown);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#takers.push(taker);
    });
  }

  /**
   * Up to `max` items: waits as {@link take} does for the first, then takes what is already
   * waiting, without waiting for more.
   */
  async takeUpTo(max: number, signal: AbortSignal): Promise<T[]> {
    const first = await this.take(signal);
    const rest = this.#items.splice(0, Math.max(0, Math.floor(max) - 1));
    return [first, ...rest];
  }

  /** Fails every waiting and later take with `error`, and drops the items; returns them. */
  fail(error: Error): T[] {
    this.#failure ??= error;
    for (const taker of this.#takers.splice(0)) taker.reject(error);
    return this.#items.splice(0);
  }
}
