/**
 * A loopback TCP relay in front of a broker, which a test can cut: clients connect to the relay's
 * port, every byte is passed on both ways, and the test decides when the connection breaks,
 * without touching the broker other tests share. `holdAfter(bytes)` lets that many more bytes
 * through towards the broker and holds the rest back (the broker's answers still come through),
 * so a test can break a connection in the middle of a batch at a known point.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpRelay {
  /** The relay's loopback port. */
  readonly port: number;
  /** Bytes passed towards the broker so far, on every connection. */
  readonly forwarded: number;
  /** Passes `bytes` more towards the broker, then holds back what the clients write. */
  holdAfter(bytes: number): void;
  /** Breaks every connection at once (both sockets destroyed); new connections still work. */
  cut(): void;
  /** Cuts and stops listening. */
  close(): Promise<void>;
}

export async function tcpRelay(host: string, port: number): Promise<TcpRelay> {
  const pairs = new Set<{ client: Socket; broker: Socket }>();
  let forwarded = 0;
  let budget = Infinity;
  const server: Server = createServer((client) => {
    const broker = connect(port, host);
    const pair = { client, broker };
    pairs.add(pair);
    const end = (): void => {
      pairs.delete(pair);
      client.destroy();
      broker.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (budget <= 0) return;
      const part = chunk.length <= budget ? chunk : chunk.subarray(0, budget);
      budget -= part.length;
      forwarded += part.length;
      broker.write(part);
    });
    broker.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', end).on('close', end);
    broker.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = (): void => {
    for (const { client, broker } of pairs) {
      client.destroy();
      broker.destroy();
    }
    pairs.clear();
    budget = Infinity;
  };
  return {
    port: (server.address() as { port: number }).port,
    get forwarded() {
      return forwarded;
    },
    holdAfter(bytes) {
      budget = bytes;
    },
    cut,
    close: () => {
      cut();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
