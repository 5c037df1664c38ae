import { afterAll, describe, expect, it } from 'bun:test';
import * as v from 'valibot';
import type { Env } from '../../../core/config.ts';
import { EVENTS_TOPIC, type ServiceEvent } from '../../../core/events/types.ts';
import { createLogger } from '../../../core/log.ts';
import { ack } from '../../../core/ports/event-bus.ts';
import { defineSsoProvider } from '../../../core/sso/define-provider.ts';
import { persons } from '../../../plugins/persons/index.ts';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { fetchWithToken } from '../../../plugins/sso/providers/common.ts';
import { tokens } from '../../../plugins/tokens/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { freePort } from '../../helpers/real-entry.ts';
import { startTestService } from '../../helpers/service.ts';
import { IDP_HOST, type ReceivedRequest, startHttpsReceiver } from '../../helpers/tls.ts';

/**
 * Every request to an SSO provider passes the address guard of webhook deliveries: https only, the
 * resolved addresses vetted against SSO_ALLOW_PRIVATE, no redirect followed. A tenant reads a generic
 * message (the start's envelope, the callback's fragment, AuthenticationFailed_v1's failure_detail); the
 * operator's log has the addresses, ports and socket errors.
 */
const CREDENTIALS = '/organizations/sso/oidc/provider-credentials';
const APP = 'https://app.example/signed-in';

/** A stand-in OpenID provider over https at IDP_HOST (127.0.0.1): discovery and keys; `token` is chosen. */
let tokenEndpoint = '';
const idp = startHttpsReceiver((request) => {
  const path = new URL(request.url).pathname;
  const base = idp.url('', IDP_HOST);
  if (path === '/moved/.well-known/openid-configuration')
    return Response.redirect(`${base}/.well-known/openid-configuration`, 302);
  if (path === '/.well-known/openid-configuration' || path === '/literal/.well-known/openid-configuration')
    return Response.json({
      issuer: path.startsWith('/literal') ? `https://127.0.0.1:${idp.port}/literal` : base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: tokenEndpoint || `${base}/token`,
      jwks_uri: `${base}/jwks`,
      response_types_supported: ['code'],
      id_token_signing_alg_values_supported: ['RS256'],
    });
  // A non-OIDC provider's endpoints: the token, and a profile that has moved elsewhere.
  if (path === '/oauth/token') return Response.json({ access_token: 'at-1', token_type: 'bearer' });
  if (path === '/api/user') return Response.redirect(`${base}/elsewhere/user`, 302);
  if (path === '/elsewhere/user') return Response.json({ id: 7, email: 'ada@example.com' });
  return new Response('not found', { status: 404 });
});
afterAll(() => idp.stop());
const pathsSeen = () => idp.requests.map((r: ReceivedRequest) => r.path);

const acme = oidcProvider({ id: 'acme', displayName: 'Acme' });
// A deployment that still passes the old loopback allowance: it is ignored.
const legacy = oidcProvider({ id: 'legacy', allowLoopbackIssuer: true });
/** A provider without ID tokens whose profile fetch meets a redirect. */
const moved = defineSsoProvider({
  id: 'moved',
  displayName: 'Moved',
  defaultScopes: ['user'],
  alwaysScopes: [],
  options: v.object({}),
  endpoints: {
    authorization: idp.url('/oauth/authorize', IDP_HOST),
    token: idp.url('/oauth/token', IDP_HOST),
  },
  pkce: false,
  async profile({ accessToken }, { fetch }) {
    const user = await fetchWithToken<{ id: number; email: string }>(
      fetch,
      idp.url('/api/user', IDP_HOST),
      accessToken,
    );
    return { subject: String(user.id), email: user.email, emailVerified: true };
  },
});
/** A provider without ID tokens whose token endpoint is plain http on loopback. */
let plainAsked = 0;
const plain = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => {
    plainAsked++;
    return Response.json({ access_token: 'at-plain', token_type: 'bearer' });
  },
});
afterAll(() => plain.stop(true));
const insecure = defineSsoProvider({
  ...moved,
  id: 'insecure',
  endpoints: {
    authorization: `http://127.0.0.1:${plain.port}/authorize`,
    token: `http://127.0.0.1:${plain.port}/token`,
  },
});

/** A service with SSO whose log and events are kept; `env` wins over the tests' SSO settings. */
async function startService(env: Env = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger('debug', {}, (line) => lines.push(JSON.parse(line)));
  const t = await startTestService({
    env,
    log,
    definition: {
      plugins: [persons(), tokens(), sso({ providers: [acme, legacy, moved, insecure] }), ssoSignIn()],
    },
  });
  const events: ServiceEvent[] = [];
  t.service.ctx.bus.consume<ServiceEvent>(EVENTS_TOPIC, async (m) => {
    events.push(m.payload);
    return ack();
  });
  await t.service.start();
  await expectStatus(
    await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
    200,
  );
  const credential = async (provider: string, clientId: string, options: Record<string, unknown> = {}) =>
    t.call('POST', CREDENTIALS, {
      body: { provider, client_id: clientId, client_secret: 's', options: { [provider]: options } },
    });
  const start = (clientId: string) =>
    t.call('GET', `/sso/oidc/start?${new URLSearchParams({ client_id: clientId, redirect_uri: APP })}`, {
      key: null,
    });
  /** Starts a sign-in and comes back with a code at once; the fragment the application receives. */
  async function signIn(clientId: string) {
    const started = await start(clientId);
    await expectStatus(started, 302);
    const authorize = new URL(started.headers.get('location') ?? '');
    const state = authorize.searchParams.get('state') ?? '';
    // The credential's own callback, as the provider would send the browser back to it, in that browser.
    const callback = new URL(authorize.searchParams.get('redirect_uri') ?? '');
    const back = new URLSearchParams({ code: 'a-code', state });
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
    const res = await t.call('GET', `${callback.pathname}?${back}`, {
      orgId: null,
      key: null,
      headers: { cookie },
    });
    await expectStatus(res, 302);
    return new URLSearchParams(new URL(res.headers.get('location') ?? '').hash.slice(1));
  }
  async function failure(): Promise<ServiceEvent> {
    const deadline = Date.now() + 5000;
    const found = () => events.find((e) => e.event_metadata.event_name === 'AuthenticationFailed_v1');
    while (!found() && Date.now() < deadline) await Bun.sleep(20);
    return found() ?? expect.unreachable('no AuthenticationFailed_v1');
  }
  const logged = () => JSON.stringify(lines.filter((l) => l.msg === 'SSO provider request failed'));
  return { t, credential, start, signIn, failure, logged, stop: () => t.stop() };
}

