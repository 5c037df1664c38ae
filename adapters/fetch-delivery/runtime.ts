import { bareHost } from '../../core/net/address.ts';
import type { Transport } from './transport.ts';

/** The JavaScript runtime this process runs on. */
export type Runtime = 'bun' | 'deno' | 'node';

/**
 * The one place the delivery adapter asks which runtime it is on. Bun and Deno both publish their
 * version next to Node's in `process.versions` (Deno 2 defines `process` globally), so no global sniffing
 * is needed.
 */
export function detectRuntime(): Runtime {
  const versions = typeof process === 'undefined' ? undefined : process.versions;
  if (versions?.bun) return 'bun';
  if (versions?.deno) return 'deno';
  return 'node';
}

/**
 * The runtime's transport, made on first use so that Bun never loads undici (Bun's own `undici` module
 * is a stub): Bun's fetch on Bun, undici elsewhere, or the one given (tests).
 */
export function lazyTransport(runtime: Runtime, extraCaPem: string | undefined, given?: Transport) {
  let transport: Promise<Transport> | undefined;
  const options = { extraCaPem };
  return {
    get(): Promise<Transport> {
      transport ??= given
        ? Promise.resolve(given)
        : runtime === 'bun'
          ? import('./bun-transport.ts').then((m) => m.createBunTransport(options))
          : import('./node-transport.ts').then((m) => m.createUndiciTransport(options));
      return transport;
    },
    async close(): Promise<void> {
      if (transport) await (await transport.catch(() => undefined))?.close();
    },
  };
}

/** A host map (DELIVERY_HOST_MAP) keyed as resolveAndVet looks names up. */
export const hostMapOf = (map: Record<string, string>): ReadonlyMap<string, string> =>
  new Map(Object.entries(map).map(([host, ip]) => [bareHost(host), ip.trim()]));
