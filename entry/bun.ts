/** The server on Bun: `npm start`. */
import { serve } from './serve.ts';

await serve('bun', {
  async listen(service, config) {
    service.app.listen({ port: config.port, hostname: config.host });
    const server = service.app.server!;
    return {
      port: server.port ?? config.port,
      // Stops accepting connections; requests in flight finish first.
      close: async () => {
        await server.stop(false);
      },
    };
  },
});
