import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { decodeJwt, exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';
import { fetchTestHost, OP_HOST, testTls } from './tls.ts';

export { OP_HOST };

/** An account of the loopback OpenID provider: what its ID tokens say about the person. */
export interface OpAccount {
  sub: string;
  email: string;
  email_verified: boolean;
}

/** What the person does at the provider's interaction: sign in as an account, or refuse. */
export type OpDecision = OpAccount | 'deny';

/** A request the provider received, as `record` keeps it. */
export interface OpRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed form or JSON body of the provider's own endpoints (the token endpoint's), as JSON. */
  body?: string;
}

/** How the loopback provider behaves besides its client. */
export interface OpOptions {
  /** Keep every request it receives in `requests` (a provider playing the attacker). @default false */
  record?: boolean;
  /**
   * Behave as a provider without RFC 9207: no `iss` in authorization responses and no
   * `authorization_response_iss_parameter_supported` in its metadata (Google, Entra). @default false
   */
  withoutIss?: boolean;
}

async function signingKey(kid: string) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  return { privateKey, jwk };
}

/**
 * A real OpenID provider (the npm package oidc-provider) on a loopback port, with one confidential
 * client. HTTPS with the test CA's certificate, at `https://op.hooks.test:<port>` (the test services map
 * OP_HOST to 127.0.0.1 and trust the CA, see testOutboundEnv): the service reaches it through the same
 * address guard as any provider. `decide` says what the next interaction does; `tamper` rewrites the
 * next ID token.
 */
export async function startOidcOp(
  client: { clientId: string; clientSecret: string; redirectUri: string },
  options: OpOptions = {},
) {
  const requests: OpRequest[] = [];
  const recorded = new WeakMap<IncomingMessage, OpRequest>();
  /** Redirect URIs allowed besides `client.redirectUri` (known once a credential is created). */
  const redirectUris = new Set<string>();
  const key = await signingKey('op-key');
  const accounts = new Map<string, OpAccount>();
  const state: { decision: OpDecision; tamper?: (idToken: string) => Promise<string> } = { decision: 'deny' };
  let provider: Provider | undefined;
  /** Time the provider spent answering requests, from their arrival to their last byte. */
  const timing = { busyMs: 0 };

  async function interaction(req: IncomingMessage, res: ServerResponse, op: Provider) {
    const details = await op.interactionDetails(req, res);
    const decision = state.decision;
    if (decision === 'deny') {
      await op.interactionFinished(req, res, {
        error: 'access_denied',
        error_description: 'the person refused',
      });
      return;
    }
    accounts.set(decision.sub, decision);
    const grant = new op.Grant({ accountId: decision.sub, clientId: client.clientId });
    grant.addOIDCScope(String(details.params.scope ?? 'openid'));
    const grantId = await grant.save();
    await op.interactionFinished(req, res, { login: { accountId: decision.sub }, consent: { grantId } });
  }

  const { certPem, keyPem } = testTls();
  const server = createServer({ cert: certPem, key: keyPem }, (req, res) => {
    if (options.record) {
      const entry: OpRequest = { method: req.method ?? '', url: req.url ?? '', headers: { ...req.headers } };
      requests.push(entry);
      recorded.set(req, entry);
    }
    const began = performance.now();
    res.on('finish', () => {
      timing.busyMs += performance.now() - began;
    });
    const op = provider;
    if (!op) return res.end();
    if (req.url?.startsWith('/interaction/')) {
      interaction(req, res, op).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
      return;
    }
    op.callback()(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://${OP_HOST}:${port}`;
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [client.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [key.jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, i) => `/interaction/${i.uid}` },
    pkce: { required: () => true },
    cookies: { keys: ['loopback-op-cookie-key'] },
    ttl: {
      Grant: 600,
      Session: 600,
      AccessToken: 600,
      IdToken: 600,
      Interaction: 600,
      AuthorizationCode: 60,
    },
    findAccount: (_ctx, sub) => {
      const account = accounts.get(sub);
      return account ? { accountId: sub, claims: () => ({ ...account }) } : undefined;
    },
  });
  const allowed = provider.Client.prototype.redirectUriAllowed;
  provider.Client.prototype.redirectUriAllowed = function (uri: string) {
    return redirectUris.has(uri) || allowed.call(this, uri);
  };
  provider.use(async (ctx, next) => {
    await next();
    const entry = recorded.get(ctx.req);
    if (entry && ctx.oidc?.body) entry.body = JSON.stringify(ctx.oidc.body);
    if (!options.withoutIss) return;
    const metadata: unknown = ctx.body;
    if (ctx.path === '/.well-known/openid-configuration' && metadata && typeof metadata === 'object')
      ctx.body = { ...metadata, authorization_response_iss_parameter_supported: undefined };
    const location = ctx.response.get('location');
    if (location && /[?&](code|error)=/.test(location)) {
      const url = new URL(location);
      url.searchParams.delete('iss');
      ctx.set('location', url.toString());
    }
  });
  provider.use(async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    const tamper = state.tamper;
    if (ctx.path === '/token' && tamper && body && typeof body === 'object' && 'id_token' in body) {
      state.tamper = undefined;
      ctx.body = { ...body, id_token: await tamper(String(body.id_token)) };
    }
  });

  /** Re-signs an ID token's claims (changed by `change`) with the provider's key, or with `other`'s. */
  async function resign(idToken: string, change: Record<string, unknown>, other?: CryptoKey) {
    const claims = { ...decodeJwt(idToken), ...change };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'op-key' })
      .sign(other ?? key.privateKey);
  }

  return {
    issuer,
    port,
    state,
    timing,
    /** Every request received, with `record`. */
    requests,
    /** Lets the client use this redirect URI too (a credential's own, known once it is created). */
    allowRedirectUri: (uri: string) => {
      redirectUris.add(uri);
    },
    /** The next token response's ID token carries another nonce (signed with the right key). */
    wrongNonce: () => {
      state.tamper = (t) => resign(t, { nonce: 'not-the-nonce-sent' });
    },
    /** The next token response's ID token is signed with a key the issuer never published (same kid). */
    otherKey: async () => {
      const other = await signingKey('op-key');
      state.tamper = (t) => resign(t, {}, other.privateKey);
    },
    stop: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * Goes through the provider as a browser does: follows redirects with a cookie jar until one leads to
 * `until` (the service's callback), and returns that URL.
 */
export async function browseTo(start: string, until: string): Promise<URL> {
  const jar = new Map<string, string>();
  let url = start;
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(until)) return new URL(url);
    const cookie = [...jar].map(([k, x]) => `${k}=${x}`).join('; ');
    const res = await fetchTestHost(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const c of res.headers.getSetCookie()) {
      const [pair = ''] = c.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (!location) throw new Error(`${url} answered ${res.status} without a redirect: ${await res.text()}`);
    url = new URL(location, url).toString();
  }
  throw new Error(`no redirect to ${until} within 10 hops`);
}
