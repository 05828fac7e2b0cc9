/** Builds an engine on a memory store and a fake clock, with a started connection, for unit tests. */
import {
  ConnectionFactory,
  type ConnectionFactoryOptions,
  JmsEngine,
  MemoryStore,
  type EngineOptions,
} from '../../src/index.js';
import { FakeClock } from './fake-clock.js';

export interface TestEngine {
  engine: JmsEngine;
  clock: FakeClock;
  store: MemoryStore;
  factory: ConnectionFactory;
  /** Closes every connection made through `connect` and the engine. */
  close(): Promise<void>;
  /** A new connection, started unless told otherwise. */
  connect(options?: {
    start?: boolean;
    clientId?: string;
  }): ReturnType<ConnectionFactory['createConnection']>;
}

export function testEngine(
  factoryOptions: ConnectionFactoryOptions = {},
  engineOptions: Partial<EngineOptions> = {},
): TestEngine {
  const clock = new FakeClock();
  const store = new MemoryStore();
  const engine = new JmsEngine({ store, clock, ...engineOptions });
  const factory = new ConnectionFactory(engine, factoryOptions);
  const connections: ReturnType<ConnectionFactory['createConnection']>[] = [];
  return {
    engine,
    clock,
    store,
    factory,
    connect(options = {}) {
      const connection = factory.createConnection();
      if (options.clientId !== undefined) connection.setClientID(options.clientId);
      if (options.start ?? true) connection.start();
      connections.push(connection);
      return connection;
    },
    async close() {
      for (const connection of connections) await connection.close();
      await engine.close();
    },
  };
}
