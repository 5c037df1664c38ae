/** The server on Bun: `npm start`. */
import { serve } from './serve.ts';

await serve('bun', {
  async listen(service, config) {
    const server = Bun.serve({
      port: config.port,
      hostname: config.host,
      fetch: service.fetch,
      // The app enforces BODY_LIMIT with the envelope; this is only a backstop for the server itself.
      maxRequestBodySize: config.bodyLimit * 2,
    });
    return {
      port: server.port ?? config.port,
      // Stops accepting connections; requests in flight finish first.
      close: () => server.stop(false),
    };
  },
});
