/**
 * The fuzz drill: fast-check requests against every route of the default deployment (in-process, on an
 * in-memory PGlite), with and without valid credentials, with path parameters, query strings, headers
 * and bodies drawn from JSON values, forms, text and bytes. The verdict: no answer of 5xx, and every
 * 4xx with a JSON body is a valid envelope (`errors: [{ httpcode, message }]`, httpcode the status).
 *
 *   npm run drill:fuzz -- [--requests 100000] [--seed 42]
 */
import fc from 'fast-check';
import { loadConfig } from '../../core/config.ts';
import { createService } from '../../entry/create-service.ts';
import definition from '../../service.config.ts';
import { cliArg } from './cli-arg.ts';
import { type ProtocolFinding, protocolFuzz } from './fuzz-protocol.ts';

export interface FuzzVerdict {
  requests: number;
  byClass: Record<string, number>;
  serverErrors: { method: string; url: string; status: number; body: string }[];
  badEnvelopes: { method: string; url: string; status: number; body: string }[];
  /** What the protocol phase found on the OAuth and SSO routes (open redirects, 5xx, unregistered errors). */
  protocolFindings: ProtocolFinding[];
  /** Requests the protocol phase sent. */
  protocolRequests: number;
  routes: number;
  seconds: number;
}

const segment = fc.oneof(
  fc.uuid(),
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', '%', '..', '%2F', '%00', 'a'.repeat(300), 'ünï', '😀', 'null', '-1', '1e309'),
);

const jsonBody = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.object({ maxDepth: 3 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{',
      '[',
      '{"a":',
      '"x"',
      'null',
      '[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]',
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 30 }), { maxKeys: 5 })
      .map((d) => new URLSearchParams(d).toString()),
  },
);

const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/octet-stream',
  'multipart/form-data; boundary=x',
  undefined,
);

const query = fc
  .dictionary(
    fc.oneof(
      fc.constantFrom('limit', 'cursor', 'client_id', 'redirect_uri', 'scope', 'state', 'token', 'handle'),
      fc.string({ maxLength: 10 }),
    ),
    fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String)),
    { maxKeys: 4 },
  )
  .map((d) => new URLSearchParams(d).toString());

const EXTRA_HEADERS = [
  'Service-Required-Consistency',
  'Service-Required-Consistency-Timeout',
  'authorization',
  'origin',
  'x-request-id',
  'cookie',
];

