/**
 * The drills' webhook receiver: HTTPS on 127.0.0.1 with the test certificate, HTTP/1.1 with keep-alive,
 * written on node:tls so that it can misbehave as real receivers do: answer slowly, never answer, or
 * reset the connection. `fault(body)` decides per request; the body is handed to `onRequest` only when
 * the request is answered 204 (a delivery the service can count as done).
 */
import { createServer, type TLSSocket } from 'node:tls';
import { testTls } from '../../test/helpers/tls.ts';

export type Fault = 'none' | 'slow' | 'hang' | 'reset';

export interface DrillReceiver {
  port: number;
  url(path: string, host?: string): string;
  /** Requests answered with a fault, by kind. */
  faults: Record<Fault, number>;
  stop(): Promise<void>;
}

const HEADER_END = '\r\n\r\n';

export function startDrillReceiver(o: {
  onRequest: (body: string) => void;
  fault?: (body: string) => Fault;
  /** How long a slow answer takes. @default 1500 */
  slowMs?: number;
}): Promise<DrillReceiver> {
  const { certPem, keyPem } = testTls();
  const faults: Record<Fault, number> = { none: 0, slow: 0, hang: 0, reset: 0 };
  const sockets = new Set<TLSSocket>();
  const answer = (socket: TLSSocket, body: string) => {
    o.onRequest(body);
    if (!socket.destroyed) socket.write('HTTP/1.1 204 No Content\r\nconnection: keep-alive\r\n\r\n');
  };
  const server = createServer({ cert: certPem, key: keyPem }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (;;) {
        const end = buffer.indexOf(HEADER_END);
        if (end < 0) return;
        const head = buffer.subarray(0, end).toString('latin1');
        const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        const total = end + HEADER_END.length + length;
        if (buffer.length < total) return;
        const body = buffer.subarray(end + HEADER_END.length, total).toString('utf8');
        buffer = buffer.subarray(total);
        const fault = o.fault?.(body) ?? 'none';
        faults[fault]++;
        if (fault === 'none') answer(socket, body);
        else if (fault === 'slow') setTimeout(() => answer(socket, body), o.slowMs ?? 1500);
        else if (fault === 'reset') {
          // An RST where the runtime can send one, else a plain close: either way no answer arrives.
          const s = socket as TLSSocket & { resetAndDestroy?: () => void };
          if (typeof s.resetAndDestroy === 'function') s.resetAndDestroy();
          else socket.destroy();
          return;
        }
        // 'hang': no answer ever; the service's timeout ends the attempt and closes the connection.
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        port,
        url: (path, host = 'hooks.test') => `https://${host}:${port}${path}`,
        faults,
        stop: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
