import { createRemoteJWKSet, customFetch, decodeJwt, jwtVerify } from 'jose';
import * as oauth from 'oauth4webapi';
import type { GuardedFetch } from '../../../core/ports/outbound-requests.ts';
import type { FromOptions, SsoProvider } from '../../../core/sso/define-provider.ts';

/** A provider's authorization server, as the sign-in talks to it. */
export interface ProviderServer {
  as: oauth.AuthorizationServer;
  /** Discovered from an issuer: an ID token is required and verified. */
  oidc: boolean;
  /** The ID token algorithms accepted: the issuer's, among the asymmetric ones; RS256 by default. */
  algorithms: string[];
  /** The `iss` an ID token must carry when the discovered issuer is an alias or a template. */
  idTokenIssuer?: (discoveredIssuer: string, claims: Readonly<Record<string, unknown>>) => string;
}

/** Why a provider step failed, as AuthenticationFailed_v1's `failure_reason` says it. */
export class ProviderFailure extends Error {
  constructor(
    readonly reason: 'provider_error' | 'access_denied' | 'bad_id_token' | 'issuer_mismatch',
    message: string,
  ) {
    super(message);
  }
}

// Never `none` or a MAC: a client secret known to the service must not be able to forge ID tokens.
const ASYMMETRIC = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const DISCOVERY_TTL_MS = 10 * 60_000;

const resolve = <O>(url: FromOptions<O>, options: O) => (typeof url === 'string' ? url : url(options));
const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Discovery (cached), the authorization URL, the code exchange and the ID token's verification. Every
 * request to the provider (discovery, JWKS, token, userinfo, and the profile fetches of providers
 * without ID tokens, through `fetch`) goes through the guarded `fetch`: https only, vetted addresses,
 * no redirects, and a failure the tenant reads without the network's detail.
 */
