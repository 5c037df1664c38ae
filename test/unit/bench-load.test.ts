import { afterAll, describe, expect, it } from 'bun:test';
import { join } from 'node:path';
import { answerOf } from '../../scripts/bench/http-answer.ts';

const ROOT = join(import.meta.dir, '../..');

/** What the benchmarks' load generator counted against `url`, run for half a second after its warm-up. */
async function load(url: string, concurrency: number, body?: string) {
  const proc = Bun.spawn(
    [process.execPath, join(ROOT, 'scripts/bench/load.ts'), url, String(concurrency), '0.5', 'x-bench:yes'],
    {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, ...(body === undefined ? {} : { LOAD_BODY: body }) },
    },
  );
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if ((await proc.exited) !== 0) throw new Error(`load.ts failed: ${err}`);
  return JSON.parse(out.trim()) as { requests: number; errors: number; perSecond: number; p50: number };
}

describe('the benchmarks load generator', () => {
  const seen: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    routes: {
      '/json': () => Response.json({ ok: true, pad: 'x'.repeat(20_000) }),
      '/stream': () =>
        new Response(
          new ReadableStream({
            start(c) {
              c.enqueue(new TextEncoder().encode('one '));
              c.enqueue(new TextEncoder().encode('0\r\n\r\n two'));
              c.close();
            },
          }),
        ),
      '/refused': () => new Response('no', { status: 403 }),
      '/closing': () => new Response('bye', { headers: { connection: 'close' } }),
      '/form': {
        async POST(request) {
          seen.push(`${request.headers.get('x-bench')} ${await request.text()}`);
          return new Response(null, { status: 204 });
        },
      },
    },
  });
  afterAll(() => server.stop(true));
  const base = `http://127.0.0.1:${server.port}`;

  it('reads answers with a length, chunked answers and answers without a body', async () => {
    const [json, stream, form] = await Promise.all([
      load(`${base}/json`, 4),
      load(`${base}/stream`, 4),
      load(`${base}/form`, 2, 'grant_type=client_credentials'),
    ]);
    for (const [path, r] of Object.entries({ json, stream, form }))
      expect({ path, errors: r.errors, some: r.requests > 50 }).toEqual({ path, errors: 0, some: true });
    expect(seen.at(-1)).toBe('yes grant_type=client_credentials');
  }, 20_000);

  it('counts a refusal as an error, and goes on after a server closes the connection', async () => {
    const [refused, closing] = await Promise.all([load(`${base}/refused`, 2), load(`${base}/closing`, 2)]);
    expect(refused.requests).toBeGreaterThan(50);
    expect(refused.errors).toBeGreaterThanOrEqual(refused.requests);
    expect({ errors: closing.errors, some: closing.requests > 20 }).toEqual({ errors: 0, some: true });
  }, 20_000);

  it('finds the end of an answer only once it has come whole', () => {
    const json = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello');
    expect(answerOf(json.subarray(0, 20))).toBeUndefined();
    expect(answerOf(json.subarray(0, json.length - 1))).toBeUndefined();
    expect(answerOf(Buffer.concat([json, Buffer.from('HTTP/1.1')]))).toEqual({
      status: 200,
      length: json.length,
      close: false,
    });
    // A chunk whose data holds what looks like the last chunk does not end the body.
    const chunked = Buffer.from(
      'HTTP/1.1 502 Bad Gateway\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n7\r\n0\r\n\r\nab\r\n0\r\n\r\n',
    );
    expect(answerOf(chunked.subarray(0, chunked.length - 7))).toBeUndefined();
    expect(answerOf(chunked)).toEqual({ status: 502, length: chunked.length, close: true });
  });
});
