/**
 * The fuzz drill's protocol phase: requests to the OAuth 2.0 and SSO routes built from real values (a
 * registered client and its secret, a redirect URI, an SSO credential, states and login forms the service
 * itself handed out, access and identity tokens) mixed with their mutations, the way an attacker probes
 * an authorization server. Beside the drill's verdict (no 5xx, 4xx in the envelope) it checks what an
 * authorization server must never do: redirect anywhere but to a registered redirect URI, the provider or
 * itself (an open redirector, RFC 9700 section 4.11), or answer a token request with an error outside
 * RFC 6749's registry.
 */
import fc from 'fast-check';
import type { createService } from '../../entry/create-service.ts';

type Service = Awaited<ReturnType<typeof createService>>;

/** One finding of the protocol phase. */
export interface ProtocolFinding {
  method: string;
  url: string;
  status: number;
  why: string;
  body: string;
}

const APP = 'https://app.fuzz.test/callback';
const SSO_APP = 'https://app.fuzz.test/signed-in';
// RFC 6749 section 5.2 and the extensions the token endpoint implements (RFC 8707's invalid_target).
const TOKEN_ERRORS = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
  'server_error',
  'temporarily_unavailable',
]);

// fast-check's options are null when absent: such a field is left out.
const form = (fields: Record<string, string | null | undefined>) =>
  new URLSearchParams(Object.entries(fields).filter((e): e is [string, string] => typeof e[1] === 'string'));

/** Variants of a value an attacker would try in place of the real one. */
const mutations = (real: string) =>
  fc.constantFrom(
    real,
    real,
    real,
    `${real}x`,
    real.slice(0, -1),
    real.toUpperCase(),
    `${real}/`,
    `${real}#frag`,
    `${real}?x=1`,
    `${real}%00`,
    ` ${real}`,
    '',
  );

const redirectUris = fc.constantFrom(
  APP,
  APP,
  `${APP}/../evil`,
  `${APP}?next=https://evil.test`,
  'https://app.fuzz.test.evil.test/callback',
  'https://evil.test/callback',
  '//evil.test/callback',
  'https://app.fuzz.test@evil.test/callback',
  'https://app.fuzz.test\\@evil.test/callback',
  'javascript:alert(1)',
  'http://app.fuzz.test/callback',
  SSO_APP,
);

/** Mostly the valid value, sometimes one of the others: most requests then get past the first check. */
const mostly = <T>(valid: T, others: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 3, arbitrary: fc.constant(valid) }, { weight: 1, arbitrary: others });

const anyText = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '%', 'null', 'a'.repeat(2000)));

/**
 * Seeds an organization with an OAuth client, a public client, SSO redirect URIs and an SSO credential
 * (GitHub's fixed endpoints, so nothing is fetched), then sends `requests` protocol requests.
 */
