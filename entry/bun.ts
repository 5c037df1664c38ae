/** The server on Bun: `npm start`. */
import { serve } from './serve.ts';

await serve('bun', {
  async listen(service, config) {
    const server = Bun.serve({
      port: config.port,
      hostname: config.host,
      fetch: service.fetch,
      // The app refuses bodies over BODY_LIMIT with the envelope; this is only the server's own backstop
      // (Bun's default), far enough above it that clients see the envelope, not Bun's bare 413.
      maxRequestBodySize: Math.max(config.bodyLimit * 2, 128 * 1024 * 1024),
    });
    return {
      port: server.port ?? config.port,
      // Stops accepting connections; requests in flight finish first.
      close: () => server.stop(false),
    };
  },
});
