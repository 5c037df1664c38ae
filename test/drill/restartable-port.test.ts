import { describe, expect, it } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { ephemeralRangeStart, freeRestartablePort } from '../../scripts/free-port.ts';

const RANGE = '/proc/sys/net/ipv4/ip_local_port_range';
// Linux says where its range starts; elsewhere the drills assume IANA's.
const ephemeralLow = existsSync(RANGE)
  ? Number(readFileSync(RANGE, 'utf8').trim().split(/\s+/)[0])
  : ephemeralRangeStart();

describe('the port of a server the drills restart', () => {
  it('lies below the ephemeral range, where no outgoing connection is given a local port', async () => {
    const ports = await Promise.all(Array.from({ length: 20 }, () => freeRestartablePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      expect(port).toBeLessThan(ephemeralLow);
    }
    // Chosen at random: twenty drills at once do not all get one port.
    expect(new Set(ports).size).toBeGreaterThan(1);
  });

  it('is free: a server listens on it', async () => {
    const port = await freeRestartablePort();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
