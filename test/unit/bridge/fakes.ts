/**
 * Scriptable fake endpoints for bridge runtime tests: a source that redelivers what was not
 * settled (as the SPI promises), a sink whose sends can fail, hang, be poison or back off, and
 * connection episodes on both. Both write to a shared event log so tests can check the order of
 * sends and acknowledgements.
 */
import type { Delivery, Outcome, SendResult as BatchResult, Sink, Source } from '../../../src/spi/index.js';
import {
  BackOffError,
  NotConnectedError,
  OrderedBatches,
  PoisonMessageError,
  isPoison,
} from '../../../src/spi/index.js';
import { type EngineLogger, type Message, TextMessage } from '../../../src/index.js';
import { Bridge, type BridgeConfig, type BridgeOptions } from '../../../src/bridge/index.js';
import { FakeClock, settle } from '../../helpers/fake-clock.js';

/** A text message with a JMSMessageID (default `ID:<text>`) and optional group and properties. */
export function message(
  text: string,
  options: { id?: string; group?: string; properties?: Record<string, string> } = {},
): TextMessage {
  const m = new TextMessage(text);
  m.setJMSMessageID(options.id ?? `ID:${text}`);
  if (options.group !== undefined) m.setStringProperty('JMSXGroupID', options.group);
  for (const [name, value] of Object.entries(options.properties ?? {})) m.setStringProperty(name, value);
  return m;
}

export const textOf = (m: Message): string => (m as TextMessage).getText() ?? '';

interface Available {
  readonly seq: number;
  readonly message: Message;
  readonly key: string | undefined;
  deliveryCount: number;
}

interface HandedOut {
  readonly entry: Available;
  readonly epoch: number;
  settled: boolean;
}

interface Waiter {
  resolve(delivery: Delivery): void;
  reject(error: unknown): void;
}

/** How the next connect attempts go. */
class ConnectScript {
  /** Connect attempts so far and their times. */
  readonly times: number[] = [];
  /** Fail this many next attempts with NotConnectedError. */
  failures = 0;
  /** Fail every attempt with this error (cleared by hand). */
  error: Error | undefined;

  attempt(now: number): void {
    this.times.push(now);
    if (this.error) throw this.error;
    if (this.failures > 0) {
      this.failures--;
      throw new NotConnectedError('broker unreachable');
    }
  }
}

/** A source: push messages, it hands them out in order; unsettled ones come back after a drop or close. */
export class FakeSource implements Source {
  readonly connects = new ConnectScript();
  /** Every settle, in order. */
  readonly settlements: { text: string; kind: 'ack' | 'retry' | 'reject'; at: number; reason?: string }[] =
    [];
  /** Deliveries handed out, redeliveries included. */
  received = 0;
  #available: Available[] = [];
  #handedOut: HandedOut[] = [];
  #waiters: Waiter[] = [];
  #connected = false;
  #epoch = 0;
  #seq = 0;

  constructor(
    readonly clock: FakeClock,
    readonly log: string[] = [],
  ) {}

  /**
   * Makes a message available; `key` becomes the delivery's orderingKey. `deliveredBefore`: times
   * an earlier process already had it (a broker redelivering after a crash), so it comes redelivered.
   */
  push(m: Message, key?: string, deliveredBefore = 0): void {
    this.#available.push({ seq: this.#seq++, message: m, key, deliveryCount: deliveredBefore });
    this.#serve();
  }

  /** Pushes `message(text)` for each text. */
  pushTexts(...texts: string[]): void {
    for (const text of texts) this.push(message(text));
  }

  /** Messages waiting to be read. */
  get available(): number {
    return this.#available.length;
  }

