import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on now, chosen by the kernel. A port computed from the
 * process id can fall in the ephemeral range and be held by an outgoing connection, so a server told
 * to listen there fails; asking the kernel avoids that.
 */
export const freePort = (): Promise<number> => listenOnce(0);

/**
 * A free port below the kernel's ephemeral range, for a server that is stopped and started again on
 * the same port. A port the kernel hands out can be taken while such a server is down: by an outgoing
 * connection given it as its local port, or by a client retrying against the stopped server that the
 * kernel connects to itself (same local and remote port). Then the server cannot listen again. No
 * outgoing connection is given a port below the range.
 */
export async function freeRestartablePort(): Promise<number> {
  const low = ephemeralRangeStart();
  const floor = Math.max(1024, Math.min(10_000, low - 1000));
  for (let tries = 0; tries < 50; tries++) {
    const port = floor + Math.floor(Math.random() * (low - floor));
    try {
      return await listenOnce(port);
    } catch {
      // Taken: try another.
    }
  }
  throw new Error(`no free port found between ${floor} and ${low - 1}`);
}

/**
 * The first port of the kernel's ephemeral range: Linux's setting, else Linux's default 32768, which
 * lies below the range of other systems too (IANA's starts at 49152).
 */
export function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 2000) return low;
  } catch {
    // Not Linux.
  }
  return 32768;
}

const listenOnce = (port: number): Promise<number> =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      const { port: bound } = s.address() as { port: number };
      s.close(() => resolve(bound));
    });
  });
