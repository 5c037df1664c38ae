import { connect } from 'node:net';

/** A server under test and the development organization its first start printed. */
export interface SmokeTarget {
  baseUrl: string;
  orgId: string;
  apiKey: string;
  /** The runtime serving, for what differs between them (Bun's parser drops unknown methods). */
  runtime: string;
  /** REQUEST_TIMEOUT_MS the server was started with. */
  requestTimeoutMs: number;
  /** The metrics listener (METRICS_PORT), when the server was started with one. */
  metricsUrl?: string;
}

export const check = (cond: boolean, what: string) => {
  if (!cond) throw new Error(`smoke check failed: ${what}`);
};

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: the smoke reads arbitrary response JSON
  json: any;
}

/** One request with the organization's credentials; the answer read whole. */
export async function call(
  t: SmokeTarget,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${t.baseUrl}${path}`, {
    method,
    headers: {
      'Service-OrgID': t.orgId,
      'Service-API-Key': t.apiKey,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Fails with the answer when its status is not the one wanted. */
export function expectAnswer(a: Answer, status: number, what: string) {
  check(a.status === status, `${what}: expected ${status}, got ${a.status} ${a.text.slice(0, 500)}`);
}

/**
 * Raw bytes on a socket held open; the first answer's status line, head and body as sent (chunked
 * framing included), status 0 when none came.
 */
export function raw(
  t: SmokeTarget,
  request: string,
  waitMs: number,
): Promise<{ status: number; head: string; body: string }> {
  const url = new URL(t.baseUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (d) => {
      data += d;
      const length = /content-length: (\d+)/i.exec(data)?.[1];
      const split = data.indexOf('\r\n\r\n');
      const whole = length ? data.length - split - 4 >= Number(length) : data.endsWith('\r\n0\r\n\r\n');
      if (split >= 0 && whole) socket.destroy();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      const split = data.indexOf('\r\n\r\n');
      const head = split < 0 ? data : data.slice(0, split);
      resolve({
        status: Number(head.split(' ')[1] ?? 0) || 0,
        head: head.toLowerCase(),
        body: split < 0 ? '' : data.slice(split + 4),
      });
    });
    socket.write(request);
    setTimeout(() => socket.destroy(), waitMs).unref();
  });
}
