/**
 * A fake connector for configuration and gateway tests: `type: memory`, a broker that is an
 * in-process list per topic. Its sink stores what it is sent; its source hands out what a test
 * puts there and records settlements. The context each endpoint got is kept for inspection.
 */
import {
  type ConnectorContext,
  type ConnectorDefinition,
  ConfigValidationError,
  type Delivery,
  type Message,
  type Outcome,
  type Sink,
  type Source,
  defineSchema,
} from '../../../src/spi/index.js';
import { ConnectorRegistry } from '../../../src/spi/connector-registry.js';
import { type Clock, systemClock } from '../../../src/index.js';

export interface MemoryConfig {
  readonly url: string;
  readonly topic: string;
  readonly prefetch: number;
  /** Sink: each send takes this long (and gives up when aborted). */
  readonly sendDelayMs: number;
  /** Sink: sends never finish, whatever the abort signal says. */
  readonly hang: boolean;
  readonly key?: { readonly from: string; readonly expression?: string };
}

/** Topics of the fake broker, and what each endpoint was created with. */
export class MemoryBroker {
  readonly topics = new Map<string, Message[]>();
  readonly settled: { topic: string; outcome: Outcome['kind'] }[] = [];
  readonly created: { role: 'source' | 'sink'; config: MemoryConfig; context: ConnectorContext }[] = [];
  readonly #waiters: (() => void)[] = [];
  readonly #changeListeners = new Set<() => void>();

  publish(topic: string, message: Message): void {
    this.#topic(topic).push(message);
    for (const wake of this.#waiters.splice(0)) wake();
    this.#changed();
  }

  /**
   * Calls `listener` whenever a topic, a settlement or a send under way changes (tests wait on
   * this rather than on time); returns the function that removes it.
   */
  onChange(listener: () => void): () => void {
    this.#changeListeners.add(listener);
    return () => this.#changeListeners.delete(listener);
  }

  #changed(): void {
    for (const listener of this.#changeListeners) listener();
  }

  #topic(topic: string): Message[] {
    let list = this.topics.get(topic);
    if (!list) this.topics.set(topic, (list = []));
    return list;
  }

  connector(): ConnectorDefinition<MemoryConfig> {
    return {
      type: 'memory',
      summary: 'An in-process fake broker.',
      config: defineSchema<MemoryConfig>({
        url: {
          type: 'string',
          required: true,
          secret: true,
          pattern: '^memory://',
          description: 'Broker URL.',
        },
        topic: { type: 'string', required: true, description: 'The topic.' },
        prefetch: { type: 'integer', minimum: 1, default: 10, description: 'Read ahead.' },
        sendDelayMs: { type: 'integer', minimum: 0, default: 0, description: 'Sink: ms per send.' },
        hang: { type: 'boolean', default: false, description: 'Sink: sends never finish.' },
        key: {
          type: 'object',
          description: 'Sink: the key.',
          fields: {
            from: { type: 'enum', values: ['none', 'xpath'], default: 'none', description: 'Where from.' },
            expression: { type: 'string', description: 'The XPath.' },
          },
        },
      }),
      createSource: (config, context) => {
        if (config.topic.includes('#')) throw new ConfigValidationError('topic', 'must not contain #');
        this.created.push({ role: 'source', config, context });
        // As a careless client library might: the gateway must mask it.
        context.logger.info({ url: config.url }, `source for ${config.url}`);
        return this.#source(config.topic);
      },
      createSink: (config, context) => {
        this.created.push({ role: 'sink', config, context });
        return this.#sink(config, context.clock ?? systemClock);
      },
    };
  }

  #source(topic: string): Source {
    const waitFor = () => new Promise<void>((resolve) => this.#waiters.push(resolve));
    return {
      connect: () => Promise.resolve(),
      receive: async (signal: AbortSignal): Promise<Delivery> => {
        for (;;) {
          signal.throwIfAborted();
          const message = this.#topic(topic).shift();
          if (message)
            return {
              message,
              settle: (outcome) => {
                this.settled.push({ topic, outcome: outcome.kind });
                if (outcome.kind === 'retry') this.#topic(topic).unshift(message);
                this.#changed();
                return Promise.resolve();
              },
            };
          await new Promise<void>((resolve, reject) => {
            const abort = () => reject(signal.reason as Error);
            signal.addEventListener('abort', abort, { once: true });
            void waitFor().then(() => {
              signal.removeEventListener('abort', abort);
              resolve();
            });
          });
        }
      },
      close: () => Promise.resolve(),
    };
  }

  /** `sendDelayMs` waits on the bridge's clock, so a gateway on a fake clock sends when the test moves it. */
  #sink({ topic, sendDelayMs, hang }: MemoryConfig, clock: Clock): Sink {
    return {
      connect: () => Promise.resolve(),
      send: async (message, signal) => {
        this.#changed();
        if (hang) await new Promise<never>(() => {});
        if (sendDelayMs > 0)
          await new Promise<void>((resolve, reject) => {
            const timer = clock.setTimer(resolve, sendDelayMs);
            signal.addEventListener(
              'abort',
              () => {
                clock.clearTimer(timer);
                reject(signal.reason as Error);
              },
              { once: true },
            );
          });
        this.#topic(topic).push(message);
        this.#changed();
      },
      close: () => Promise.resolve(),
    };
  }
}

/** A registry with the fake connector, and a sink-only one (`type: sinkonly`). */
export function fakeRegistry(broker = new MemoryBroker()): ConnectorRegistry {
  const sinkOnly: ConnectorDefinition = {
    type: 'sinkonly',
    summary: 'Can only be a target.',
    config: defineSchema({ url: { type: 'string', required: true, description: 'URL.' } }),
    createSink: () => ({
      connect: () => Promise.resolve(),
      send: () => Promise.resolve(),
      close: () => Promise.resolve(),
    }),
  };
  return new ConnectorRegistry([broker.connector(), sinkOnly]);
}