/** What a tenant must never read: where a name points, which port refused, how the socket failed. */
function expectGeneric(text: string, ...ports: number[]) {
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain('ECONNREFUSED');
  expect(text).not.toMatch(/refused|connect|loopback|private/i);
  for (const port of ports) expect(text).not.toContain(String(port));
}

describe('SSO providers behind the address guard', () => {
  it('refuses a provider at a private IP address without SSO_ALLOW_PRIVATE; the log says why', async () => {
    const s = await startService({ SSO_ALLOW_PRIVATE: '' });
    try {
      const issuer = `https://127.0.0.1:${idp.port}/literal`;
      await expectStatus(await s.credential('acme', 'literal-app', { issuer }), 201);
      idp.requests.length = 0;
      const res = await s.start('literal-app');
      await expectStatus(res, 502);
      expect(res.json.errors[0].message).toBe(
        'discovery of the issuer failed: the provider could not be reached (the service log has the reason)',
      );
      expectGeneric(res.text, idp.port);
      expect(pathsSeen()).toEqual([]);
      expect(s.logged()).toContain('127.0.0.1');
      expect(s.logged()).toContain('SSO_ALLOW_PRIVATE');
    } finally {
      await s.stop();
    }
  });

  it('refuses a provider whose name resolves to a private address without SSO_ALLOW_PRIVATE', async () => {
    const s = await startService({ SSO_ALLOW_PRIVATE: '' });
    try {
      await expectStatus(await s.credential('acme', 'named-app', { issuer: idp.url('', IDP_HOST) }), 201);
      idp.requests.length = 0;
      const res = await s.start('named-app');
      await expectStatus(res, 502);
      expectGeneric(res.text, idp.port);
      expect(pathsSeen()).toEqual([]);
      expect(s.logged()).toContain(`${IDP_HOST} resolves to 127.0.0.1`);
    } finally {
      await s.stop();
    }
  });

  it('tells the tenant nothing of a closed port in the fragment or the event; the log has it', async () => {
    const s = await startService();
    const closed = freePort();
    tokenEndpoint = `https://${IDP_HOST}:${closed}/token`;
    try {
      await expectStatus(await s.credential('acme', 'closed-app', { issuer: idp.url('', IDP_HOST) }), 201);
      const fragment = await s.signIn('closed-app');
      expect(fragment.get('error')).toBe('server_error');
      const description = fragment.get('error_description') ?? '';
      expect(description).toContain('the provider could not be reached');
      expectGeneric(description, closed, idp.port);
      const failed = await s.failure();
      expect(failed.failure_reason).toBe('provider_error');
      expectGeneric(JSON.stringify(failed), closed, idp.port);
      expect(s.logged()).toContain(String(closed));
      expect(s.logged()).toMatch(/ECONNREFUSED|ConnectionRefused|cannot connect/);
    } finally {
      tokenEndpoint = '';
      await s.stop();
    }
  });

  it('refuses an http issuer when the credential is made, naming the option and the rule', async () => {
    const s = await startService();
    try {
      for (const provider of ['acme', 'legacy']) {
        const res = await s.credential(provider, `${provider}-http`, {
          issuer: `http://127.0.0.1:${plain.port}`,
        });
        await expectStatus(res, 400);
        expect(res.text).toContain(
          `options.${provider}.issuer: issuer must be an https URL without credentials, query or fragment`,
        );
      }
    } finally {
      await s.stop();
    }
  });

  it('sends nothing to a plain http endpoint of a provider', async () => {
    const s = await startService();
    try {
      await expectStatus(await s.credential('insecure', 'plain-app'), 201);
      const fragment = await s.signIn('plain-app');
      expect(fragment.get('error')).toBe('server_error');
      // oauth4webapi's own check, or the guard's: either way the request never leaves.
      expect(fragment.get('error_description')).toMatch(/HTTPS/);
      expect(plainAsked).toBe(0);
    } finally {
      await s.stop();
    }
  });

  it("follows no redirect from a provider's endpoint: discovery, and a profile fetch", async () => {
    const s = await startService();
    try {
      await expectStatus(
        await s.credential('acme', 'moved-issuer', { issuer: idp.url('/moved', IDP_HOST) }),
        201,
      );
      idp.requests.length = 0;
      await expectStatus(await s.start('moved-issuer'), 502);
      expect(pathsSeen()).toEqual(['/moved/.well-known/openid-configuration']);

      await expectStatus(await s.credential('moved', 'moved-profile'), 201);
      idp.requests.length = 0;
      const fragment = await s.signIn('moved-profile');
      expect(fragment.get('token')).toBeNull();
      expect(fragment.get('error_description')).toContain('answered 302');
      expect(pathsSeen()).toEqual(['/oauth/token', '/api/user']);
    } finally {
      await s.stop();
    }
  });
});
