/** One request, already vetted: the transport connects to `address` and nowhere else. */
export interface PinnedRequest {
  /** Upper case: POST for deliveries; GET or POST for SSO providers. */
  method: string;
  /** The vetted IP address to connect to (canonical form, no brackets). */
  address: string;
  port: number;
  /** Sent as the Host header: the URL's host and port as the receiver expects them. */
  host: string;
  /** SNI and the name the certificate must carry; undefined when the URL names an IP address. */
  serverName: string | undefined;
  /** Path and query of the URL. */
  path: string;
  /** Lower-case names, each once (repeated values already joined), without Host. */
  headers: Array<[string, string]>;
  body: string | Uint8Array<ArrayBuffer> | undefined;
  signal: AbortSignal;
  maxResponseBytes: number;
  /**
   * Called once the request leaves the transport's own queue for the network: the webhook's timeout
   * counts from then, so a delivery never times out for waiting behind this process's other requests.
   */
  admitted(): void;
}

/** What came back: the status, the header fields and at most `maxResponseBytes` of the body. */
export interface TransportResponse {
  status: number;
  /** As the runtime's client gives them (fetch's Headers, undici's object): deliveries never read them. */
  headers: Headers | Record<string, string | string[] | undefined>;
  body: Uint8Array<ArrayBuffer>;
  /** The receiver sent more than `maxResponseBytes`; the rest was never read. */
  truncated: boolean;
}

/** Sends pinned requests; throws on failure (the adapter classifies what it throws). */
export interface Transport {
  readonly name: string;
  send(request: PinnedRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

/** The options every transport receives. */
export interface TransportOptions {
  /** PEM text trusted in addition to the runtime's root certificates. */
  extraCaPem: string | undefined;
}

/** A response body: a web stream (fetch) or a Node stream (undici). */
export type BodySource = ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | null | undefined;

/**
 * Reads a body up to `max` bytes and stops: the stream is cancelled (which closes the connection) as soon
 * as one byte more than the cap has arrived, so a huge answer never sits in memory.
 */
export async function readCapped(
  source: BodySource,
  max: number,
): Promise<{ body: Uint8Array<ArrayBuffer>; truncated: boolean }> {
  const kept: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  // Returns false once the cap is passed.
  const keep = (chunk: Uint8Array): boolean => {
    const room = max - size;
    if (chunk.byteLength <= room) {
      kept.push(chunk);
      size += chunk.byteLength;
      return true;
    }
    if (room > 0) kept.push(chunk.subarray(0, room));
    size = max;
    truncated = true;
    return false;
  };
  if (source && 'getReader' in source) {
    const reader = source.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!keep(value)) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } else if (source) {
    // Leaving a for-await early destroys a Node stream.
    for await (const chunk of source) if (!keep(chunk)) break;
  }
  const body = new Uint8Array(size);
  let offset = 0;
  for (const chunk of kept) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, truncated };
}

/** Headers the transport owns: a caller's value would break framing or pinning, or is refused by undici. */
export const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
]);

/** The URL form of an address: IPv6 in brackets. */
export const urlHost = (address: string): string => (address.includes(':') ? `[${address}]` : address);
