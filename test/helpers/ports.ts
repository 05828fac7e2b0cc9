import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on: one the system just gave out and that was closed again.
 * Tests point clients at it to see how they handle a broker that is not there.
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