  /** Deliveries handed out and not settled. */
  get unsettled(): number {
    return this.#handedOut.filter((h) => !h.settled).length;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Texts acknowledged (ack), in order. */
  get acked(): string[] {
    return this.settlements.filter((s) => s.kind === 'ack').map((s) => s.text);
  }

  connect(_signal: AbortSignal): Promise<void> {
    try {
      this.connects.attempt(this.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    this.#connected = true;
    this.#epoch++;
    this.#serve();
    return Promise.resolve();
  }

  receive(signal: AbortSignal): Promise<Delivery> {
    if (!this.#connected) return Promise.reject(new NotConnectedError('fake source is not connected'));
    return new Promise<Delivery>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: (delivery) => {
          signal.removeEventListener('abort', onAbort);
          resolve(delivery);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(signal.reason as unknown);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#serve();
    });
  }

  /** The broker connection drops: pending receives fail, unsettled deliveries will come again. */
  drop(): void {
    this.#disconnect();
  }

  close(): Promise<void> {
    this.#disconnect();
    return Promise.resolve();
  }

  #disconnect(): void {
    this.#connected = false;
    for (const waiter of this.#waiters.splice(0))
      waiter.reject(new NotConnectedError('fake source connection lost'));
    const back = this.#handedOut.filter((h) => !h.settled).map((h) => h.entry);
    this.#handedOut = [];
    this.#putBack(back);
  }

  #putBack(entries: Available[]): void {
    this.#available = [...entries, ...this.#available].sort((a, b) => a.seq - b.seq);
  }

  #serve(): void {
    while (this.#connected && this.#waiters.length > 0 && this.#available.length > 0) {
      const entry = this.#available.shift()!;
      const waiter = this.#waiters.shift()!;
      entry.deliveryCount++;
      const delivered = entry.message.copy();
      delivered.deliveryCount = entry.deliveryCount;
      delivered.setJMSRedelivered(entry.deliveryCount > 1);
      const handed: HandedOut = { entry, epoch: this.#epoch, settled: false };
      this.#handedOut.push(handed);
      this.received++;
      this.log.push(`receive ${textOf(delivered)}`);
      waiter.resolve({
        message: delivered,
        ...(entry.key === undefined ? {} : { orderingKey: entry.key }),
        settle: (outcome) => this.#settle(handed, outcome),
      });
    }
  }

  #settle(handed: HandedOut, outcome: Outcome): Promise<void> {
    if (handed.settled) return Promise.reject(new Error('settled twice'));
    if (handed.epoch !== this.#epoch || !this.#connected)
      return Promise.reject(new NotConnectedError('the connection this delivery came on is gone'));
    handed.settled = true;
    this.#handedOut = this.#handedOut.filter((h) => h !== handed);
    const text = textOf(handed.entry.message);
    this.settlements.push({
      text,
      kind: outcome.kind,
      at: this.clock.now(),
      ...(outcome.kind === 'reject' ? { reason: outcome.reason.message } : {}),
    });
    this.log.push(`${outcome.kind} ${text}`);
    if (outcome.kind === 'retry') {
      this.#putBack([handed.entry]);
      this.#serve();
    }
    return Promise.resolve();
  }
}

/** What the sink does with one send: take it, fail with an error, or never answer. */
export type SendResult = 'ok' | 'hang' | Error;

interface Hanging {
  readonly text: string;
  resolve(): void;
  reject(error: unknown): void;
}

/** A sink: records confirmed messages; scripted per text or by a behaviour function. */
export class FakeSink implements Sink {
  readonly connects = new ConnectScript();
  /** Confirmed messages, in order. */
  readonly sent: Message[] = [];
  /** Every send attempt: text, time, JMSXDeliveryCount and JMSRedelivered as sent. */
  readonly attempts: { text: string; at: number; deliveryCount: number; redelivered: boolean }[] = [];
  /** Decides each send; the default consults `failures` and `poisoned`. */
  behaviour: (m: Message, attempt: number) => SendResult;
  /** Text → how many next sends of it fail (with `error`). */
  readonly failures = new Map<string, number>();
  /** Texts the sink refuses as poison. */
  readonly poisoned = new Set<string>();
  /** Texts whose every send makes the target drop the connection (as Kafka does with a record over its request size). */
  readonly connectionKillers = new Set<string>();
  /** Error the scripted failures use. */
  error: Error = new Error('target refused the message');
  #connected = false;
  #hanging: Hanging[] = [];

  constructor(
    readonly clock: FakeClock,
    readonly log: string[] = [],
    readonly label = 'send',
  ) {
    this.behaviour = (m) => {
      const text = textOf(m);
      if (this.poisoned.has(text)) return new PoisonMessageError(`'${text}' can never be delivered`);
      const left = this.failures.get(text) ?? 0;
      if (left > 0) {
        this.failures.set(text, left - 1);
        return this.error;
      }
      return 'ok';
    };
  }

  /** Texts confirmed, in order. */
  get texts(): string[] {
    return this.sent.map(textOf);
  }

  /** Sends waiting for a confirm. */
  get hanging(): number {
    return this.#hanging.length;
  }

  get connected(): boolean {
    return this.#connected;
  }

  /** Makes the next `times` sends of `text` fail. */
  failNext(text: string, times: number, error?: Error): void {
    this.failures.set(text, times);
    if (error) this.error = error;
  }

  /** Makes every send of `text` back off (BackOffError with `delayMs`) `times` times. */
  backOff(text: string, times: number, delayMs?: number): void {
    this.failNext(text, times, new BackOffError('target is full', delayMs));
  }

  /** Every send hangs until `confirmAll()`. */
  hangAll(): void {
    this.behaviour = () => 'hang';
  }

  /** Confirms every hanging send. */
  confirmAll(): void {
    for (const hanging of this.#hanging.splice(0)) hanging.resolve();
  }

  connect(_signal: AbortSignal): Promise<void> {
    try {
      this.connects.attempt(this.clock.now());
    } catch (error) {
      return Promise.reject(error);
    }
    this.#connected = true;
    return Promise.resolve();
  }

  send(m: Message, signal: AbortSignal): Promise<void> {
    const text = textOf(m);
    this.attempts.push({
      text,
      at: this.clock.now(),
      deliveryCount: m.deliveryCount,
      redelivered: m.getJMSRedelivered(),
    });
    if (!this.#connected) return Promise.reject(new NotConnectedError('fake sink is not connected'));
    if (this.connectionKillers.has(text)) {
      this.log.push(`${this.label} lost the connection on ${text}`);
      this.drop();
      return Promise.reject(new NotConnectedError('fake sink connection lost'));
    }
    const attempt = this.attempts.filter((a) => a.text === text).length;
    const result = this.behaviour(m, attempt);
    if (result instanceof Error) {
      this.log.push(`${this.label} failed ${text}`);
      return Promise.reject(result);
    }
    if (result === 'ok') {
      this.#confirm(m);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.#hanging = this.#hanging.filter((h) => h !== hanging);
        reject(signal.reason as unknown);
      };
      const hanging: Hanging = {
        text,
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          this.#confirm(m);
          resolve();
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#hanging.push(hanging);
    });
  }

  /** The broker connection drops: hanging sends fail, later sends fail until reconnected. */
  drop(): void {
    this.#connected = false;
    for (const hanging of this.#hanging.splice(0))
      hanging.reject(new NotConnectedError('fake sink connection lost'));
  }

  close(): Promise<void> {
    this.drop();
    return Promise.resolve();
  }

  #confirm(m: Message): void {
    this.sent.push(m);
    this.log.push(`${this.label} ${textOf(m)}`);
  }
}

/** Wraps a real sink and fails chosen sends first (by text), to test retries against a real target. */
export class FlakySink implements Sink {
  /** Text → how many next sends of it fail. */
  readonly failures = new Map<string, number>();
  /** Texts refused as poison. */
  readonly poisoned = new Set<string>();

  constructor(readonly inner: Sink) {}

  connect(signal: AbortSignal): Promise<void> {
    return this.inner.connect(signal);
  }

  send(m: Message, signal: AbortSignal): Promise<void> {
    const text = textOf(m);
    if (this.poisoned.has(text)) return Promise.reject(new PoisonMessageError(`'${text}' is poison`));
    const left = this.failures.get(text) ?? 0;
    if (left > 0) {
      this.failures.set(text, left - 1);
      return Promise.reject(new Error('target refused the message'));
    }
    return this.inner.send(m, signal);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** A logger that keeps what it was told. */
export class RecordingLogger implements EngineLogger {
  readonly entries: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  error(fields: Record<string, unknown>, message: string): void {
    this.entries.push({ level: 'error', message, fields });
  }
  warn(fields: Record<string, unknown>, message: string): void {
    this.entries.push({ level: 'warn', message, fields });
  }
  info(fields: Record<string, unknown>, message: string): void {
    this.entries.push({ level: 'info', message, fields });
  }
  debug(fields: Record<string, unknown>, message: string): void {
    this.entries.push({ level: 'debug', message, fields });
  }
  at(level: string): string[] {
    return this.entries.filter((e) => e.level === level).map((e) => e.message);
  }
}

/**
 * A bridge over a fake source and sink, fake clock, recording logger, and fixed jitter;
 * `makeSink` gives another fake sink (one that takes batches).
 */
export function fakeBridge<S extends FakeSink = FakeSink>(
  config: Partial<BridgeConfig> = {},
  options: Partial<BridgeOptions> = {},
  makeSink: (clock: FakeClock, log: string[]) => S = (clock, log) => new FakeSink(clock, log) as S,
) {
  const clock = new FakeClock();
  const log: string[] = [];
  const source = new FakeSource(clock, log);
  const sink = makeSink(clock, log);
  const logger = new RecordingLogger();
  const bridge = new Bridge(
    {
      name: 'b1',
      source,
      sink,
      retry: { delay: { kind: 'fixed', ms: 1_000 }, limit: -1 },
      reconnect: { minMs: 100, increaseFactor: 2, maxMs: 1_000 },
      ...config,
    },
    { clock, logger, random: () => 0.5, ...options },
  );
  return { clock, log, source, sink, logger, bridge };
}

/** Lets the runtime's promise chains run to rest (several rounds of `settle`). */
export async function idle(): Promise<void> {
  for (let i = 0; i < 4; i++) await settle();
}

/**
 * A {@link FakeSink} that also takes batches: each message goes as `send` would (the same
 * scripts), results per message with the SPI's ordering rule (`OrderedBatches`). `inOrder`
 * (default) writes nothing of a batch after a failure that is not poison, as a sink writing one
 * stream in order does; otherwise it writes on (pipelined) and the rule reports the rest behind.
 * `holdBatches` keeps each batch unanswered until `releaseBatch()`.
 */
export class FakeBatchSink extends FakeSink {
  /** The texts of each batch handed over, in order. */
  readonly batches: string[][] = [];
  maxBatchesInFlight = 1;
  inOrder = true;
  holdBatches = false;
  /** The target stream of a message (a Kafka partition); default one stream. */
  streamOf: ((m: Message) => string) | undefined;
  /** The most batches that were unanswered at once. */
  mostInFlight = 0;
  #inFlight = 0;
  #ordered = new OrderedBatches();
  #held: (() => void)[] = [];

  /** Batches waiting for `releaseBatch()`. */
  get heldBatches(): number {
    return this.#held.length;
  }

  /** Answers the oldest held batch. */
  releaseBatch(): void {
    this.#held.shift()?.();
  }

  override connect(signal: AbortSignal): Promise<void> {
    this.#ordered = new OrderedBatches();
    return super.connect(signal);
  }

  async sendBatch(batch: readonly Message[], signal: AbortSignal): Promise<readonly BatchResult[]> {
    this.batches.push(batch.map(textOf));
    const turn = this.#ordered.begin();
    this.#inFlight++;
    this.mostInFlight = Math.max(this.mostInFlight, this.#inFlight);
    try {
      if (this.holdBatches)
        await new Promise<void>((resolve, reject) => {
          const release = () => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          };
          const onAbort = () => {
            this.#held = this.#held.filter((held) => held !== release);
            reject(signal.reason as unknown);
          };
          signal.addEventListener('abort', onAbort, { once: true });
          this.#held.push(release);
        });
      const raw: BatchResult[] = [];
      let failed = false;
      for (const m of batch) {
        if (failed && this.inOrder) {
          raw.push({ ok: true }); // not written: the rule reports it behind the failure
          continue;
        }
        try {
          await this.send(m, signal);
          raw.push({ ok: true });
        } catch (error) {
          raw.push({ ok: false, error: error as Error });
          if (!isPoison(error)) failed = true;
        }
      }
      const streamOf = this.streamOf;
      return await turn.finish(raw, streamOf ? (i) => streamOf(batch[i]!) : undefined);
    } finally {
      this.#inFlight--;
    }
  }
}
