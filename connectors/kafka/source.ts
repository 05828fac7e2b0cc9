/**
 * Reads a Kafka topic in a consumer group and hands each record to the bridge as a Delivery,
 * with `orderingKey` = `<topic>/<partition>`.
 *
 * Offsets: automatic commits are off. Each partition has a {@link PartitionTrack}; the source
 * commits a partition's position only past records the bridge has settled, i.e. the offset after
 * the longest settled prefix. A restart resumes at the first unsettled record.
 *
 * Retry: `settle({ kind: 'retry' })` rewinds the partition (a seek) so that record and every
 * later one come again in order; other partitions go on. The runtime has waited its backoff
 * before it settles, and keeps the partition's later records behind the retried one (ORD-3).
 * The waits for buffer space and the spacing of fetches run on the context's clock (default:
 * the system's timers).
 *
 * Lost consumer (crash, broker unreachable after the client's retries): `receive` rejects with
 * NotConnectedError, every handed-out delivery becomes stale (its settle does nothing; the
 * group's committed position brings the record back) and `connect` starts a new consumer.
 *
 * Rebalance: the group takes partitions away and gives them back (kafkajs uses the eager
 * protocol: all of them, every time). A partition that stays with this member keeps its state
 * (handed-out deliveries stay valid, reading goes on where it was, no duplicates); one that
 * leaves drops its read-ahead records, and its handed-out deliveries become stale (the new owner
 * reads from the committed position, at-least-once). A rebalance does not fail `receive`: the
 * bridge runtime answers NotConnectedError by closing and reconnecting, and a member that leaves
 * and rejoins makes every other member rebalance, which would make them leave and rejoin in turn.
 */
import type { Consumer, EachBatchPayload, KafkaMessage } from 'kafkajs';
import { EndpointConfigurationError, NotConnectedError } from '../../src/spi/index.js';
import type { ConnectorContext, Delivery, Outcome, Source } from '../../src/spi/index.js';
import { createConsumer, defaultClientId, disconnectFully } from './client.js';
import { ensureTopic } from './create-topic.js';
import { classifyConnectionError } from './errors.js';
import { recordToMessage } from './mapping.js';
import { PartitionTrack } from './partition-track.js';
import type { KafkaConfig } from './spec.js';

type Clock = NonNullable<ConnectorContext['clock']>;

/** The clock of a context that brings none: the system's time and timers. */
const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (callback, ms) => setTimeout(callback, ms),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The least time between two fetches that bring a partition's records, ms: see `#spaceFetches`. */
const MIN_FETCH_INTERVAL_MS = 2;

type State = 'idle' | 'connecting' | 'running' | 'failed' | 'closed';

/** A delivery waiting in the read-ahead buffer. */
interface Buffered {
  readonly delivery: Delivery;
  readonly track: PartitionTrack;
  readonly partition: number;
  readonly offset: bigint;
}

interface Receiver {
  resolve(delivery: Delivery): void;
  reject(error: unknown): void;
}

/** A Kafka source; see the module comment for the offset, retry and rebalance rules. */
export class KafkaSource implements Source {
  readonly #config: KafkaConfig;
  readonly #context: ConnectorContext;
  readonly #clock: Clock;
  #consumer: Consumer | undefined;
  #state: State = 'idle';
  /** Why `receive` rejects while failed. */
  #failure: Error | undefined;
  /** The state of each partition this member reads; a delivery is valid while its track is here. */
  readonly #tracks = new Map<number, PartitionTrack>();
  /** Partitions whose seek kafkajs may not have applied yet (kafkajs keeps seeks across rebalances). */
  readonly #seeksPending = new Set<number>();
  /**
   * Partitions that left with a seek kafkajs may still hold, and the position to seek to should
   * they come back, so that the stale seek cannot skip records another member has not committed.
   */
  readonly #lingeringSeeks = new Map<number, bigint>();
  /** When each partition's last batch was read ahead (on the clock), to space fetches out. */
  readonly #lastBatchAt = new Map<number, number>();
  /** Each partition's high watermark as of its last fetch, for {@link KafkaSource.backlog}. */
  readonly #highWatermarks = new Map<number, bigint>();
  /** Bumped when the group rebalances: a batch fetched before then is not handed out. */
  #membership = 0;
  #joined = false;
  #joinWaiters: Array<(error?: Error) => void> = [];
  readonly #buffer: Buffered[] = [];
  #receivers: Receiver[] = [];
  #spaceWaiters: Array<() => void> = [];
  #commitChain: Promise<void> = Promise.resolve();
  #commitScheduled: Promise<void> | undefined;