export function createProviderClient(fetch: GuardedFetch) {
  const request = { [oauth.customFetch]: fetch };
  const discovered = new Map<string, { at: number; server: Promise<ProviderServer> }>();
  const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

  async function discover(
    issuer: string,
    idTokenIssuer: ProviderServer['idTokenIssuer'],
  ): Promise<ProviderServer> {
    const url = new URL(issuer);
    const res = await oauth.discoveryRequest(url, request);
    // An alias's metadata names another issuer (Entra's `common` a `{tenantid}` template): the provider
    // says which `iss` its ID tokens carry, so only then is the document's issuer not required to match.
    const as = idTokenIssuer ? await aliasMetadata(res) : await oauth.processDiscoveryResponse(url, res);
    const offered = as.id_token_signing_alg_values_supported ?? ['RS256'];
    const algorithms = offered.filter((a) => ASYMMETRIC.includes(a));
    if (!algorithms.length) throw new Error(`${issuer} offers no asymmetric ID token algorithm`);
    return { as, oidc: true, algorithms, ...(idTokenIssuer ? { idTokenIssuer } : {}) };
  }

  return {
    /** The guarded fetch, for providers' own requests (`SsoProfileContext.fetch`). */
    fetch,

    /** The provider's server for a credential's options: discovered (cached ten minutes) or as given. */
    async discoverServer<O>(
      provider: SsoProvider<string, O>,
      options: O,
      now: number,
    ): Promise<ProviderServer> {
      const ep = provider.endpoints;
      if ('issuer' in ep) {
        const issuer = resolve(ep.issuer, options);
        const hit = discovered.get(issuer);
        if (hit && now - hit.at < DISCOVERY_TTL_MS) return hit.server;
        const server = discover(issuer, ep.idTokenIssuer?.bind(ep));
        discovered.set(issuer, { at: now, server });
        // A failed discovery is not cached: the next sign-in tries again.
        server.catch(() => discovered.delete(issuer));
        // The issuer is left out: the tenant knows it, and a message without it names no port.
        return server.catch((e) => {
          throw new ProviderFailure('provider_error', `discovery of the issuer failed: ${describe(e)}`);
        });
      }
      const authorization = resolve(ep.authorization, options);
      const as: oauth.AuthorizationServer = {
        issuer: new URL(authorization).origin,
        authorization_endpoint: authorization,
        token_endpoint: resolve(ep.token, options),
        ...(ep.userinfo ? { userinfo_endpoint: resolve(ep.userinfo, options) } : {}),
      };
      return { as, oidc: false, algorithms: [] };
    },

    /** Exchanges the code, and for OIDC verifies the ID token; the access token and the ID token's claims. */
    async exchange(
      server: ProviderServer,
      c: {
        clientId: string;
        clientSecret: string;
        callbackUrl: string;
        params: URLSearchParams;
        state: string;
        nonce: string;
        codeVerifier: string;
      },
    ): Promise<{ accessToken: string; idTokenClaims?: Record<string, unknown> }> {
      const { as: discoveredAs } = server;
      let as = discoveredAs;
      const client: oauth.Client = { client_id: c.clientId };
      // RFC 9207 before anything else: an answer of another issuer is never redeemed.
      const answered = answeringIssuer(server, c.params);
      if (!answered.ok) throw new ProviderFailure('issuer_mismatch', answered.problem);
      let params: URLSearchParams;
      try {
        params = oauth.validateAuthResponse({ ...as, issuer: answered.issuer }, client, c.params, c.state);
      } catch (e) {
        if (e instanceof oauth.AuthorizationResponseError)
          throw new ProviderFailure(
            e.error === 'access_denied' ? 'access_denied' : 'provider_error',
            `the provider answered ${e.error}${e.error_description ? `: ${e.error_description}` : ''}`,
          );
        throw new ProviderFailure('provider_error', `bad authorization response: ${describe(e)}`);
      }
      const methods = as.token_endpoint_auth_methods_supported;
      const auth =
        server.oidc && (!methods || methods.includes('client_secret_basic'))
          ? oauth.ClientSecretBasic(c.clientSecret)
          : oauth.ClientSecretPost(c.clientSecret);
      let result: oauth.TokenEndpointResponse;
      try {
        const res = await oauth.authorizationCodeGrantRequest(
          as,
          client,
          auth,
          params,
          c.callbackUrl,
          c.codeVerifier || oauth.nopkce,
          request,
        );
        if (server.idTokenIssuer) {
          as = { ...as, issuer: await expectedIssuer(server, res) };
          // An alias's answer named its tenant's issuer: the ID token must be that tenant's.
          if (c.params.has('iss') && answered.issuer !== as.issuer)
            throw new ProviderFailure(
              'issuer_mismatch',
              `the answer's iss ${answered.issuer} is not the ID token's issuer ${as.issuer}`,
            );
        }
        result = await oauth.processAuthorizationCodeResponse(as, client, res, {
          expectedNonce: server.oidc ? c.nonce : oauth.expectNoNonce,
          requireIdToken: server.oidc,
        });
      } catch (e) {
        if (e instanceof ProviderFailure) throw e;
        const idToken =
          e instanceof oauth.OperationProcessingError && /JWT|ID Token/i.test(`${e.code} ${e.message}`);
        throw new ProviderFailure(
          idToken ? 'bad_id_token' : 'provider_error',
          `code exchange failed: ${describe(e)}`,
        );
      }
      if (!server.oidc || !result.id_token) return { accessToken: result.access_token };
      // oauth4webapi checked the claims; the signature is checked here, against the issuer's own keys.
      const jwksUri = as.jwks_uri;
      if (!jwksUri) throw new ProviderFailure('provider_error', `${as.issuer} publishes no jwks_uri`);
      const keys = keySets.get(jwksUri) ?? createRemoteJWKSet(new URL(jwksUri), { [customFetch]: fetch });
      keySets.set(jwksUri, keys);
      try {
        const { payload } = await jwtVerify(result.id_token, keys, {
          issuer: as.issuer,
          audience: c.clientId,
          algorithms: server.algorithms,
          requiredClaims: ['sub', 'exp', 'iat', 'nonce'],
        });
        if (payload.nonce !== c.nonce) throw new Error('the nonce is not the one sent');
        return { accessToken: result.access_token, idTokenClaims: payload };
      } catch (e) {
        throw new ProviderFailure('bad_id_token', `the ID token does not verify: ${describe(e)}`);
      }
    },

    /**
     * The verified ID token's claims completed by the UserInfo endpoint's, for an issuer that keeps
     * `email` out of ID tokens (OIDC Core 5.4 when an access token is issued). UserInfo must name the
     * same `sub`; the ID token's claims win.
     */
    async withUserInfo(
      server: ProviderServer,
      clientId: string,
      accessToken: string,
      claims: Record<string, unknown>,
    ): Promise<Record<string, unknown>> {
      if (typeof claims.email === 'string' || !server.as.userinfo_endpoint || typeof claims.sub !== 'string')
        return claims;
      try {
        const client: oauth.Client = { client_id: clientId };
        const res = await oauth.userInfoRequest(server.as, client, accessToken, request);
        const info = await oauth.processUserInfoResponse(server.as, client, claims.sub, res);
        return { ...info, ...claims };
      } catch (e) {
        throw new ProviderFailure('provider_error', `userinfo failed: ${describe(e)}`);
      }
    },
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
const texts = (value: unknown) =>
  Array.isArray(value) && value.every((x) => typeof x === 'string') ? value : undefined;

/**
 * The metadata of an alias issuer: read as oauth4webapi reads it, without requiring its `issuer` to be
 * the URL it was fetched from. Only the members the sign-in uses are kept.
 */
async function aliasMetadata(res: Response): Promise<oauth.AuthorizationServer> {
  if (res.status !== 200) throw new Error(`discovery answered ${res.status}`);
  const doc: unknown = await res.json();
  if (!doc || typeof doc !== 'object') throw new Error('discovery document is not a JSON object');
  const m = new Map(Object.entries(doc));
  const issuer = text(m.get('issuer'));
  if (!issuer) throw new Error('discovery document has no issuer');
  const members = {
    authorization_endpoint: text(m.get('authorization_endpoint')),
    token_endpoint: text(m.get('token_endpoint')),
    userinfo_endpoint: text(m.get('userinfo_endpoint')),
    jwks_uri: text(m.get('jwks_uri')),
    id_token_signing_alg_values_supported: texts(m.get('id_token_signing_alg_values_supported')),
    token_endpoint_auth_methods_supported: texts(m.get('token_endpoint_auth_methods_supported')),
    authorization_response_iss_parameter_supported:
      m.get('authorization_response_iss_parameter_supported') === true ? true : undefined,
  };
  const as: oauth.AuthorizationServer = { issuer };
  for (const [k, value] of Object.entries(members))
    if (value !== undefined) Object.assign(as, { [k]: value });
  return as;
}

const GUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The issuer an authorization response comes from (RFC 9207): its `iss`, which must be the provider's
 * issuer (for an alias whose metadata publishes a `{tenantid}` template, that template with a tenant
 * ID in it, which the ID token must then name too); required when the metadata says the provider sends
 * it. Without `iss`, the discovered issuer, and the credential's own redirect URI is what says which
 * provider answered.
 */
function answeringIssuer(
  server: ProviderServer,
  params: URLSearchParams,
): { ok: true; issuer: string } | { ok: false; problem: string } {
  const { issuer, authorization_response_iss_parameter_supported: sendsIss } = server.as;
  const all = params.getAll('iss');
  if (all.length > 1) return { ok: false, problem: "the provider's answer has more than one iss" };
  const iss = all[0];
  if (iss === undefined)
    return sendsIss
      ? {
          ok: false,
          problem: `the provider's answer has no iss, though ${issuer} says it sends one (RFC 9207)`,
        }
      : { ok: true, issuer };
  const template =
    server.idTokenIssuer && issuer.includes('{tenantid}')
      ? new RegExp(`^${escaped(issuer).replace('\\{tenantid\\}', GUID)}$`)
      : undefined;
  if (iss === issuer || template?.test(iss)) return { ok: true, issuer: iss };
  return {
    ok: false,
    problem: `the provider's answer comes from issuer ${iss}, not from this credential's issuer ${issuer}`,
  };
}

/** The `iss` this token response's ID token must carry, from its own (not yet verified) claims. */
async function expectedIssuer(server: ProviderServer, res: Response): Promise<string> {
  const body: unknown = await res
    .clone()
    .json()
    .catch(() => undefined);
  const idToken =
    body && typeof body === 'object' ? text(new Map(Object.entries(body)).get('id_token')) : undefined;
  let claims: Record<string, unknown> = {};
  try {
    if (idToken) claims = decodeJwt(idToken);
  } catch {
    // A malformed token fails oauth4webapi's own checks next, with its message.
  }
  return server.idTokenIssuer?.(server.as.issuer, claims) ?? server.as.issuer;
}
