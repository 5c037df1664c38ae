/**
 * The receivers of the webhooks benchmark, in a process of their own: a Bun.serve TLS server with the
 * test certificate (hooks.test) that answers 204 and reports, over IPC every 50 ms, when each request
 * arrived (epoch milliseconds, sub-millisecond) and which event it carried (the JWT's `sub`, decoded
 * without verification: checking signatures is the receiver's cost, not the service's).
 */
import { testTls } from '../../test/helpers/tls.ts';

const { certPem, keyPem } = testTls();
let batch: Array<[string, number]> = [];
const decoder = new TextDecoder();

const subOf = (jwt: string): string => {
  const part = jwt.slice(jwt.indexOf('.') + 1, jwt.lastIndexOf('.'));
  const json = decoder.decode(Uint8Array.fromBase64(part, { alphabet: 'base64url' }));
  return (JSON.parse(json) as { sub: string }).sub;
};

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  tls: { cert: certPem, key: keyPem },
  async fetch(request) {
    const body = await request.text();
    const at = performance.timeOrigin + performance.now();
    if (request.headers.get('content-type') === 'application/jwt') batch.push([subOf(body), at]);
    return new Response(null, { status: 204 });
  },
});

setInterval(() => {
  if (batch.length === 0) return;
  process.send?.(batch);
  batch = [];
}, 50);

process.send?.({ port: server.port });

// The benchmark owns this process: when it goes, so does the receiver.
process.on('disconnect', () => process.exit(0));
