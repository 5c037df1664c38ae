/**
 * A closed-loop HTTP/1.1 load generator in its own process: `concurrency` keep-alive connections, each
 * sending the next request when the last answered, for `seconds` after one second of warm-up. Prints
 * {requests, errors, perSecond, p50, p99} as JSON; a status of 400 or more counts as an error.
 *
 *   bun scripts/bench/load.ts <url> <concurrency> <seconds> [header:value ...]
 *
 * With LOAD_BODY in the environment each request is a POST of that body (a form, say).
 *
 * It writes the same request bytes on plain sockets and reads only each answer's status and length,
 * rather than going through fetch: the servers it loads share the machine's cores with it, and fetch
 * took about 16 µs of CPU a request where this takes about as little as wrk (7 µs a request there, on
 * the machine of 2026-11-29), so the servers measured keep the CPU the load would otherwise take.
 */
import { type Answer, answerOf } from './http-answer.ts';
import { summarize } from './stats.ts';

const [url, concurrencyArg, secondsArg, ...headerArgs] = process.argv.slice(2);
if (!url) throw new Error('usage: load.ts <url> <concurrency> <seconds> [header:value ...]');
const target = new URL(url);
if (target.protocol !== 'http:') throw new Error(`load.ts speaks plain HTTP only, not ${target.protocol}`);
const concurrency = Number(concurrencyArg ?? 64);
const seconds = Number(secondsArg ?? 5);

const body = process.env.LOAD_BODY;
const head = [
  `${body === undefined ? 'GET' : 'POST'} ${target.pathname}${target.search} HTTP/1.1`,
  `host: ${target.host}`,
  ...headerArgs.map((h) => `${h.slice(0, h.indexOf(':'))}: ${h.slice(h.indexOf(':') + 1)}`),
  ...(body === undefined ? [] : [`content-length: ${Buffer.byteLength(body)}`]),
];
const request = Buffer.from(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`);

const latencies: number[] = [];
let errors = 0;
const warmupEnd = performance.now() + 1000;
const end = warmupEnd + seconds * 1000;

/** One connection's loop: sends, reads one answer whole, records it, sends again until the end. */
function connection(): Promise<void> {
  return new Promise((done) => {
    let pending: Buffer = Buffer.alloc(0);
    let sentAt = 0;
    /** Set when this loop ends the connection itself: its close is then no error. */
    let over = false;
    const send = (socket: { write(b: Uint8Array): number }) => {
      sentAt = performance.now();
      socket.write(request);
    };
    const finish = (answer: Answer, socket: { end(): void; write(b: Uint8Array): number }) => {
      const now = performance.now();
      if (answer.status >= 400) errors++;
      if (sentAt >= warmupEnd) latencies.push(now - sentAt);
      if (now < end && !answer.close) send(socket);
      else {
        over = true;
        socket.end();
        if (now < end) connection().then(done);
        else done();
      }
    };
    void Bun.connect({
      hostname: target.hostname,
      port: Number(target.port || 80),
      socket: {
        open: send,
        data(socket, chunk) {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          const answer = answerOf(pending);
          if (answer === undefined) return;
          pending = pending.subarray(answer.length);
          finish(answer, socket);
        },
        close() {
          if (over) return;
          // Closed by the server before an answer came whole: an error, and a new connection while the
          // load lasts.
          over = true;
          errors++;
          if (performance.now() < end) connection().then(done);
          else done();
        },
        error() {},
      },
    }).catch(() => {
      errors++;
      if (performance.now() < end) setTimeout(() => connection().then(done), 10);
      else done();
    });
  });
}

await Promise.all(Array.from({ length: concurrency }, connection));
const s = summarize(latencies, seconds * 1000);
console.log(JSON.stringify({ requests: s.count, errors, perSecond: s.perSecond, p50: s.p50, p99: s.p99 }));
