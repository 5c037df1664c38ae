import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on now, chosen by the kernel. A port computed from the
 * process id can fall in the ephemeral range and be held by an outgoing connection, so a server told
 * to listen there fails; asking the kernel avoids that.
 */
export const freePort = (): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
