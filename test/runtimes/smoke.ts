/**
 * One smoke body shared by every runtime: talks to a running server over HTTP and throws on the first
 * thing that is not as it should be.
 */
import { check, type SmokeTarget } from './http.ts';
import { smokeAddress } from './smoke-address.ts';
import { smokeIdentity } from './smoke-identity.ts';
import { smokeMetrics } from './smoke-metrics.ts';
import { smokeOAuth2 } from './smoke-oauth2.ts';
import { smokeWrites } from './smoke-writes.ts';

export type { SmokeTarget } from './http.ts';

export async function smoke(t: SmokeTarget): Promise<string[]> {
  const done: string[] = [];
  const auth = { 'Service-OrgID': t.orgId, 'Service-API-Key': t.apiKey };

  const health = await fetch(`${t.baseUrl}/healthz`);
  check(health.status === 200, `/healthz answers 200 (got ${health.status})`);
  done.push('healthz');

  const ready = await fetch(`${t.baseUrl}/readyz`);
  const readyBody = (await ready.json()) as { result?: { checks?: Record<string, string> } };
  check(
    ready.status === 200 &&
      readyBody.result?.checks?.storage === 'ok' &&
      readyBody.result?.checks?.bus === 'ok',
    `/readyz ready (got ${ready.status} ${JSON.stringify(readyBody)})`,
  );
  done.push('readyz');

  const org = await fetch(`${t.baseUrl}/organizations`, { headers: auth });
  const orgBody = (await org.json()) as { result?: { id?: string } };
  check(
    org.status === 200 && orgBody.result?.id === t.orgId,
    `GET /organizations answers the organization (got ${org.status} ${JSON.stringify(orgBody)})`,
  );
  done.push('organizations');

  const noKey = await fetch(`${t.baseUrl}/organizations`, { headers: { 'Service-OrgID': t.orgId } });
  const noKeyBody = (await noKey.json()) as { errors?: Array<{ httpcode: number }> };
  check(
    noKey.status === 401 && noKeyBody.errors?.[0]?.httpcode === 401,
    `no API key answers 401 with the envelope (got ${noKey.status})`,
  );
  done.push('401');

  const missing = await fetch(`${t.baseUrl}/no/such/route`);
  check(
    missing.status === 404 && (missing.headers.get('content-type') ?? '').includes('application/json'),
    `unknown route answers a JSON 404 (got ${missing.status})`,
  );
  await missing.body?.cancel();
  done.push('404');

  // A write route of a default plugin (the headers are checked once the route and the caller are known).
  const bad = await fetch(`${t.baseUrl}/organizations/attributes/end_user_read_write`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/json', 'Service-Required-Consistency': 'everywhere' },
    body: '{}',
  });
  check(bad.status === 400, `a bad consistency header answers 400 (got ${bad.status})`);
  await bad.body?.cancel();
  done.push('consistency 400');

  const doc = await fetch(`${t.baseUrl}/openapi.json`);
  const docBody = (await doc.json()) as { openapi?: string; paths?: Record<string, unknown> };
  check(
    doc.status === 200 &&
      (docBody.openapi ?? '').startsWith('3.1') &&
      '/organizations' in (docBody.paths ?? {}),
    'OpenAPI 3.1 document lists /organizations',
  );
  done.push('openapi');
  done.push(...(await smokeWrites(t)));
  done.push(...(await smokeAddress(t)));
  done.push(...(await smokeIdentity(t)));
  done.push(...(await smokeOAuth2(t)));
  if (t.metricsUrl) done.push(...(await smokeMetrics({ ...t, metricsUrl: t.metricsUrl })));
  return done;
}
