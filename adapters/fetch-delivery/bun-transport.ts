import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import {
  type PinnedRequest,
  readCapped,
  type Transport,
  type TransportOptions,
  urlHost,
} from './transport.ts';

/**
 * Bun's fetch, pinned: it connects to the vetted IP literal, sends the original Host header, and takes
 * `tls.serverName` for both SNI and certificate verification (checked on Bun 1.4.5: a certificate for
 * hooks.test verifies at 127.0.0.1 with serverName hooks.test and fails with any other name, even over a
 * warm keep-alive connection). Bun pools keep-alive connections itself, so there is nothing to close.
 */
export function createBunTransport(options: TransportOptions): Transport {
  const ca = trustedCa(options.extraCaPem);
  return {
    name: 'bun-fetch',
    async send(request: PinnedRequest) {
      const response = await fetch(`https://${urlHost(request.address)}:${request.port}${request.path}`, {
        method: 'POST',
        headers: [['host', request.host], ...request.headers],
        body: request.body,
        redirect: 'manual',
        signal: request.signal,
        tls: {
          ...(request.serverName ? { serverName: request.serverName } : {}),
          ...(ca ? { ca } : {}),
        },
      });
      const { body, truncated } = await readCapped(response.body, request.maxResponseBytes);
      return { status: response.status, body, truncated };
    },
    async close() {},
  };
}

/**
 * The CA option for fetch: none when Bun's default store (its bundled roots plus the NODE_EXTRA_CA_CERTS
 * file it read at start-up) already holds everything, else the roots and the extra PEM.
 */
function trustedCa(extraCaPem: string | undefined): Buffer | undefined {
  if (!extraCaPem || loadedAtStartup(extraCaPem)) return undefined;
  // Bun re-reads the CA option on every request: one pre-joined buffer costs a third less than an array
  // of strings, and skipping the option (above) is four times faster still, hence that check.
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
