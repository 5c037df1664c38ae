/** The server on Node, through @elysiajs/node: `bun build` this file for Node (see scripts/runtimes.ts). */
import { node } from '@elysiajs/node';
import { serve } from './serve.ts';

await serve('node', {
  adapter: node(),
  async listen(service, config) {
    await new Promise<void>((resolve) => {
      service.app.listen({ port: config.port, hostname: config.host }, () => resolve());
    });
    const server = service.app.server!;
    return {
      port: server.port ?? config.port,
      close: async () => {
        await service.app.stop();
      },
    };
  },
});
