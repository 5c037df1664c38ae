import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import { createGate } from './gate.ts';
import {
  type PinnedRequest,
  readCapped,
  type Transport,
  type TransportOptions,
  urlHost,
} from './transport.ts';

/** Requests in their first YOUNG_MS at once: the idle TLS connections Bun pools (see createGate). */
const POOLED_TLS_CONNECTIONS = 64;
/**
 * How long a request keeps its slot before it counts as slow and lets another start. Long enough that
 * a receiver slowed by load is not sent more connections than Bun pools: at 50 ms, a full-scale replica
 * drill (three replicas, 100,000 deliveries to one receiver) opened connections faster than the
 * receiver could accept them, and 0.1 to 1.5 % of attempts passed a 10 s timeout (p99 2.7 s); at 500 ms
 * none did (p99 0.5 s), and the burst with a replica killed finished in 42 s rather than 65.
 */
const YOUNG_MS = 500;
/** Sessions kept at most: one per server name delivered to lately, each with its keep-alive pool. */
const MAX_SESSIONS = 256;

/**
 * Bun's fetch, pinned: it connects to the vetted IP literal, sends the original Host header, and takes
 * `tls.serverName` for both SNI and certificate verification (checked on Bun 1.4.5: a certificate for
 * hooks.test verifies at 127.0.0.1 with serverName hooks.test and fails with any other name, even over a
 * warm keep-alive connection).
 *
 * The TLS options live on a `Bun.FetchSession` per server name rather than on each request: Bun then
 * builds the TLS context (the CA bundle parsed, SNI set) once per session instead of once per request,
 * which halved the CPU of a POST (90 to 53 us, 15k to 22k POSTs/s with an extra CA on loopback). A
 * session never shares its connections with another, so a connection verified for one name is never
 * reused for another. The least recently used session is closed beyond MAX_SESSIONS (its requests in
 * flight finish).
 */
export function createBunTransport(options: TransportOptions): Transport {
  const ca = trustedCa(options.extraCaPem);
  const sessions = new Map<string, Bun.FetchSession>();
  const gate = createGate(POOLED_TLS_CONNECTIONS, YOUNG_MS);

  function sessionFor(serverName: string | undefined): Bun.FetchSession {
    const key = serverName ?? '';
    let session = sessions.get(key);
    if (session) {
      // Most recently used last: the first entry is the one to evict.
      sessions.delete(key);
      sessions.set(key, session);
      return session;
    }
    session = new Bun.FetchSession({
      tls: { ...(serverName ? { serverName } : {}), ...(ca ? { ca } : {}) },
    });
    sessions.set(key, session);
    if (sessions.size > MAX_SESSIONS) {
      const [oldest, evicted] = sessions.entries().next().value!;
      sessions.delete(oldest);
      evicted.close();
    }
    return session;
  }

  return {
    name: 'bun-fetch',
    async send(request: PinnedRequest) {
      const leave = await gate.enter(request.signal);
      request.admitted();
      try {
        const response = await fetch(`https://${urlHost(request.address)}:${request.port}${request.path}`, {
          method: request.method,
          headers: [['host', request.host], ...request.headers],
          body: request.body,
          redirect: 'manual',
          signal: request.signal,
          session: sessionFor(request.serverName),
        });
        const { body, truncated } = await readCapped(response.body, request.maxResponseBytes);
        return { status: response.status, headers: response.headers, body, truncated };
      } finally {
        // The body is read: the connection is back in the pool for the next request to take.
        leave();
      }
    },
    async close() {
      for (const session of sessions.values()) session.close();
      sessions.clear();
    },
  };
}

/**
 * The CA option for fetch: none when Bun's default store (its bundled roots plus the NODE_EXTRA_CA_CERTS
 * file it read at start-up) already holds everything, else the roots and the extra PEM.
 */
function trustedCa(extraCaPem: string | undefined): Buffer | undefined {
  if (!extraCaPem || loadedAtStartup(extraCaPem)) return undefined;
  // One pre-joined buffer: Bun parses it once per session (an array of strings costs a third more).
  return Buffer.from([...rootCertificates, extraCaPem].join('\n'));
}

function loadedAtStartup(extraCaPem: string): boolean {
  const path = process.env.NODE_EXTRA_CA_CERTS;
  if (!path) return false;
  try {
    return readFileSync(path, 'utf8') === extraCaPem;
  } catch {
    return false;
  }
}
