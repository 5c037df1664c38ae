import { createConnection, createServer, type Socket } from 'node:net';
import { DATABASE_URL } from './support.ts';

/**
 * A loopback TCP proxy to the real Postgres, for tests of the driver on a connection they can hold back,
 * reset or end. `wire` gets each client's socket and its upstream to Postgres, and relays what it wants
 * (neither direction is relayed for it); when either socket ends or fails, both are closed.
 */
export async function postgresProxy(
  wire: (client: Socket, upstream: Socket) => void,
): Promise<{ url: string; close(): void }> {
  const target = new URL(DATABASE_URL);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    wire(client, upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(DATABASE_URL);
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    close() {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}
