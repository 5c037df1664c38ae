import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../free-port.ts';
import { embeddedServiceEnv, ROOT, runLoad, startChild } from './processes.ts';
import { fmtMs, fmtRate, row } from './stats.ts';

/**
 * An authenticated no-op request (GET /organizations: key check and organization lookup, both cached)
 * on the service, next to a bare Bun.serve on the same machine, each loaded from a separate process.
 */
export async function benchHttp(options: { seconds: number; concurrency: number }): Promise<string> {
  const { seconds, concurrency } = options;
  const bare = await startChild(
    [process.execPath, join(ROOT, 'scripts/bench/bare-server.ts')],
    { PORT: '0' },
    /"port":\d+/,
  );
  const barePort = bare.output().match(/"port":(\d+)/)![1];
  const bound = await runLoad(`http://127.0.0.1:${barePort}/`, concurrency, seconds);
  await bare.stop();

  const dir = mkdtempSync(join(tmpdir(), 'ids-bench-http-'));
  const port = String(await freePort());
  const service = await startChild(
    [process.execPath, join(ROOT, 'entry/bun.ts')],
    embeddedServiceEnv(port, dir),
    /Service-API-Key: \S+/,
    90_000,
  );
  // LOG_LEVEL=warn hides the 'listening' line: poll until the server answers.
  while (
    !(await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.ok,
      () => false,
    ))
  )
    await Bun.sleep(50);
  const out = service.output();
  const orgId = out.match(/Service-OrgID: (\S+)/)![1]!;
  const apiKey = out.match(/Service-API-Key: (\S+)/)![1]!;
  const ours = await runLoad(`http://127.0.0.1:${port}/organizations`, concurrency, seconds, {
    'Service-OrgID': orgId,
    'Service-API-Key': apiKey,
  });
  await service.stop();
  rmSync(dir, { recursive: true, force: true });
  if (ours.errors > 0) throw new Error(`${ours.errors} requests failed during the HTTP benchmark`);

  return [
    `Closed loop, ${concurrency} connections, ${seconds} s after 1 s of warm-up; the load generator (plain keep-alive sockets, scripts/bench/load.ts) is a separate Bun process on the same two cores.`,
    '',
    row(['path', 'requests/s', 'p50 ms', 'p99 ms', 'fraction of bound']),
    row(['---', '---', '---', '---', '---']),
    row([
      'bound: bare Bun.serve, JSON hello',
      fmtRate(bound.perSecond),
      fmtMs(bound.p50),
      fmtMs(bound.p99),
      '1.00',
    ]),
    row([
      'authenticated no-op: GET /organizations',
      fmtRate(ours.perSecond),
      fmtMs(ours.p50),
      fmtMs(ours.p99),
      (ours.perSecond / bound.perSecond).toFixed(2),
    ]),
  ].join('\n');
}
