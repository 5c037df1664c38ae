/** The server on Deno: `deno run -A entry/deno.ts`. */
import { serve } from './serve.ts';

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
    handler: (request: Request, info: { remoteAddr: { hostname?: string } }) => Response | Promise<Response>,
  ): { addr: { port: number }; shutdown(): Promise<void> };
};

await serve('deno', {
  async listen(fetch, at) {
    const server = Deno.serve(
      { port: at.port, hostname: at.host, onListen: () => {} },
      // The socket's address goes with the request: the client address events and rate limits use.
      (request, info) => fetch(request, info.remoteAddr.hostname),
    );
    return { port: server.addr.port, close: () => server.shutdown() };
  },
});
