/**
 * The container's HEALTHCHECK: `GET /healthz` on this machine, on the port the server listens on (PORT,
 * default 3000). Exits 0 when it answers 200 within 3 s, 1 otherwise, with one line on standard error.
 * It runs on the Bun the image already has (`bun scripts/healthcheck.ts`): the image has no curl.
 *
 * @example bun scripts/healthcheck.ts   # exit code 0: the process answers
 */

/** The URL of /healthz for the server that PORT and HOST describe; a wildcard HOST is reached on loopback. */
export function healthzUrl(env: Record<string, string | undefined>): string {
  const port = env.PORT || '3000';
  const host = env.HOST || '127.0.0.1';
  const target =
    host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${target}:${port}/healthz`;
}

/** Undefined when /healthz answers 200 within the timeout, else what went wrong. */
export async function checkHealth(url: string, timeoutMs = 3000): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await res.body?.cancel();
    return res.status === 200 ? undefined : `${url} answered ${res.status}`;
  } catch (e) {
    return `${url} did not answer: ${(e as Error).message}`;
  }
}

if (import.meta.main) {
  const problem = await checkHealth(healthzUrl(process.env));
  if (problem) console.error(`healthcheck: ${problem}`);
  process.exit(problem ? 1 : 0);
}