  constructor(config: KafkaConfig, context: ConnectorContext) {
    this.#config = config;
    this.#context = context;
    this.#clock = context.clock ?? systemClock;
  }

  async connect(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#state === 'running') return;
    await this.#stopConsumer();
    this.#state = 'connecting';
    this.#failure = undefined;
    const { createTopic } = this.#config;
    if (createTopic !== undefined) {
      try {
        await ensureTopic({ ...this.#config, createTopic }, this.#context, signal);
      } catch (error) {
        this.#state = 'failed';
        throw error;
      }
    }
    const consumer = this.#createConsumer();
    this.#consumer = consumer;
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [this.#config.topic], fromBeginning: this.#config.fromBeginning });
      const joined = this.#waitForJoin(signal);
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        eachBatch: (payload) => this.#eachBatch(payload),
      });
      await joined;
      // Closed (or replaced) while it connected: close() could not reach this consumer's
      // connections before they were open, so they are closed here.
      if (this.#consumer !== consumer)
        throw new NotConnectedError(`kafka source for '${this.#config.topic}' is closed`);
    } catch (error) {
      if (this.#consumer === consumer) this.#consumer = undefined;
      if (this.#state === 'connecting') this.#state = 'failed';
      await disconnectFully(consumer);
      if (signal.aborted) throw signal.reason as unknown;
      throw classifyConnectionError(error, `connecting to kafka topic '${this.#config.topic}'`);
    }
    this.#state = 'running';
    this.#context.logger.info({ topic: this.#config.topic }, 'kafka source connected');
  }

  receive(signal: AbortSignal): Promise<Delivery> {
    if (signal.aborted) return Promise.reject(signal.reason as unknown);
    if (this.#state !== 'running')
      return Promise.reject(
        this.#failure ?? new NotConnectedError(`kafka source for '${this.#config.topic}' is not connected`),
      );
    const next = this.#buffer.shift();
    if (next !== undefined) {
      this.#wakeSpaceWaiters();
      return Promise.resolve(this.#handOut(next));
    }
    return new Promise<Delivery>((resolve, reject) => {
      const onAbort = (): void => {
        this.#receivers = this.#receivers.filter((r) => r !== receiver);
        reject(signal.reason as unknown);
      };
      const receiver: Receiver = {
        resolve: (delivery) => {
          signal.removeEventListener('abort', onAbort);
          resolve(delivery);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#receivers.push(receiver);
    });
  }

  /**
   * Up to `max` deliveries in receive order: waits as `receive` does for the first, then takes
   * what the read-ahead buffer already holds (at most `prefetch` records) without waiting.
   */
  async receiveBatch(max: number, signal: AbortSignal): Promise<readonly Delivery[]> {
    if (!Number.isSafeInteger(max) || max < 1)
      throw new RangeError(`receiveBatch: max must be a positive integer, got ${max}`);
    const first = await this.receive(signal);
    const batch = [first];
    while (batch.length < max && this.#state === 'running') {
      const next = this.#buffer.shift();
      if (next === undefined) break;
      batch.push(this.#handOut(next));
    }
    if (batch.length > 1) this.#wakeSpaceWaiters();
    return batch;
  }

  /**
   * Records not yet handed to the bridge: the read-ahead buffer plus, per partition this member
   * reads, the high watermark of its last fetch less the next offset to read. Approximate: the
   * watermark is as fresh as the last fetch, and offsets that
   * hold no record (transaction markers, compacted records) count.
   */
  backlog(): number | undefined {
    if (this.#state !== 'running') return undefined;
    let behind = 0n;
    for (const [partition, track] of this.#tracks) {
      const highWatermark = this.#highWatermarks.get(partition);
      const next = track.resumePosition();
      if (highWatermark !== undefined && next !== undefined && highWatermark > next)
        behind += highWatermark - next;
    }
    return this.#buffer.length + Number(behind);
  }

  /** Commits what is settled, then leaves the group; unsettled records come again to the next reader. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    const wasRunning = this.#state === 'running';
    this.#state = 'closed';
    const closed = new NotConnectedError(`kafka source for '${this.#config.topic}' is closed`);
    this.#rejectReaders(closed);
    for (const waiter of this.#joinWaiters.splice(0)) waiter(closed);
    if (wasRunning) {
      await this.#commit().catch((error: unknown) => {
        this.#context.logger.warn(
          { topic: this.#config.topic, error: String(error) },
          'kafka source could not commit settled offsets on close; they will be read again',
        );
      });
    }
    await this.#stopConsumer();
    this.#context.logger.info({ topic: this.#config.topic }, 'kafka source closed');
  }

  // --- the consumer and its group ---

  #createConsumer(): Consumer {
    const config = this.#config;
    const consumer = createConsumer(config, this.#context, {
      groupId: config.groupId ?? defaultClientId(this.#context),
      sessionTimeout: config.sessionTimeout,
      heartbeatInterval: config.heartbeatInterval,
      rebalanceTimeout: config.rebalanceTimeout,
      readUncommitted: config.readUncommitted,
      maxWaitTimeInMs: config.fetchMaxWait,
      allowAutoTopicCreation: false,
      // The bridge runtime reconnects with its own backoff (BRG-5); kafkajs must not restart behind it.
      retry: { retries: config.retries, restartOnFailure: () => Promise.resolve(false) },
    });
    consumer.on(consumer.events.REBALANCING, () => {
      if (this.#consumer !== consumer) return;
      this.#membership++;
      this.#context.logger.info({ topic: config.topic }, 'kafka source: the consumer group is rebalancing');
    });
    consumer.on(consumer.events.GROUP_JOIN, (event) => {
      if (this.#consumer !== consumer) return;
      const partitions = event.payload.memberAssignment[config.topic] ?? [];
      this.#membership++;
      this.#assign(consumer, new Set(partitions));
      this.#joined = true;
      this.#context.logger.info(
        { topic: config.topic, partitions },
        'kafka source joined its consumer group',
      );
      for (const waiter of this.#joinWaiters.splice(0)) waiter();
    });
    consumer.on(consumer.events.CRASH, (event) => {
      if (this.#consumer !== consumer) return;
      const error = classifyConnectionError(event.payload.error, `reading kafka topic '${config.topic}'`);
      this.#context.logger.warn(
        { topic: config.topic, error: error.message },
        'kafka source lost its consumer',
      );
      this.#consumer = undefined;
      // A crashed consumer keeps its broker connections open (kafkajs does not restart it, by our
      // choice): close them, or they outlive the source and keep the process alive.
      void disconnectFully(consumer);
      this.#forgetAll();
      if (this.#state === 'running' || this.#state === 'connecting') {
        this.#state = 'failed';
        this.#failure = error;
      }
      this.#rejectReaders(error);
      for (const waiter of this.#joinWaiters.splice(0)) waiter(error);
    });
    return consumer;
  }

  /**
   * The group gave this member `assigned`: partitions that stayed go on where they were, those
   * that left are forgotten. Called from kafkajs's GROUP_JOIN, before it fetches again.
   */
  #assign(consumer: Consumer, assigned: ReadonlySet<number>): void {
    for (const [partition, track] of [...this.#tracks]) {
      if (assigned.has(partition)) continue;
      this.#tracks.delete(partition);
      this.#highWatermarks.delete(partition);
      if (this.#seeksPending.delete(partition)) {
        const position = track.restartPosition();
        if (position !== undefined) this.#lingeringSeeks.set(partition, position);
      }
      this.#dropBuffered((b) => b.partition === partition);
    }
    for (const partition of assigned) {
      const track = this.#tracks.get(partition);
      // kafkajs starts every assigned partition afresh from the committed offset.
      const position = track?.resumePosition() ?? this.#lingeringSeeks.get(partition);
      this.#lingeringSeeks.delete(partition);
      if (position !== undefined) this.#seek(consumer, partition, position);
    }
  }

  #waitForJoin(signal: AbortSignal): Promise<void> {
    if (this.#joined) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.#joinWaiters = this.#joinWaiters.filter((w) => w !== waiter);
        reject(signal.reason as unknown);
      };
      const waiter = (error?: Error): void => {
        signal.removeEventListener('abort', onAbort);
        if (error === undefined) resolve();
        else reject(error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#joinWaiters.push(waiter);
    });
  }

  /** The consumer is gone: its positions and seeks go with it; the group's committed offsets remain. */
  #forgetAll(): void {
    this.#tracks.clear();
    this.#highWatermarks.clear();
    this.#lastBatchAt.clear();
    this.#seeksPending.clear();
    this.#lingeringSeeks.clear();
    this.#joined = false;
    this.#membership++;
  }

  async #stopConsumer(): Promise<void> {
    const consumer = this.#consumer;
    this.#consumer = undefined;
    this.#forgetAll();
    this.#buffer.length = 0;
    this.#wakeSpaceWaiters();
    if (consumer !== undefined) await disconnectFully(consumer);
  }

  // --- reading ---

  async #eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch } = payload;
    const partition = batch.partition;
    const membership = this.#membership;
    if (!payload.isStale()) this.#seeksPending.delete(partition); // kafkajs applied our seek
    let track = this.#tracks.get(partition);
    if (track === undefined) {
      track = new PartitionTrack();
      this.#tracks.set(partition, track);
    }
    this.#highWatermarks.set(partition, BigInt(batch.highWatermark));
    const epoch = track.epoch;
    const current = (): boolean =>
      payload.isRunning() &&
      !payload.isStale() &&
      this.#membership === membership &&
      this.#tracks.get(partition) === track &&
      track.epoch === epoch &&
      (this.#state === 'running' || this.#state === 'connecting');
    for (const record of batch.messages) {
      if (!current()) return;
      // Checked here first: an await per record, with room to spare, cost a promise and a
      // microtask turn each.
      if (this.#buffer.length >= this.#config.prefetch) {
        await this.#waitForSpace(() => payload.heartbeat(), current);
        if (!current()) return;
      }
      const offset = BigInt(record.offset);
      if (track.admit(offset) === 'deliver') {
        const delivery = this.#delivery(batch.topic, partition, record, track, epoch);
        this.#push({ delivery, track, partition, offset });
      }
      payload.resolveOffset(record.offset);
    }
    await this.#spaceFetches(partition);
  }

  /**
   * Returning from `eachBatch` makes kafkajs fetch again at once. A bridge that keeps up reads
   * every record as it arrives, so without a pause each fetch brings one or two records, and the
   * fetch loop (with the broker's side of it) takes the CPU the sends need: at a steady half of
   * the maximum rate such a bridge fell behind. A partition fetched again within
   * {@link MIN_FETCH_INTERVAL_MS} of its last batch waits out the rest first, so the next fetch
   * brings what arrived meanwhile; a batch that took longer to read ahead waits for nothing.
   */
  async #spaceFetches(partition: number): Promise<void> {
    const now = this.#clock.now();
    const last = this.#lastBatchAt.get(partition);
    this.#lastBatchAt.set(partition, now);
    if (last === undefined || now - last >= MIN_FETCH_INTERVAL_MS) return;
    // A clock set back makes `now - last` negative: the wait is still never longer than the interval.
    const waitMs = Math.min(MIN_FETCH_INTERVAL_MS, MIN_FETCH_INTERVAL_MS - (now - last));
    await new Promise<void>((resolve) => this.#clock.setTimer(resolve, waitMs));
    this.#lastBatchAt.set(partition, this.#clock.now());
  }

  async #waitForSpace(heartbeat: () => Promise<void>, current: () => boolean): Promise<void> {
    while (this.#buffer.length >= this.#config.prefetch && current()) {
      await new Promise<void>((resolve) => {
        const clock = this.#clock;
        const timer = clock.setTimer(wake, this.#config.heartbeatInterval);
        function wake(): void {
          clock.clearTimer(timer);
          resolve();
        }
        this.#spaceWaiters.push(wake);
      });
      // The bridge is slow: keep the group membership while waiting. Throws when the group
      // rebalances, which hands control back to kafkajs to rejoin.
      if (this.#buffer.length >= this.#config.prefetch && current()) await heartbeat();
    }
  }

  #wakeSpaceWaiters(): void {
    for (const wake of this.#spaceWaiters.splice(0)) wake();
  }

  #push(buffered: Buffered): void {
    const receiver = this.#state === 'running' ? this.#receivers.shift() : undefined;
    if (receiver !== undefined) receiver.resolve(this.#handOut(buffered));
    else this.#buffer.push(buffered);
  }

  #handOut(buffered: Buffered): Delivery {
    // Kafka has no redelivered flag: a record the bridge receives again after a retry is one
    // (the codec leaves JMSRedelivered to the source).
    if (buffered.track.handOut(buffered.offset)) buffered.delivery.message.setJMSRedelivered(true);
    return buffered.delivery;
  }

  #dropBuffered(drop: (buffered: Buffered) => boolean): void {
    const kept = this.#buffer.filter((buffered) => !drop(buffered));
    this.#buffer.splice(0, this.#buffer.length, ...kept);
    this.#wakeSpaceWaiters();
  }

  #rejectReaders(error: Error): void {
    this.#buffer.length = 0;
    for (const receiver of this.#receivers.splice(0)) receiver.reject(error);
    this.#wakeSpaceWaiters();
  }

  #delivery(
    topic: string,
    partition: number,
    record: KafkaMessage,
    track: PartitionTrack,
    epoch: number,
  ): Delivery {
    const offset = BigInt(record.offset);
    let settled = false;
    return {
      message: recordToMessage(
        { topic, partition, ...record },
        {
          foreignBody: this.#config.foreignBody,
          ...(this.#config.keyProperty !== undefined ? { keyProperty: this.#config.keyProperty } : {}),
          onMappingError: (error) =>
            this.#context.logger.warn(
              { topic, partition, offset: record.offset, error: error.message },
              'kafka record has malformed gateway headers; delivered as a foreign record',
            ),
        },
      ),
      orderingKey: `${topic}/${partition}`,
      settle: (outcome: Outcome): Promise<void> => {
        if (settled)
          return Promise.reject(
            new Error(`kafka record ${topic}/${partition}@${offset} was already settled`),
          );
        settled = true;
        return this.#settle(track, partition, offset, epoch, outcome);
      },
    };
  }

  // --- settling ---

  async #settle(
    track: PartitionTrack,
    partition: number,
    offset: bigint,
    epoch: number,
    outcome: Outcome,
  ): Promise<void> {
    // The partition left this member, or the consumer was lost: the committed position brings it back.
    if (this.#tracks.get(partition) !== track || this.#state === 'closed') return;
    if (outcome.kind === 'retry') {
      if (track.rewind(offset, epoch)) this.#rewind(partition, offset);
      return;
    }
    if (track.settle(offset)) await this.#commit();
  }

  /** Reads `partition` again from `offset`: what was read ahead of it is dropped. */
  #rewind(partition: number, offset: bigint): void {
    const consumer = this.#consumer;
    if (consumer === undefined) return;
    this.#dropBuffered((b) => b.partition === partition && b.offset >= offset);
    this.#seek(consumer, partition, offset);
  }

  #seek(consumer: Consumer, partition: number, offset: bigint): void {
    try {
      consumer.seek({ topic: this.#config.topic, partition, offset: offset.toString() });
      this.#seeksPending.add(partition);
    } catch (error) {
      // Only when the consumer stopped meanwhile: the next one starts from the committed position.
      this.#context.logger.debug({ partition, error: String(error) }, 'kafka source could not seek');
    }
  }

  // --- committing ---

  /**
   * Commits every partition's settled position. Calls made while a commit is on its way share
   * the next one, so a burst of settles costs two round trips, not one each.
   */
  #commit(): Promise<void> {
    if (this.#commitScheduled !== undefined) return this.#commitScheduled;
    const next = this.#commitChain.then(() => {
      this.#commitScheduled = undefined;
      return this.#commitNow();
    });
    this.#commitScheduled = next;
    this.#commitChain = next.catch(() => undefined);
    return next;
  }

  async #commitNow(): Promise<void> {
    const consumer = this.#consumer;
    if (consumer === undefined) return;
    const positions: Array<{ partition: number; track: PartitionTrack; position: bigint }> = [];
    for (const [partition, track] of this.#tracks) {
      const position = track.pendingCommit();
      if (position !== undefined) positions.push({ partition, track, position });
    }
    if (positions.length === 0) return;
    try {
      await consumer.commitOffsets(
        positions.map(({ partition, position }) => ({
          topic: this.#config.topic,
          partition,
          offset: position.toString(),
        })),
      );
    } catch (error) {
      // The records stay uncommitted and come again after the reconnect (at-least-once).
      const reason = classifyConnectionError(
        error,
        `committing offsets of kafka topic '${this.#config.topic}'`,
      );
      throw reason instanceof EndpointConfigurationError
        ? reason
        : new NotConnectedError(reason.message, { cause: error });
    }
    for (const { track, position } of positions) track.markCommitted(position);
  }
}
