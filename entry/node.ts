/** The server on Node, through @elysiajs/node: `npm run start:node`. */
import type { Socket } from 'node:net';
import { node } from '@elysiajs/node';
import { serve as listen } from 'srvx';
import { errorEnvelope } from '../core/http/envelope.ts';
import { serve } from './serve.ts';

/** Node's own refusals (before any handler runs), answered in the envelope instead of a bare status line. */
const CLIENT_ERRORS: Record<string, [number, string, string]> = {
  HPE_INVALID_METHOD: [501, 'Not Implemented', 'this method is not implemented by this service'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'the request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'the request did not arrive in time'],
};

function answerClientError(error: Error & { code?: string }, socket: Socket) {
  if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
  const [status, reason, message] = CLIENT_ERRORS[error.code ?? ''] ?? [
    400,
    'Bad Request',
    'the request is not valid HTTP',
  ];
  const body = JSON.stringify(errorEnvelope(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

await serve('node', {
  adapter: node(),
  async listen(fetch, at, config) {
    // srvx is the server @elysiajs/node listens with; called directly so requests pass the body limit.
    const server = listen({
      port: at.port,
      hostname: at.host,
      // WORKERS above 1: a shared (not exclusive) listen, which Node's cluster hands to every worker.
      reusePort: at.shared ?? false,
      // srvx's request carries the socket's remote address as `ip` (X-Forwarded-For is not trusted there).
      fetch: (request) =>
        fetch(request, 'ip' in request && typeof request.ip === 'string' ? request.ip : undefined),
      silent: true,
      // Node's own limit (300 s) kept past REQUEST_TIMEOUT_MS, so a stalled body gets the app's 408.
      node: { requestTimeout: config.requestTimeoutMs + 5000 },
    });
    server.node?.server?.on('clientError', answerClientError);
    await server.ready();
    return {
      port: Number(new URL(server.url!).port),
      close: () => server.close(),
    };
  },
});
