/**
 * The bridge runtime (BRG-1..5, BRG-7, ORD-3, DLV-9): moves messages from a source to a sink.
 * It alone owns delivery counts, retry delays and limits, ordering, the selector, error
 * destinations and reconnects; connectors only move bytes and report typed errors.
 *
 * Shape: one reader pulls deliveries while fewer than `maxInFlight` are unsettled (backpressure),
 * and files each into its ordering unit. A unit sends one message at a time, in order; a failed
 * message waits for its retry delay at the head of its unit, so no later message of that unit
 * overtakes it (ORD-3), while up to `concurrency` other units go on. Timers come from the
 * injected clock, so tests never sleep.
 *
 * To a sink with `sendBatch`, a unit gives its ready messages to a shared batch instead
 * (`batch-pipeline.ts`) and settles each by its own result. To a sink that takes several batches
 * at once in order it hands over its next batch while the last is in flight, and the sink reports
 * every later message behind a failure on the same target stream as failed too; the unit stops at
 * its first failure, so the rule above holds for batches too.
 *
 * This file connects, reads, sends and settles; four units do the rest, each behind a context
 * naming only what it needs of the bridge: the status (`status-tracker.ts`: every fact the status
 * comes from, and its reason), the ordering units and their slots (`unit-scheduler.ts`),
 * acknowledgement batching (`ack-batcher.ts`) and send batching (`batch-pipeline.ts`).
 */
import { setMaxListeners } from 'node:events';
import { type Clock, systemClock } from '../jms/clock.js';
import { IllegalStateError, InvalidArgumentError } from '../jms/errors.js';
import { type EngineLogger, silentLogger } from '../jms/logger.js';
import type { Message } from '../jms/message/message.js';
import { type MessageSelector, parseSelector } from '../jms/selector/index.js';
import type { Delivery, Outcome, SendResult } from '../spi/connector.js';
import { BackOffError, EndpointConfigurationError, NotConnectedError, isPoison } from '../spi/errors.js';
import { BehindFailureError } from '../spi/ordered-batches.js';
import { AckBatcher } from './ack-batcher.js';
import { type BatchTarget, type Contributor, BatchPipeline } from './batch-pipeline.js';
import { reconnectDelayMs, retryDelayMs } from './backoff.js';
import { type BridgeConfig, type ResolvedBridgeConfig, resolveBridgeConfig } from './bridge-config.js';
import type { BridgeCounters, BridgeStatus, BridgeStatusReport, StatusListener } from './bridge-status.js';
import { type Item, itemOf } from './delivery-item.js';
import { type DuplicateWindow, MemoryDuplicateWindow, type StagedId } from './duplicate-window.js';
import { errorDestinationCopy, externalOrigin } from './error-message.js';
import { InternalSource } from './internal-endpoint.js';
import { orderingUnitOf } from './ordering.js';
import { type BridgeLatency, LatencyHistogram } from './latency-histogram.js';
import { type Side, StatusTracker } from './status-tracker.js';
import { type StagedTarget, rebuildFromTarget, stagedTargetOf } from './target-window.js';
import { type Unit, UnitScheduler } from './unit-scheduler.js';
import { wait } from './wait.js';

/** The outcome of every acknowledgement: one object, not one a message. */
const ACK: Outcome = Object.freeze({ kind: 'ack' });

/** What a bridge is given besides its configuration. */
export interface BridgeOptions {
  /** Time and timers. Default: the system clock. */
  readonly clock?: Clock;
  readonly logger?: EngineLogger;
  /** Randomness for retry jitter, [0, 1). Default Math.random. */
  readonly random?: () => number;
  /** Exactly-once only: the duplicate window. Default: an in-memory window of 100,000 ids. */
  readonly duplicateWindow?: DuplicateWindow;
}

/** A bridge: start, pause, resume and stop it at run time; read its status and counters. */
export class Bridge {
  readonly name: string;
  readonly #config: ResolvedBridgeConfig;
  readonly #clock: Clock;
  readonly #logger: EngineLogger;
  readonly #random: () => number;
  readonly #window: DuplicateWindow | undefined;
  /**
   * Exactly-once into an engine destination whose store keeps the window: the message and its
   * id go in one store commit, so the target and the window never disagree, even after a crash.
   */
  readonly #stagedTarget: StagedTarget | undefined;
  /** Exactly-once to a sink that lists what it committed: the window was rebuilt from the target. */
  #rebuiltFromTarget = false;
  /** Exactly-once: a message without a JMSMessageID was warned about (once per bridge). */
  #warnedNoId = false;
  readonly #selector: MessageSelector | undefined;
  /** JMS_ErrorOrigin of what this bridge parks: its internal source, where a replay can send it back. */
  readonly #origin: string;

