import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { Pool } from 'undici';
import {
  type PinnedRequest,
  readCapped,
  type Transport,
  type TransportOptions,
  urlHost,
} from './transport.ts';

/** Pools kept at once; the least recently used is closed beyond this. */
const MAX_POOLS = 256;

/**
 * undici, for Node and Deno (through Deno's node:tls). One keep-alive Pool per (vetted address, port,
 * server name): the pool's origin is the IP literal, so undici never resolves the name itself, and the
 * server name goes in `connect.servername` for SNI and certificate verification. undici also derives the
 * server name from the Host header we send, which is the same name. Keying pools by name as well keeps
 * two hostnames that share an address from sharing a connection verified for only one of them.
 */
export function createUndiciTransport(options: TransportOptions): Transport {
  // Building the context once matters: a `ca` array in the connect options is parsed again for every new
  // connection (about 4x slower on Node 20 with 140 roots).
  const secureContext: SecureContext | undefined = options.extraCaPem
    ? createSecureContext({ ca: [...rootCertificates, options.extraCaPem] })
    : undefined;
  const pools = new Map<string, Pool>();

  const poolFor = (request: PinnedRequest): Pool => {
    const key = `${request.address}|${request.port}|${request.serverName ?? ''}`;
    const existing = pools.get(key);
    if (existing) {
      pools.delete(key);
      pools.set(key, existing);
      return existing;
    }
    const pool = new Pool(`https://${urlHost(request.address)}:${request.port}`, {
      connect: {
        ...(secureContext ? { secureContext } : {}),
        ...(request.serverName ? { servername: request.serverName } : {}),
      },
    });
    pools.set(key, pool);
    if (pools.size > MAX_POOLS) {
      const [oldestKey, oldest] = pools.entries().next().value as [string, Pool];
      pools.delete(oldestKey);
      oldest.close().catch(() => {});
    }
    return pool;
  };

  return {
    name: 'undici',
    async send(request) {
      // No queue of our own: the pool's connections are not limited, so the request goes out at once.
      request.admitted();
      const response = await poolFor(request).request({
        path: request.path,
        method: request.method,
        headers: [['host', request.host], ...request.headers].flat(),
        body: request.body,
        signal: request.signal,
      });
      // Breaking out of the iteration destroys the body stream, and with it the connection.
      const { body, truncated } = await readCapped(response.body, request.maxResponseBytes);
      return { status: response.statusCode, headers: response.headers, body, truncated };
    },
    async close() {
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((p) => p.close().catch(() => {})));
    },
  };
}