export async function protocolFuzz(
  service: Service,
  org: { id: string; apiKey: string },
  o: { requests: number; seed: number },
): Promise<{ requests: number; findings: ProtocolFinding[] }> {
  const h = service.ctx.headers;
  const BASE = service.ctx.config.publicBaseUrl;
  const admin = { [h.orgId]: org.id, [h.apiKey]: org.apiKey, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await service.fetch(
      new Request(`${BASE}${path}`, {
        method,
        headers: admin,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      }),
    );
    const text = await res.text();
    if (res.status >= 300) throw new Error(`seeding ${method} ${path} answered ${res.status}: ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const confidential = (
    await call('POST', '/oauth2/clients', {
      client_name: 'Fuzz App',
      scopes: ['openid', 'email', 'read'],
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      redirect_uris: [APP],
    })
  ).result as { client_id: string; client_secret: string };
  const publicClient = (
    await call('POST', '/oauth2/clients', {
      client_name: 'Fuzz SPA',
      scopes: ['openid', 'read'],
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [APP],
      public: true,
    })
  ).result as { client_id: string };
  await call('PUT', '/organizations/sso/redirect-uris', { redirect_uris: [SSO_APP] });
  const credential = (
    await call('POST', '/organizations/sso/oidc/provider-credentials', {
      provider: 'github',
      client_id: 'fuzz-github-client',
      client_secret: 'fuzz-github-secret',
      label: 'GitHub',
    })
  ).result as Record<string, unknown>;
  // Every string the credential's answer holds (its ids, its redirect URIs) may fill a path parameter.
  const credentialValues = Object.values(credential).filter((x): x is string => typeof x === 'string');
  const granted = await service.fetch(
    new Request(`${BASE}/oauth2/tokens`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${btoa(`${confidential.client_id}:${confidential.client_secret}`)}`,
      },
      body: form({ grant_type: 'client_credentials', scope: 'read' }),
    }),
  );
  const accessToken = String(((await granted.json()) as { access_token?: string }).access_token ?? '');

  // Where a redirect may lead: the registered URIs, the provider, the service itself.
  const allowed = [APP, SSO_APP, 'https://github.com/login/oauth/authorize', `${BASE}/`];
  const safeLocation = (location: string) => {
    let url: URL;
    try {
      url = new URL(location, `${BASE}/`);
    } catch {
      return false;
    }
    const bare = `${url.origin}${url.pathname}`;
    return allowed.some((a) => (a.endsWith('/') ? bare.startsWith(a) : bare === a));
  };

  // States and login forms the service hands out, so callbacks and login posts get past the first check.
  const states: string[] = [];
  const logins: { cookie: string; csrf: string }[] = [];
  const clientIds = fc.oneof(mutations(confidential.client_id), mutations(publicClient.client_id), anyText);
  const authorizeQuery = fc.record({
    client_id: fc.oneof(fc.constant(confidential.client_id), fc.constant(publicClient.client_id), clientIds),
    redirect_uri: mostly(APP, redirectUris),
    response_type: mostly('code', fc.constantFrom('token', 'id_token', 'code id_token', '', 'none')),
    scope: mostly('openid email read', fc.constantFrom('openid', 'read', 'admin', '', 'openid\u0000')),
    state: anyText,
    code_challenge: mostly('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', fc.constantFrom('', 'short')),
    code_challenge_method: mostly('S256', fc.constantFrom('plain', '')),
    prompt: mostly(undefined, fc.constantFrom('none', 'login', 'consent', 'none login')),
    nonce: fc.option(anyText),
    response_mode: mostly(undefined, fc.constantFrom('query', 'fragment', 'form_post', 'web_message')),
    resource: mostly(undefined, fc.constantFrom('https://api.fuzz.test', 'https://evil.test', 'not a uri')),
  });
  const tokenForm = fc.record({
    grant_type: fc.constantFrom(
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'password',
      'urn:ietf:params:oauth:grant-type:device_code',
      '',
    ),
    auth: fc.constantFrom('basic', 'basic-wrong', 'form', 'public', 'none', 'both'),
    code: fc.option(anyText),
    refresh_token: fc.option(fc.oneof(anyText, fc.constant(accessToken))),
    code_verifier: fc.option(fc.constantFrom('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk', 'x', '')),
    redirect_uri: fc.option(redirectUris),
    scope: fc.option(fc.constantFrom('read', 'openid', 'admin read', '')),
    resource: fc.option(fc.constantFrom('https://api.fuzz.test', 'https://evil.test', 'urn:x')),
  });
  const bearer = fc.oneof(
    fc.constant(`Bearer ${accessToken}`),
    fc.constant(`Bearer ${accessToken.slice(0, -3)}abc`),
    fc.constant(`bearer ${accessToken}`),
    fc.constant(`Basic ${accessToken}`),
    anyText,
  );
  const callbackParams = fc.record({
    state: fc.oneof(fc.constant('@real'), anyText),
    code: fc.option(anyText),
    error: fc.option(fc.constantFrom('access_denied', 'server_error', '<script>')),
    iss: fc.option(fc.constantFrom('https://github.com', 'https://evil.test', '')),
  });
  const kind = fc.constantFrom(
    'authorize',
    'authorize',
    'login',
    'token',
    'token',
    'introspect',
    'revoke',
    'userinfo',
    'sso-start',
    'sso-start',
    'callback',
    'callback',
    'hosted-sso',
  );
  const sample = fc.record({
    kind,
    authorize: authorizeQuery,
    token: tokenForm,
    bearer,
    callback: callbackParams,
    ssoStart: fc.record({
      client_id: mostly('fuzz-github-client', fc.oneof(mutations('fuzz-github-client'), anyText)),
      redirect_uri: mostly(SSO_APP, redirectUris),
      state: fc.option(anyText),
    }),
    handle: fc.constantFrom('fuzz@example.com', 'fuzz@example.com', '', 'a'.repeat(500)),
    password: anyText,
    credentialIndex: fc.nat(),
    stateIndex: fc.nat(),
    method: fc.constantFrom('GET', 'GET', 'POST'),
  });

  const callbackRoutes = service.app.routes
    .filter((r) => /sso/.test(r.path) && /callback/.test(r.path) && r.method !== 'WS')
    .map((r) => ({ method: r.method, path: r.path }));
  const findings: ProtocolFinding[] = [];
  let sent = 0;

  const send = async (method: string, path: string, init: RequestInit = {}) => {
    const url = `${BASE}${path}`;
    let res: Response;
    try {
      res = await service.fetch(new Request(url, { method, redirect: 'manual', ...init }));
    } catch (e) {
      findings.push({ method, url, status: 0, why: 'threw', body: String(e) });
      return undefined;
    }
    sent++;
    const body = await res.text();
    const finding = (why: string) =>
      findings.push({ method, url, status: res.status, why, body: body.slice(0, 300) });
    if (res.status >= 500) finding('5xx');
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location && !safeLocation(location))
      finding(`redirect to ${location.slice(0, 200)}`);
    return { res, body, location };
  };

  for (const s of fc.sample(sample, { numRuns: o.requests, seed: o.seed })) {
    if (s.kind === 'authorize') {
      const q = form(s.authorize as Record<string, string | null | undefined>);
      const got = await send(s.method, `/oauth2/authorize?${q}`);
      const csrf = got && /name="csrf_token" value="([^"]+)"/.exec(got.body)?.[1];
      const cookie = got?.res.headers.get('set-cookie')?.split(';')[0];
      if (csrf && cookie) logins.push({ csrf, cookie });
    } else if (s.kind === 'login' || s.kind === 'hosted-sso') {
      const login = logins[s.stateIndex % Math.max(logins.length, 1)];
      const fields =
        s.kind === 'login'
          ? { csrf_token: login?.csrf ?? s.password, handle: s.handle, password: s.password }
          : {
              csrf_token: login?.csrf ?? s.password,
              credential: credentialValues[s.credentialIndex % credentialValues.length] ?? s.password,
            };
      await send('POST', s.kind === 'login' ? '/oauth2/authorize/login' : '/oauth2/authorize/sso', {
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: BASE,
          ...(login ? { cookie: login.cookie } : {}),
        },
        body: form(fields),
      }).then((got) => {
        const state = got?.location && new URL(got.location, `${BASE}/`).searchParams.get('state');
        if (state) states.push(state);
      });
    } else if (s.kind === 'token' || s.kind === 'introspect' || s.kind === 'revoke') {
      const t = s.token;
      const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
      const id = t.auth === 'public' ? publicClient.client_id : confidential.client_id;
      if (t.auth === 'basic' || t.auth === 'both')
        headers.authorization = `Basic ${btoa(`${id}:${confidential.client_secret}`)}`;
      if (t.auth === 'basic-wrong') headers.authorization = `Basic ${btoa(`${id}:not-the-secret`)}`;
      const fields =
        s.kind === 'token'
          ? { ...t, auth: undefined }
          : { token: t.refresh_token ?? accessToken, token_type_hint: t.scope ?? undefined };
      const body = form({
        ...(fields as Record<string, string | null | undefined>),
        ...(t.auth === 'form' || t.auth === 'both'
          ? { client_id: id, client_secret: confidential.client_secret }
          : {}),
        ...(t.auth === 'public' ? { client_id: id } : {}),
      });
      const path = {
        token: '/oauth2/tokens',
        introspect: '/oauth2/tokens/introspect',
        revoke: '/oauth2/tokens/revoke',
      }[s.kind];
      const got = await send('POST', path, { headers, body });
      if (got && s.kind === 'token' && got.res.status >= 400) {
        let error: unknown;
        try {
          error = (JSON.parse(got.body) as { error?: unknown }).error;
        } catch {}
        if (typeof error !== 'string' || !TOKEN_ERRORS.has(error))
          findings.push({
            method: 'POST',
            url: path,
            status: got.res.status,
            why: `error ${JSON.stringify(error)} is not in RFC 6749's registry`,
            body: got.body.slice(0, 300),
          });
      }
    } else if (s.kind === 'userinfo') {
      await send(s.method, '/oauth2/userinfo', { headers: { authorization: s.bearer } });
    } else if (s.kind === 'sso-start') {
      const got = await send(
        'GET',
        `/sso/oidc/start?${form(s.ssoStart as Record<string, string | null | undefined>)}`,
        {
          headers: { [h.orgId]: org.id },
        },
      );
      const state = got?.location && new URL(got.location, `${BASE}/`).searchParams.get('state');
      if (state) states.push(state);
    } else {
      const route = callbackRoutes[s.credentialIndex % callbackRoutes.length];
      if (!route) continue;
      let i = 0;
      const path = route.path.replace(/:[a-z_]+/g, () =>
        encodeURIComponent(credentialValues[(s.credentialIndex + i++) % credentialValues.length] ?? 'x'),
      );
      const c = s.callback;
      const state = c.state === '@real' ? (states[s.stateIndex % Math.max(states.length, 1)] ?? '') : c.state;
      const params = form({ ...c, state } as Record<string, string | null | undefined>);
      await send(
        route.method,
        route.method === 'POST' ? path : `${path}?${params}`,
        route.method === 'POST'
          ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: params }
          : {},
      );
    }
  }
  return { requests: sent, findings };
}