  /** The status and the facts it comes from: lifecycle, paused, failed, lost sides, waiting and stalled units. */
  readonly #status: StatusTracker;
  /** The ordering units: which message goes next, and how many units send at once. */
  readonly #scheduler: UnitScheduler;
  /** Acknowledgements at the source, in batches. */
  readonly #acks: AckBatcher<Item>;
  /** Batches to a sink with `sendBatch` (unless `sendBatch.maxMessages` is 1). */
  readonly #batches: BatchPipeline | undefined;
  /** Exactly-once into an engine destination, batched: each message's window record, by message sent. */
  readonly #stagedOf = new WeakMap<Message, StagedId>();
  readonly #counts = {
    in: 0,
    out: 0,
    filtered: 0,
    retried: 0,
    deadLettered: 0,
    discarded: 0,
    dropped: 0,
    duplicates: 0,
    possibleDuplicates: 0,
    reconnects: 0,
  };
  #lastError: { message: string; at: number } | undefined;
  readonly #sendLatency = new LatencyHistogram();
  readonly #endToEndLatency = new LatencyHistogram();
  #inFlight = 0;
  /** The reader waits in the source's receive. */
  #receiving = false;
  readonly #lastWarned = new Map<Side, string>();

  #epoch = 0;
  #readAbort: AbortController | undefined;
  #reading: Promise<void> = Promise.resolve();
  /** Aborted when stop() gives up waiting: ends reconnect loops, retries and sends. */
  #life = lifeSignal();
  readonly #reconnecting = new Map<Side, Promise<void>>();
  #wakers: (() => void)[] = [];
  #starting: Promise<void> | undefined;
  #stopping: Promise<void> | undefined;

  constructor(config: BridgeConfig, options: BridgeOptions = {}) {
    this.#config = resolveBridgeConfig(config);
    this.name = this.#config.name;
    this.#clock = options.clock ?? systemClock;
    this.#logger = options.logger ?? silentLogger;
    this.#random = options.random ?? Math.random;
    if (this.#config.selector !== undefined && this.#config.source instanceof InternalSource)
      throw new InvalidArgumentError(
        `bridge '${this.name}': give an internal source its selector on the source itself, so non-matching queue messages stay on the queue (BRG-3)`,
      );
    this.#origin =
      this.#config.source instanceof InternalSource
        ? this.#config.source.destination.toString()
        : externalOrigin(this.name);
    const selector = parseSelector(this.#config.selector);
    this.#selector = selector.text === null ? undefined : selector;
    this.#window =
      this.#config.qos === 'exactly-once'
        ? (options.duplicateWindow ?? new MemoryDuplicateWindow())
        : undefined;
    this.#stagedTarget = stagedTargetOf(this.#window, this.#config.sink);
    this.#status = new StatusTracker({ bridge: this.name, clock: this.#clock, logger: this.#logger });
    const resolved = this.#config;
    this.#scheduler = new UnitScheduler({
      clock: this.#clock,
      concurrency: resolved.concurrency,
      maxInFlightPerUnit: resolved.maxInFlightPerUnit,
      tracksIds: this.#window !== undefined,
      status: this.#status,
      unitKeyOf: (item) =>
        orderingUnitOf(resolved.ordering, resolved.orderingProperty, item.delivery, item.message),
      mayStart: () => !this.#life.signal.aborted && !this.#status.fatal,
      attempt: (unit) => (this.#batches ? this.#attemptBatch(unit, this.#batches) : this.#attempt(unit)),
      attemptThrew: (error) => {
        this.#noteError(error);
        this.#logger.error({ bridge: this.name, err: describe(error) }, 'bridge runtime error');
      },
      stepEnded: () => this.#wake(),
    });
    const sink = resolved.sink;
    this.#batches =
      sink.sendBatch && resolved.sendBatch.maxMessages > 1
        ? new BatchPipeline({
            clock: this.#clock,
            ...resolved.sendBatch,
            target: () => this.#batchTarget(),
            signal: () => this.#life.signal,
            sizeOf: (message) => message.getSize(),
          })
        : undefined;
    this.#acks = new AckBatcher<Item>({
      clock: this.#clock,
      batchSize: resolved.batchSize,
      batchIntervalMs: resolved.batchIntervalMs,
      immediate: () =>
        this.#status.paused ||
        this.#status.lifecycle !== 'running' ||
        (this.#receiving && this.#sourceIdle()),
      // A promise chain rather than async functions: one of these runs for every message.
      acknowledge: (item) => this.#settle(item, ACK).then(() => this.#release()),
    });
  }

  // --- visible state ---

  get status(): BridgeStatus {
    return this.#status.status;
  }

  /** The status with its reason (why it failed, what it retries, which side was lost) and since when. */
  get statusReport(): BridgeStatusReport {
    return this.#status.report;
  }

  /** A snapshot of the counters. */
  get counters(): BridgeCounters {
    return {
      ...this.#counts,
      inFlight: this.#inFlight,
      lag: this.#inFlight + this.#sourceBacklog(),
      ...(this.#lastError ? { lastError: this.#lastError } : {}),
    };
  }

  /** Send and end-to-end latency histograms since the bridge was created (a snapshot). */
  get latency(): BridgeLatency {
    return { send: this.#sendLatency.snapshot(), endToEnd: this.#endToEndLatency.snapshot() };
  }

  /** What the source says waits there; 0 when it cannot tell or fails to answer. */
  #sourceBacklog(): number {
    try {
      const backlog = this.#config.source.backlog?.();
      return backlog !== undefined && Number.isFinite(backlog) && backlog > 0 ? backlog : 0;
    } catch {
      return 0;
    }
  }

  /** Calls `listener` on every status change; returns the function that removes it. */
  onStatusChange(listener: StatusListener): () => void {
    return this.#status.onChange(listener);
  }

  // --- lifecycle (BRG-7) ---

  /**
   * Connects the sink, the error destination and the source (retrying with the reconnect
   * backoff while they are unreachable) and starts moving messages. Resolves once running, or
   * when `stop()` ends the attempt, or when an endpoint's configuration is wrong (status `failed`).
   */
  start(): Promise<void> {
    const lifecycle = this.#status.lifecycle;
    if (lifecycle === 'stopping')
      return Promise.reject(new IllegalStateError(`bridge '${this.name}' is stopping`));
    if (lifecycle !== 'stopped') return this.#starting ?? Promise.resolve();
    this.#life = lifeSignal();
    this.#epoch++;
    this.#status.starting();
    if (this.#config.qos === 'exactly-once' && this.#window instanceof MemoryDuplicateWindow)
      this.#logger.info(
        { bridge: this.name },
        'exactly-once with an in-memory duplicate window: duplicates that arrive after a restart are not detected',
      );
    this.#starting = this.#connectAll(this.#life.signal);
    return this.#starting;
  }

  /** Stops reading the source; messages already read are still sent and settled. */
  async pause(): Promise<void> {
    this.#checkStarted('pause');
    if (this.#status.paused) return;
    this.#logger.info({ bridge: this.name }, 'bridge paused');
    this.#status.pausedReading();
    await this.#stopReading();
    await this.#acks.flush();
  }

  /** Reads again after `pause()`; also gives stalled units (limit reached, no error destination) a new round of retries. */
  resume(): Promise<void> {
    try {
      this.#checkStarted('resume');
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.#status.paused) {
      this.#logger.info({ bridge: this.name }, 'bridge resumed');
      this.#status.resumedReading();
      if (this.#status.lifecycle === 'running' && !this.#status.fatal) this.#startReading();
    }
    this.#scheduler.resumeStalled();
    return Promise.resolve();
  }

  /**
   * Stops reading, lets in-flight messages finish for up to `stopTimeoutMs`, then gives back what
   * is left (settled `retry`, so the source delivers it again) and closes the endpoints. Nothing
   * read is lost, except at-most-once messages still unsent at the deadline (counted in `dropped`).
   *
   * `drain: false` gives everything back at once, without another send or reconnect: for an
   * instance that lost its high-availability lease, whose sends would compete with the new
   * active's (a reconnecting Kafka sink would fence the new active's transactional producer).
   */
  stop(options: { drain?: boolean } = {}): Promise<void> {
    if (this.#status.lifecycle === 'stopped') return Promise.resolve();
    if (options.drain === false) this.#life.abort();
    return (this.#stopping ??= this.#stop().finally(() => (this.#stopping = undefined)));
  }

  #checkStarted(what: string): void {
    const lifecycle = this.#status.lifecycle;
    if (lifecycle === 'stopped' || lifecycle === 'stopping')
      throw new IllegalStateError(`cannot ${what} bridge '${this.name}': it is not running`);
  }

  async #connectAll(signal: AbortSignal): Promise<void> {
    const sides: Side[] = [
      'sink',
      ...(this.#config.errorDestination ? ['errorDestination' as const] : []),
      'source',
    ];
    for (const side of sides) if (!(await this.#connect(side, signal, false))) return;
    if (this.#status.lifecycle !== 'connecting') return;
    this.#logger.info(
      { bridge: this.name, qos: this.#config.qos, ordering: this.#config.ordering },
      'bridge started',
    );
    this.#status.running();
    if (!this.#status.paused) this.#startReading();
  }

  async #stop(): Promise<void> {
    const wasConnecting = this.#status.lifecycle === 'connecting';
    this.#status.stopping();
    this.#logger.info({ bridge: this.name, inFlight: this.#inFlight }, 'bridge stopping');
    if (wasConnecting) this.#life.abort();
    await this.#stopReading();
    await this.#starting;
    if (!this.#life.signal.aborted && !this.#status.fatal) await this.#drain(this.#config.stopTimeoutMs);
    this.#life.abort();
    this.#batches?.cancel();
    this.#scheduler.cancelTimers();
    await this.#scheduler.stepsEnded();
    await this.#acks.flush();
    await this.#giveBack();
    await Promise.all([...this.#reconnecting.values()]);
    await Promise.all([
      closeQuietly(this.#config.source),
      closeQuietly(this.#config.sink),
      closeQuietly(this.#config.errorDestination),
    ]);
    this.#lastWarned.clear();
    this.#status.stopped();
    this.#logger.info({ bridge: this.name }, 'bridge stopped');
  }

  /** Waits until every in-flight message finished (stalled ones aside), or `timeoutMs`. */
  async #drain(timeoutMs: number): Promise<void> {
    void this.#acks.flush();
    const deadline = new AbortController();
    const timer = this.#clock.setTimer(() => deadline.abort(), timeoutMs);
    while (!this.#drained() && !deadline.signal.aborted) await this.#nextWake(deadline.signal);
    this.#clock.clearTimer(timer);
  }

  #drained(): boolean {
    return this.#inFlight === this.#scheduler.stalledItems;
  }

  /** After stop's deadline: everything unsent goes back to the source; at-most-once ones are lost. */
  async #giveBack(): Promise<void> {
    for (const item of this.#scheduler.takeAll()) {
      if (item.settledAtSource) {
        this.#counts.dropped++;
        this.#logger.error(
          { bridge: this.name, messageId: item.id },
          'at-most-once message lost: acknowledged at the source and not sent before the stop deadline',
        );
      } else {
        await this.#settle(item, { kind: 'retry' });
      }
      this.#release();
    }
  }

  // --- connections (BRG-5) ---

  /** Connects one side, retrying with the reconnect backoff. False when aborted or misconfigured. */
  async #connect(side: Side, signal: AbortSignal, afterLoss: boolean): Promise<boolean> {
    const endpoint = this.#endpoint(side);
    for (let attempt = 1; ; attempt++) {
      if (afterLoss || attempt > 1) {
        const delay = reconnectDelayMs(this.#config.reconnect, afterLoss ? attempt : attempt - 1);
        if (!(await wait(this.#clock, delay, signal))) return false;
      }
      try {
        await endpoint.connect(signal);
        if (side === 'sink') await this.#rebuildWindow(signal);
        this.#lastWarned.delete(side);
        return true;
      } catch (error) {
        if (signal.aborted) return false;
        this.#noteError(error);
        if (error instanceof EndpointConfigurationError) {
          this.#failMisconfigured(side, error);
          return false;
        }
        this.#warnOnChange(side, error, `bridge cannot connect its ${side}; retrying with backoff`);
      }
    }
  }

  /**
   * Exactly-once: adds to the window what the target says it committed from earlier sends (a
   * transactional Kafka topic), so what the source delivers again after a crash or a lost
   * confirm is recognised. A target that cannot be read fails the connect (retried).
   */
  async #rebuildWindow(signal: AbortSignal): Promise<void> {
    if (!this.#window) return;
    let seeded: number | undefined;
    try {
      seeded = await rebuildFromTarget(this.#window, this.#config.sink, this.#clock.now(), signal);
    } catch (error) {
      await closeQuietly(this.#config.sink);
      throw error;
    }
    this.#rebuiltFromTarget = seeded !== undefined;
    if (seeded !== undefined)
      this.#logger.info({ bridge: this.name, ids: seeded }, 'duplicate window rebuilt from the target');
  }

  /** Re-makes a lost connection; callers on the same side share one attempt. */
  #reconnect(side: Side, cause: unknown): Promise<void> {
    let running = this.#reconnecting.get(side);
    if (!running) {
      running = this.#reconnectLoop(side, cause).finally(() => this.#reconnecting.delete(side));
      this.#reconnecting.set(side, running);
    }
    return running;
  }

  async #reconnectLoop(side: Side, cause: unknown): Promise<void> {
    this.#noteError(cause);
    this.#warnOnChange(side, cause, `bridge lost its ${side} connection; reconnecting`);
    this.#status.connectionLost(side, describe(cause));
    // Acknowledge what is done while the old connection may still take it.
    if (side === 'source') await this.#acks.flush();
    await closeQuietly(this.#endpoint(side));
    const connected = await this.#connect(side, this.#life.signal, true);
    if (connected) {
      this.#counts.reconnects++;
      this.#logger.info({ bridge: this.name, side }, 'bridge reconnected');
    }
    this.#status.connectionEnded(side);
  }

  #endpoint(side: Side): { connect(signal: AbortSignal): Promise<void>; close(): Promise<void> } {
    if (side === 'source') return this.#config.source;
    if (side === 'sink') return this.#config.sink;
    return this.#config.errorDestination!;
  }

  /** An endpoint's configuration is wrong: nothing more is attempted until stop/start (status `failed`, `misconfigured`). */
  #failMisconfigured(side: Side, error: Error): void {
    const detail = describe(error);
    this.#logger.error(
      { bridge: this.name, side, err: detail },
      'bridge failed: an endpoint is misconfigured; fix it and restart the bridge',
    );
    this.#readAbort?.abort();
    this.#status.failed('misconfigured', detail);
    this.#wake();
  }

  // --- reading ---

  #startReading(): void {
    const abort = lifeSignal();
    this.#readAbort = abort;
    this.#reading = this.#reading.then(() =>
      this.#readLoop(abort.signal).catch((error: unknown) => {
        // A bug, not a broker problem: stop reading and say so; what was read is kept.
        this.#noteError(error);
        const detail = describe(error);
        this.#logger.error({ bridge: this.name, err: detail }, 'bridge reader failed');
        this.#status.failed('runtime-error', detail);
      }),
    );
  }

  #stopReading(): Promise<void> {
    this.#readAbort?.abort();
    this.#readAbort = undefined;
    this.#wake();
    return this.#reading;
  }

  async #readLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted && !this.#status.fatal) {
      const reconnecting = this.#reconnecting.get('source');
      if (reconnecting) {
        // Pause and stop need not wait for a reconnect: it goes on without the reader.
        await Promise.race([reconnecting, this.#nextWake(signal)]);
        continue;
      }
      if (!(await this.#capacity(signal))) return;
      let deliveries: readonly Delivery[];
      try {
        deliveries = await this.#receive(signal);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof EndpointConfigurationError) {
          this.#noteError(error);
          this.#failMisconfigured('source', error);
          return;
        }
        this.#sourceLost(error);
        continue;
      }
      // Every delivery handed over is the bridge's now, even if reading was stopped meanwhile.
      for (const delivery of deliveries) await this.#accept(delivery);
      // The open batch may be full now: asked once per read, not once per delivery, since asking
      // counts what the units have ready (a read of 1,000 would count up to 1,000 each time).
      this.#batches?.poke();
    }
  }

  /**
   * The next deliveries: as many as there is room for when the source hands over many at once.
   * With a bound per ordering unit below `maxInFlight` one at a time, so that bound holds exactly.
   */
  async #receive(signal: AbortSignal): Promise<readonly Delivery[]> {
    const source = this.#config.source;
    const room =
      this.#config.maxInFlightPerUnit < this.#config.maxInFlight
        ? 1
        : this.#config.maxInFlight - this.#inFlight;
    this.#receiving = true;
    try {
      // What is confirmed goes at once when the source has nothing more to give: a source that
      // hands over its next message only after earlier ones are acknowledged (MQTT with a full
      // window) would otherwise wait `batchIntervalMs`, and acknowledging sooner is always safe.
      if (this.#acks.pending && this.#sourceIdle()) void this.#acks.flush();
      if (source.receiveBatch && room > 1) return await source.receiveBatch(room, signal);
      return [await source.receive(signal)];
    } finally {
      this.#receiving = false;
    }
  }

  /** Whether the source says nothing waits there (not: cannot tell). */
  #sourceIdle(): boolean {
    try {
      return this.#config.source.backlog?.() === 0;
    } catch {
      return false;
    }
  }

  /** Waits while `maxInFlight` deliveries are unsettled or the last unit read into is full (backpressure). */
  async #capacity(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      const full = this.#scheduler.full;
      if (this.#inFlight < this.#config.maxInFlight && !full) return true;
      // Batched acknowledgements would otherwise hold slots until their interval ends.
      if (this.#acks.pending) void this.#acks.flush();
      await this.#nextWake(signal);
    }
  }

  /** The source connection dropped: what it had not settled comes back after the reconnect. */
  #sourceLost(error: unknown): void {
    this.#epoch++;
    // What the lost connection had delivered and the runtime had not yet sent or settled.
    this.#scheduler.abandon(
      (item) => item.settledAtSource || item.epoch === this.#epoch,
      () => this.#release(),
    );
    void this.#reconnect('source', error);
  }

  async #accept(delivery: Delivery): Promise<void> {
    this.#counts.in++;
    this.#inFlight++;
    const item = itemOf(delivery, this.#epoch);
    if (this.#selector && !this.#selector.matches(item.message)) {
      this.#counts.filtered++;
      this.#acks.queue(item);
      return;
    }
    if (this.#config.qos === 'at-most-once') {
      // Not acknowledged means the source delivers it again: sending it now could duplicate it.
      if (!(await this.#settle(item, ACK))) {
        this.#release();
        return;
      }
      item.settledAtSource = true;
    }
    if (this.#window && item.id === null) this.#warnNoId();
    this.#scheduler.enqueue(item);
  }

  // --- sending ---

  /** Sends the unit's head message once and handles the outcome. */
  async #attempt(unit: Unit): Promise<void> {
    const item = unit.items[0];
    if (!item) return;
    if (this.#window && item.id !== null && !item.checked) {
      item.checked = true;
      if (await this.#window.has(item.id)) {
        this.#counts.duplicates++;
        this.#logger.debug({ bridge: this.name, messageId: item.id }, 'duplicate dropped (exactly-once)');
        this.#scheduler.removeHead(unit, item);
        this.#acks.queue(item);
        return;
      }
    }
    const reconnecting = this.#reconnecting.get('sink');
    if (reconnecting) {
      // A send now would only find the connection down; it goes once the sink is back.
      this.#scheduler.waitFor(unit, reconnecting);
      return;
    }
    const outgoing = item.message.copy();
    outgoing.deliveryCount = item.deliveryCount;
    outgoing.setJMSRedelivered(item.deliveryCount > 1);
    // The window's record goes with the message when the target writes to the window's store.
    item.sends++;
    const staged =
      this.#stagedTarget && item.id !== null
        ? this.#stagedTarget.window.stage(item.id, this.#clock.now())
        : undefined;
    const sendStarted = this.#clock.now();
    try {
      if (staged) await this.#stagedTarget!.sink.sendStaged(outgoing, this.#life.signal, staged);
      else await this.#config.sink.send(outgoing, this.#life.signal);
    } catch (error) {
      if (error instanceof NotConnectedError) {
        // The outcome is unknown: the window is asked again once the target is back.
        item.maybeSent = true;
        item.checked = false;
      }
      if (!this.#life.signal.aborted) await this.#sendFailed(unit, item, error);
      return;
    }
    if (this.#lastWarned.delete('sink')) this.#logger.info({ bridge: this.name }, 'bridge sends again');
    this.#scheduler.removeHead(unit, item);
    this.#counts.out++;
    const confirmed = this.#clock.now();
    this.#sendLatency.observe(confirmed - sendStarted);
    const timestamp = item.message.getJMSTimestamp();
    if (timestamp > 0) this.#endToEndLatency.observe(confirmed - timestamp);
    if (item.maybeSent && !this.#targetRecognisesResends(item)) this.#counts.possibleDuplicates++;
    await this.#delivered(item, staged !== undefined);
  }

  // --- sending in batches ---

  /** The sink as batches see it: with each message's window record when the target stores it. */
  #batchTarget(): BatchTarget {
    const sink = this.#config.sink;
    const staged = this.#stagedTarget;
    if (staged)
      return {
        sendBatch: (batch, signal) =>
          staged.sink.sendBatchStaged(
            batch,
            signal,
            batch.map((message) => this.#stagedOf.get(message)),
          ),
      };
    return {
      sendBatch: (batch, signal) => sink.sendBatch!(batch, signal),
      ...(sink.maxBatchesInFlight === undefined ? {} : { maxBatchesInFlight: sink.maxBatchesInFlight }),
    };
  }

  /**
   * Gives the unit's ready messages, in order, to the next batch and settles each by its result.
   * To a sink that takes several batches at once (`maxBatchesInFlight` > 1) the unit hands over
   * its next batch while the last is in flight: the sink keeps them in order and reports every
   * later message to a stream where an earlier one failed as failed too, so nothing overtakes a
   * retry. Once a batch answers with a failure the unit hands over nothing more; the later
   * batches' failures stay where they are, and the unit's next step sends the failed message
   * first, then the rest, in order, before anything new (ORD-3).
   */
  async #attemptBatch(unit: Unit, batches: BatchPipeline): Promise<void> {
    if (this.#window && !(await this.#checkWindow(unit))) return;
    if (unit.items.length === 0) return;
    const reconnecting = this.#reconnecting.get('sink');
    if (reconnecting) {
      this.#scheduler.waitFor(unit, reconnecting);
      return;
    }
    let answered: Promise<void> = Promise.resolve();
    let outstanding = 0;
    /** A batch of this step answered with a failure (not poison): the later ones are behind it. */
    let failed = false;
    let joins = 0;
    const stopped = () =>
      failed || unit.state !== 'active' || this.#life.signal.aborted || this.#status.fatal;
    for (;;) {
      // After a failure nothing new goes: the unit's next step starts with the failed message.
      if (stopped() || (joins > 0 && !this.#mayPipeline(unit))) break;
      if (this.#readyCount(unit) === 0) {
        if (outstanding === 0) break;
        // More may come from the reader while the last batch is out: give it then.
        const arrived = new Promise<void>((resolve) => (unit.onItem = resolve));
        await Promise.race([answered, arrived]);
        unit.onItem = undefined;
        continue;
      }
      const { handedOver, answer } = this.#joinBatch(unit, batches, stopped);
      joins++;
      outstanding++;
      const previous = answered;
      answered = answer.then(async ({ taken, results, sendStarted }) => {
        // Answers are handled in the order the batches went, whatever order they come in.
        await previous;
        try {
          if (taken.length === 0 || this.#life.signal.aborted) return;
          const behind = failed || unit.state !== 'active';
          if (results.some((result) => !result.ok && !isPoison(result.error))) failed = true;
          await this.#batchAnswered(unit, taken, results, sendStarted, behind);
        } finally {
          for (const item of taken) item.sending = false;
          outstanding--;
        }
      });
      await Promise.race([handedOver, answered]);
    }
    await answered;
  }

  /**
   * Whether the unit may hand over another batch while its last ones are in flight: the sink takes
   * several at once, no message of the unit is a suspect, the sink is connected and no other unit
   * waits for the slot.
   * Exactly-once checks every message against the window first: one batch at a time there.
   */
  #mayPipeline(unit: Unit): boolean {
    return (
      (this.#batchTarget().maxBatchesInFlight ?? 1) > 1 &&
      this.#window === undefined &&
      !this.#life.signal.aborted &&
      !this.#reconnecting.has('sink') &&
      !this.#scheduler.othersWaiting &&
      !unit.items.some((item) => item.suspect)
    );
  }

  /**
   * Joins the next batch with the unit's ready messages. `handedOver` resolves once the batch
   * took them (or went without them), `answer` once the sink answered for them. Once `stopped`
   * (an earlier batch of the unit failed while this one waited for room) it gives nothing: a
   * batch begun after the sink reported the failure would not be held behind it.
   */
  #joinBatch(
    unit: Unit,
    batches: BatchPipeline,
    stopped: () => boolean,
  ): {
    handedOver: Promise<void>;
    answer: Promise<{ taken: readonly Item[]; results: readonly SendResult[]; sendStarted: number }>;
  } {
    const taken: Item[] = [];
    let sendStarted = 0;
    let tookAll = (): void => {};
    const handedOver = new Promise<void>((resolve) => (tookAll = resolve));
    const contributor: Contributor = {
      ready: () => (stopped() ? 0 : this.#readyCount(unit)),
      urgent: () => (this.#firstUnsent(unit)?.sends ?? 0) > 0,
      take: (maxCount, maxBytes, batchEmpty) => {
        if (stopped()) return [];
        sendStarted = this.#clock.now();
        const items = this.#batchable(unit, maxCount, maxBytes, batchEmpty);
        taken.push(...items);
        if (items.length > 0) tookAll();
        return items.map((item) => this.#outgoing(item));
      },
    };
    const answer = batches.join(contributor).then(({ results }) => {
      tookAll();
      return { taken, results, sendStarted };
    });
    return { handedOver, answer };
  }

  /** The unit's first message not in a batch being sent. */
  #firstUnsent(unit: Unit): Item | undefined {
    return unit.items.find((item) => !item.sending);
  }

  /**
   * Exactly-once: drops the duplicates at the head of the unit and checks the rest against the
   * window. A duplicate further back stays unchecked, so it is dropped once it is the head.
   * False when the unit is empty after.
   */
  async #checkWindow(unit: Unit): Promise<boolean> {
    const duplicates = new Set<Item>();
    for (const item of [...unit.items]) {
      if (item.id === null || item.checked) continue;
      item.checked = true;
      if (await this.#window!.has(item.id)) duplicates.add(item);
    }
    for (let head = unit.items[0]; head && duplicates.has(head); head = unit.items[0]) {
      duplicates.delete(head);
      this.#counts.duplicates++;
      this.#logger.debug({ bridge: this.name, messageId: head.id }, 'duplicate dropped (exactly-once)');
      this.#scheduler.removeHead(unit, head);
      this.#acks.queue(head);
    }
    for (const item of duplicates) item.checked = false;
    return unit.items.length > 0;
  }

  /**
   * The unit's messages that may go in a batch now, from its head: a suspect head goes alone, a
   * later suspect or (exactly-once) a message not checked against the window waits for a later
   * batch, and the batch's room in messages and bytes is kept (a message larger than a whole
   * batch goes alone).
   */
  #batchable(unit: Unit, maxCount: number, maxBytes: number, batchEmpty: boolean): Item[] {
    const items: Item[] = [];
    let bytes = 0;
    for (const item of this.#unsent(unit)) {
      if (items.length >= maxCount) break;
      if (item.sending) break;
      if (items.length > 0 && item.suspect) break;
      if (this.#window && item.id !== null && !item.checked) break;
      const size = item.message.getSize();
      if (bytes + size > maxBytes && !(batchEmpty && items.length === 0)) break;
      items.push(item);
      bytes += size;
      if (item.suspect) break;
    }
    return items;
  }

  /**
   * How many of the unit's messages {@link #batchable} would give, not counting bytes and at most
   * `maxMessages`: asked at every read, so it stops early and sizes nothing.
   */
  #readyCount(unit: Unit): number {
    const most = this.#config.sendBatch.maxMessages;
    const items = unit.items;
    let index = 0;
    while (index < items.length && items[index]!.sending) index++;
    let count = 0;
    for (; index < items.length; index++) {
      const item = items[index]!;
      if (count >= most || item.sending) break;
      if (count > 0 && item.suspect) break;
      if (this.#window && item.id !== null && !item.checked) break;
      count++;
      if (item.suspect) break;
    }
    return count;
  }

  /**
   * The unit's messages after those at its head that are in batches being sent (its step's own:
   * a unit runs one step at a time); a message in flight further back ends what may go.
   */
  *#unsent(unit: Unit): Generator<Item> {
    let index = 0;
    while (index < unit.items.length && unit.items[index]!.sending) index++;
    for (; index < unit.items.length; index++) yield unit.items[index]!;
  }

  /** The copy of an item that goes to the target, stamped with this attempt. */
  #outgoing(item: Item): Message {
    const outgoing = item.message.copy();
    outgoing.deliveryCount = item.deliveryCount;
    outgoing.setJMSRedelivered(item.deliveryCount > 1);
    item.sends++;
    item.sending = true;
    if (this.#stagedTarget && item.id !== null)
      this.#stagedOf.set(outgoing, this.#stagedTarget.window.stage(item.id, this.#clock.now()));
    return outgoing;
  }

  /**
   * Settles a unit's part of a batch. What the target confirmed is counted at once and
   * acknowledged in order; then the failures, in order: poison is parked and the next one looked
   * at, the first other failure is handled as a lone send's would be (retry, back-off, reconnect),
   * and every failure after it stays where it is, to go again behind it without counting.
   */
  async #batchAnswered(
    unit: Unit,
    taken: readonly Item[],
    results: readonly SendResult[],
    sendStarted: number,
    behindAlready = false,
  ): Promise<void> {
    const confirmed: Item[] = [];
    const failed: { item: Item; error: Error }[] = [];
    taken.forEach((item, index) => {
      const result = results[index]!;
      if (result.ok) confirmed.push(item);
      else failed.push({ item, error: result.error });
    });
    if (confirmed.length > 0 && this.#lastWarned.delete('sink'))
      this.#logger.info({ bridge: this.name }, 'bridge sends again');
    const now = this.#clock.now();
    for (const item of confirmed) {
      item.sending = false;
      this.#scheduler.removeHead(unit, item);
      this.#counts.out++;
      this.#sendLatency.observe(now - sendStarted);
      const timestamp = item.message.getJMSTimestamp();
      if (timestamp > 0) this.#endToEndLatency.observe(now - timestamp);
      if (item.maybeSent && !this.#targetRecognisesResends(item)) this.#counts.possibleDuplicates++;
    }
    for (const item of confirmed)
      await this.#delivered(item, this.#stagedTarget !== undefined && item.id !== null);
    // A failure of an earlier batch of the unit came first: this batch's failures are behind it.
    let behind = behindAlready;
    // A failed message stays `sending` until its failure is handled (the caller clears it after):
    // a poison message being moved to the error destination is still the unit's head, and the
    // unit's next batch must not send it again meanwhile.
    for (const { item, error } of failed) {
      if (this.#life.signal.aborted) return;
      if (error instanceof NotConnectedError || error instanceof BehindFailureError) {
        // The outcome is unknown (a lost connection) or it reached the target out of turn: the
        // window is asked again, and a copy already there is a duplicate.
        item.maybeSent = true;
        item.checked = false;
      }
      if (behind) continue;
      if (error instanceof BehindFailureError) {
        // Another unit's failure came first on the same target stream: not this message's fault,
        // it goes again with the unit's next batch, uncounted and without delay.
        behind = true;
        continue;
      }
      await this.#sendFailed(unit, item, error);
      behind = unit.items[0] === item || unit.state !== 'active';
    }
  }

  /**
   * Whether a message that may have reached the target before is caught by the window: exactly-
   * once where the window is written with the target (an engine destination) or rebuilt from it
   * (a transactional Kafka topic), for a message with a JMSMessageID. Elsewhere such a send is a
   * possible duplicate.
   */
  #targetRecognisesResends(item: Item): boolean {
    return (
      this.#window !== undefined &&
      item.id !== null &&
      (this.#stagedTarget !== undefined || this.#rebuiltFromTarget)
    );
  }

  /**
   * A message without a JMSMessageID has nothing the window could compare: a copy delivered
   * again (after a crash, a lost connection) is sent again. Said once, as the cause is the
   * publisher's (an AMQP message without `message-id`), not one message.
   */
  #warnNoId(): void {
    if (this.#warnedNoId) return;
    this.#warnedNoId = true;
    this.#logger.warn(
      { bridge: this.name },
      'exactly-once bridge received a message without a JMSMessageID: such messages are forwarded ' +
        'at-least-once, a copy delivered again is sent again (publish with a message id)',
    );
  }

  async #sendFailed(unit: Unit, item: Item, error: unknown): Promise<void> {
    this.#noteError(error);
    if (error instanceof NotConnectedError) {
      await this.#connectionLost(unit, item, error);
      return;
    }
    item.lostSends = 0;
    if (error instanceof EndpointConfigurationError) {
      this.#scheduler.hold(unit);
      this.#failMisconfigured('sink', error);
      return;
    }
    this.#warnOnChange('sink', error, 'bridge cannot send; retrying');
    if (isPoison(error)) {
      await this.#undeliverable(unit, item, `poison: ${describe(error)}`);
      return;
    }
    if (error instanceof BackOffError) {
      item.backoffs++;
      this.#scheduler.retryLater(
        unit,
        error.delayMs ?? retryDelayMs(this.#config.retry.delay, item.backoffs, this.#random),
        'back-off',
      );
      return;
    }
    await this.#countFailure(unit, item, describe(error));
  }

  /**
   * The sink's connection was lost with this message's send in flight. A broker that goes away
   * takes whatever is being sent with it, so a first loss only makes the message a suspect: it
   * is sent again after the reconnect, alone, and that attempt is not counted.
   * A loss during such a lone send is the message's doing as far as anyone can tell (a record
   * over the broker's request size, which Kafka answers by closing the connection): it counts
   * toward the retry limit like a failed send, with the retry delay, so one message can never
   * hold its unit for ever. Sends that find the sink already down are not attempts: they wait
   * for the reconnect (`#attempt`). The scheduler is what lets a suspect go alone.
   */
  async #connectionLost(unit: Unit, item: Item, error: NotConnectedError): Promise<void> {
    const reconnected = this.#reconnect('sink', error);
    item.lostSends++;
    const alone = item.suspect && this.#scheduler.isProbing(unit);
    item.suspect = true;
    if (!alone) {
      this.#scheduler.waitFor(unit, reconnected);
      return;
    }
    const each =
      item.lostSends === item.sends ? `each of its ${item.sends}` : `each of its last ${item.lostSends}`;
    await this.#countFailure(
      unit,
      item,
      `the connection to the target was lost during ${each} sends (${describe(error)})`,
    );
  }

  /** One failed attempt toward the retry limit: retried after the retry delay, or undeliverable. */
  async #countFailure(unit: Unit, item: Item, cause: string): Promise<void> {
    item.failures++;
    const limit = this.#config.retry.limit;
    if (limit >= 0 && item.failures > limit) {
      await this.#undeliverable(
        unit,
        item,
        `retry limit ${limit} reached after ${item.deliveryCount} deliveries: ${cause}`,
      );
      return;
    }
    this.#counts.retried++;
    item.deliveryCount++;
    this.#scheduler.retryLater(
      unit,
      retryDelayMs(this.#config.retry.delay, item.failures, this.#random),
      'retry-delay',
    );
  }

  /** Limit reached or poison (BRG-4, DLV-3, DLV-9): error destination, else drop if configured, else stall. */
  async #undeliverable(unit: Unit, item: Item, reason: string): Promise<void> {
    const fields = { bridge: this.name, messageId: item.id, unit: unit.key, reason };
    if (this.#config.errorDestination) {
      const moved = errorDestinationCopy(item.message, {
        bridge: this.name,
        origin: this.#origin,
        reason,
        deliveryCount: item.deliveryCount,
        now: this.#clock.now(),
      });
      const outcome = await this.#sendToErrorDestination(moved);
      if (outcome === 'stopped') return;
      if (outcome !== 'moved') {
        // Resending cannot help either side: keep the message, hold its unit, tell the operator.
        this.#stall(
          unit,
          { ...fields, errorDestination: outcome.refused },
          `${reason}; the error destination refuses it too: ${outcome.refused}`,
          'undeliverable message kept and its ordering unit stalled: the error destination refuses it as poison too; fix the error destination (or its size limit) and call resume()',
        );
        return;
      }
      this.#counts.deadLettered++;
      this.#logger.debug(fields, 'message moved to the error destination');
    } else if (this.#config.retry.onLimit === 'drop') {
      this.#counts.discarded++;
      this.#logger.warn(fields, 'undeliverable message discarded: no error destination and onLimit is drop');
    } else {
      this.#stall(
        unit,
        fields,
        reason,
        'undeliverable message kept and its ordering unit stalled: no error destination; fix the target and call resume()',
      );
      return;
    }
    this.#scheduler.removeHead(unit, item);
    if (!item.settledAtSource) await this.#settle(item, { kind: 'reject', reason: new Error(reason) });
    this.#release();
  }

  /** The unit keeps its head message and waits for `resume()` (status `failed`, `unit-stalled`). */
  #stall(unit: Unit, fields: Record<string, unknown>, reason: string, message: string): void {
    this.#noteError(new Error(reason));
    this.#logger.error(fields, message);
    this.#scheduler.stall(unit, reason);
  }

  /**
   * Retries the error destination until it takes the message (never lost): `stopped` when stop
   * gave up; `refused` when the error destination says the copy is poison (too large for it as
   * well), which no retry can change.
   */
  async #sendToErrorDestination(message: Message): Promise<'moved' | 'stopped' | { refused: string }> {
    const sink = this.#config.errorDestination!;
    const signal = this.#life.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        await sink.send(message, signal);
        this.#lastWarned.delete('errorDestination');
        return 'moved';
      } catch (error) {
        if (signal.aborted) return 'stopped';
        this.#noteError(error);
        if (isPoison(error)) return { refused: describe(error) };
        if (error instanceof NotConnectedError) {
          await this.#reconnect('errorDestination', error);
          continue;
        }
        this.#warnOnChange(
          'errorDestination',
          error,
          'bridge cannot move a message to its error destination; retrying',
        );
        this.#status.errorDestinationRetrying();
        const waited = await wait(this.#clock, reconnectDelayMs(this.#config.reconnect, attempt), signal);
        this.#status.errorDestinationRetried();
        if (!waited) return 'stopped';
      }
    }
  }

  // --- settling ---

  /** The target confirmed: record the id (exactly-once) unless it went with the message, then acknowledge the source. */
  async #delivered(item: Item, recorded: boolean): Promise<void> {
    if (this.#window && item.id !== null && !recorded) {
      try {
        await this.#window.add(item.id, this.#clock.now());
      } catch (error) {
        this.#noteError(error);
        this.#logger.warn(
          { bridge: this.name, messageId: item.id, err: describe(error) },
          'could not record the message id in the duplicate window',
        );
      }
    }
    if (item.settledAtSource) this.#release();
    else this.#acks.queue(item);
  }

  /** Settles at the source; false when the source could not be told (it will deliver the message again). */
  #settle(item: Item, outcome: Outcome): Promise<boolean> {
    let settling: Promise<void>;
    try {
      settling = item.delivery.settle(outcome);
    } catch (error) {
      return Promise.resolve(this.#settleFailed(outcome, error));
    }
    return settling.then(
      () => true,
      (error: unknown) => this.#settleFailed(outcome, error),
    );
  }

  #settleFailed(outcome: Outcome, error: unknown): false {
    this.#noteError(error);
    this.#warnOnChange(
      'source',
      error,
      `bridge could not settle a delivery (${outcome.kind}); the source will deliver it again`,
    );
    return false;
  }

  /** One delivery is finished with: room for the reader. */
  #release(): void {
    this.#inFlight--;
    this.#wake();
  }

  // --- waking, logs ---

  /** Resolves at the next state change that may free capacity or finish a drain. */
  #nextWake(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#wakers.push(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  #wake(): void {
    for (const waker of this.#wakers.splice(0)) waker();
  }

  #noteError(error: unknown): void {
    this.#lastError = { message: describe(error), at: this.#clock.now() };
  }

  /** Warns once per distinct reason per side, not on every retry. */
  #warnOnChange(side: Side, error: unknown, message: string): void {
    const reason = describe(error);
    if (this.#lastWarned.get(side) === reason) return;
    this.#lastWarned.set(side, reason);
    this.#logger.warn({ bridge: this.name, side, err: reason }, message);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function closeQuietly(endpoint: { close(): Promise<void> } | undefined): Promise<void> {
  try {
    await endpoint?.close();
  } catch {
    // Closing is best effort: the connection is being given up anyway.
  }
}

/**
 * An abort controller whose signal may have many listeners: every wait for capacity, a wake or
 * a reconnect listens to it at the same time, a handful per unit in flight, each removed when
 * it ends. The default limit of 10 would warn about a leak that is not one.
 */
function lifeSignal(): AbortController {
  const controller = new AbortController();
  setMaxListeners(1_000, controller.signal);
  return controller;
}
