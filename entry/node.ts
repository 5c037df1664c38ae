/** The server on Node, through @elysiajs/node: `bun build` this file for Node (see scripts/runtimes.ts). */
import { node } from '@elysiajs/node';
import { serve as listen } from 'srvx';
import { serve } from './serve.ts';

await serve('node', {
  adapter: node(),
  async listen(service, config) {
    // srvx is the server @elysiajs/node listens with; called directly so requests pass the body limit.
    const server = listen({ port: config.port, hostname: config.host, fetch: service.fetch, silent: true });
    await server.ready();
    return {
      port: Number(new URL(server.url!).port),
      close: () => server.close(),
    };
  },
});
