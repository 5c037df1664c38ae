/**
 * The container's HEALTHCHECK: `GET /healthz` on this machine, on the port the server listens on (PORT,
 * default 3000). Exits 0 when it answers 200 within 3 s, 1 otherwise, with one line on standard error.
 * It runs on the Bun the image already has (`bun scripts/healthcheck.ts`): the image has no curl.
 *
 * @example bun scripts/healthcheck.ts   # exit code 0: the process answers
 */
const port = process.env.PORT || '3000';
// The server listens on HOST; a wildcard address is reached through loopback.
const host = process.env.HOST || '127.0.0.1';
const target =
  host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
const url = `http://${target}:${port}/healthz`;

try {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000), redirect: 'manual' });
  if (res.status !== 200) {
    console.error(`healthcheck: ${url} answered ${res.status}`);
    process.exit(1);
  }
} catch (e) {
  console.error(`healthcheck: ${url} did not answer: ${(e as Error).message}`);
  process.exit(1);
}
