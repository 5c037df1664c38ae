/** The server on Bun: `npm start`. */
import { serve } from './serve.ts';

await serve('bun', {
  async listen(fetch, at, config) {
    const server = Bun.serve({
      port: at.port,
      hostname: at.host,
      // WORKERS above 1: every worker listens on the port and the kernel spreads connections among them.
      reusePort: at.shared ?? false,
      // The socket's address goes with the request: the client address events and rate limits use.
      fetch: (request, server) => fetch(request, server.requestIP(request)?.address),
      // The app refuses bodies over BODY_LIMIT with the envelope; this is only the server's own backstop
      // (Bun's default), far enough above it that clients see the envelope, not Bun's bare 413.
      maxRequestBodySize: Math.max(config.bodyLimit * 2, 128 * 1024 * 1024),
      // Bun closes a connection idle this many seconds (10 by default): kept past REQUEST_TIMEOUT_MS so a
      // stalled body gets the app's 408 rather than a silent close.
      idleTimeout: Math.min(255, Math.ceil(config.requestTimeoutMs / 1000) + 5),
    });
    return {
      port: server.port ?? at.port,
      // Stops accepting connections; requests in flight finish first.
      close: () => server.stop(false),
    };
  },
});