export async function fuzzDrill(o: {
  requests: number;
  /** Requests of the protocol phase (OAuth and SSO with real values). @default a third of `requests` */
  protocolRequests?: number;
  seed?: number;
  log?: (line: string) => void;
}): Promise<FuzzVerdict> {
  const log = o.log ?? (() => {});
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: 'memory://',
    LOG_LEVEL: 'silent',
    MASTER_KEY: `fuzz:${btoa('f'.repeat(32))}`,
  });
  const service = await createService(config, { definition });
  const { organization, apiKey } = await service.ctx.orgs.create('Fuzz');
  const h = service.ctx.headers;
  const routes = service.app.routes
    .map((r) => ({ method: r.method, path: r.path }))
    .filter((r) => r.method !== 'WS');
  const auth = { [h.orgId]: organization.id, [h.apiKey]: apiKey };
  const credentials = fc.constantFrom<'valid' | 'none' | 'org-only' | 'wrong-key'>(
    'valid',
    'valid',
    'valid',
    'none',
    'org-only',
    'wrong-key',
  );
  const request = fc.record({
    route: fc.integer({ min: 0, max: routes.length - 1 }),
    method: fc.option(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'), {
      freq: 8,
    }),
    params: fc.array(segment, { minLength: 4, maxLength: 4 }),
    query,
    body: fc.option(jsonBody, { freq: 5 }),
    contentType,
    credentials,
    extra: fc.dictionary(fc.constantFrom(...EXTRA_HEADERS), fc.string({ maxLength: 40 }), { maxKeys: 2 }),
  });

  const verdict: FuzzVerdict = {
    requests: 0,
    byClass: {},
    serverErrors: [],
    badEnvelopes: [],
    protocolFindings: [],
    protocolRequests: 0,
    routes: routes.length,
    seconds: 0,
  };
  const started = performance.now();
  const samples = fc.sample(request, { numRuns: o.requests, seed: o.seed ?? 42 });
  let next = 0;
  const worker = async () => {
    while (next < samples.length) {
      const s = samples[next++]!;
      const route = routes[s.route]!;
      let i = 0;
      const path = route.path.replace(/:[a-z_]+/g, () => encodeURIComponent(s.params[i++ % 4]!));
      const url = `http://localhost${path}${s.query ? `?${s.query}` : ''}`;
      const method = s.method ?? route.method;
      const headers = new Headers();
      if (s.credentials === 'valid') for (const [k, v] of Object.entries(auth)) headers.set(k, v);
      if (s.credentials === 'org-only') headers.set(h.orgId, organization.id);
      if (s.credentials === 'wrong-key') {
        headers.set(h.orgId, organization.id);
        headers.set(h.apiKey, `${apiKey.slice(0, -4)}AAAA`);
      }
      for (const [k, v] of Object.entries(s.extra))
        try {
          headers.set(k, v);
        } catch {
          // Not a header value a client could send.
        }
      const withBody = s.body !== null && method !== 'GET' && method !== 'HEAD';
      if (withBody && s.contentType) headers.set('content-type', s.contentType);
      let res: Response;
      try {
        res = await service.fetch(
          new Request(url, { method, headers, ...(withBody ? { body: s.body } : {}) }),
        );
      } catch (e) {
        verdict.serverErrors.push({ method, url, status: 0, body: `threw: ${(e as Error).message}` });
        continue;
      }
      const text = await res.text();
      verdict.requests++;
      const cls = `${Math.floor(res.status / 100)}xx`;
      verdict.byClass[cls] = (verdict.byClass[cls] ?? 0) + 1;
      if (res.status >= 500)
        verdict.serverErrors.push({ method, url, status: res.status, body: text.slice(0, 300) });
      // A HEAD answer has no body by definition (RFC 9110 §9.3.2).
      else if (
        res.status >= 400 &&
        method !== 'HEAD' &&
        (res.headers.get('content-type') ?? '').includes('json')
      ) {
        let ok = false;
        try {
          const body = JSON.parse(text) as { errors?: { httpcode?: unknown; message?: unknown }[] };
          ok =
            Array.isArray(body.errors) &&
            body.errors.length > 0 &&
            body.errors.every(
              (e) => e.httpcode === res.status && typeof e.message === 'string' && e.message.length > 0,
            );
        } catch {}
        if (!ok) verdict.badEnvelopes.push({ method, url, status: res.status, body: text.slice(0, 300) });
      }
      if (verdict.requests % 10_000 === 0)
        log(`${verdict.requests} requests, ${JSON.stringify(verdict.byClass)}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  const protocol = await protocolFuzz(
    service,
    { id: organization.id, apiKey },
    { requests: o.protocolRequests ?? Math.ceil(o.requests / 3), seed: o.seed ?? 42 },
  );
  verdict.protocolFindings = protocol.findings;
  verdict.protocolRequests = protocol.requests;
  verdict.seconds = Math.round((performance.now() - started) / 100) / 10;
  await service.stop();
  return verdict;
}

/** True when neither phase found anything. */
export const fuzzPassed = (v: FuzzVerdict): boolean =>
  v.serverErrors.length === 0 && v.badEnvelopes.length === 0 && v.protocolFindings.length === 0;

export const fuzzVerdictLine = (v: FuzzVerdict): string =>
  `${fuzzPassed(v) ? 'PASS' : 'FAIL'} fuzz: ${v.requests} requests over ${v.routes} routes in ${v.seconds} s, ${Object.entries(
    v.byClass,
  )
    .sort()
    .map(([k, n]) => `${k} ${n}`)
    .join(
      ', ',
    )}; 5xx ${v.serverErrors.length}, 4xx not an envelope ${v.badEnvelopes.length}; OAuth and SSO protocol phase: ${v.protocolRequests} requests, ${v.protocolFindings.length} findings`;

if (import.meta.main) {
  const v = await fuzzDrill({
    requests: Number(cliArg('requests', '100000')),
    seed: Number(cliArg('seed', '42')),
    log: (line) => console.error(line),
  });
  for (const e of [...v.serverErrors, ...v.badEnvelopes, ...v.protocolFindings].slice(0, 20))
    console.error(JSON.stringify(e));
  console.log(fuzzVerdictLine(v));
  process.exit(fuzzPassed(v) ? 0 : 1);
}
