/**
 * A closed-loop HTTP load generator in its own process: `concurrency` loops, each sending the next
 * request when the last answered, for `seconds`. Prints {requests, errors, perSecond, p50, p99} as JSON.
 *
 *   bun scripts/bench/load.ts <url> <concurrency> <seconds> [header:value ...]
 *
 * With LOAD_BODY in the environment each request is a POST of that body (a form, say).
 */
import { summarize } from './stats.ts';

const [url, concurrencyArg, secondsArg, ...headerArgs] = process.argv.slice(2);
if (!url) throw new Error('usage: load.ts <url> <concurrency> <seconds> [header:value ...]');
const concurrency = Number(concurrencyArg ?? 64);
const seconds = Number(secondsArg ?? 5);
const headers = Object.fromEntries(
  headerArgs.map((h) => [h.slice(0, h.indexOf(':')), h.slice(h.indexOf(':') + 1)]),
);

const body = process.env.LOAD_BODY;
const init: RequestInit = body === undefined ? { headers } : { method: 'POST', headers, body };
const latencies: number[] = [];
let errors = 0;
const warmupEnd = performance.now() + 1000;
const end = warmupEnd + seconds * 1000;

async function loop() {
  while (performance.now() < end) {
    const t0 = performance.now();
    try {
      const res = await fetch(url!, init);
      await res.arrayBuffer();
      if (res.status >= 400) errors++;
    } catch {
      errors++;
    }
    const t1 = performance.now();
    if (t0 >= warmupEnd) {
      latencies.push(t1 - t0);
    }
  }
}

await Promise.all(Array.from({ length: concurrency }, loop));
const s = summarize(latencies, seconds * 1000);
console.log(JSON.stringify({ requests: s.count, errors, perSecond: s.perSecond, p50: s.p50, p99: s.p99 }));
