import { Elysia } from 'elysia';
import { jwksRenderer } from '../../../core/http/jwks-response.ts';
import { ACR } from '../../../core/tokens/authentication-context.ts';
import { DPOP_SIGNING_ALGORITHMS } from '../../../core/tokens/dpop-algorithms.ts';
import type { TokenKeys } from '../issue/keys.ts';

const TAGS = ['OIDC discovery'];

/** True when an If-None-Match header names this strong ETag (or `*`). */
function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}

const SECRET_METHODS = ['client_secret_basic', 'client_secret_post'];
const JWT_METHODS = ['private_key_jwt', 'client_secret_jwt'];
/** What client assertions may be signed with: private_key_jwt's algorithms, then client_secret_jwt's. */
const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519', 'HS256'];

/** The OpenID Provider metadata (OpenID Connect Discovery 1.0) of this deployment. */
export function discoveryDocument(base: string) {
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth2/authorize`,
    token_endpoint: `${base}/oauth2/tokens`,
    introspection_endpoint: `${base}/oauth2/tokens/introspect`,
    revocation_endpoint: `${base}/oauth2/tokens/revoke`,
    userinfo_endpoint: `${base}/oauth2/userinfo`,
    // RFC 8628: devices poll the token endpoint with the device code; the person approves at /oauth2/device.
    device_authorization_endpoint: `${base}/oauth2/device_authorization`,
    // RFC 7591: with an initial access token, which names its organization. An organization's own
    // issuer lists its own endpoint, where open registration works too (organization-metadata.ts).
    registration_endpoint: `${base}/oauth2/register`,
    // RFC 9126: requests pushed first; required only of the clients registered with
    // require_pushed_authorization_requests.
    pushed_authorization_request_endpoint: `${base}/oauth2/par`,
    require_pushed_authorization_requests: false,
    jwks_uri: `${base}/.well-known/jwks.json`,
    // RP-Initiated Logout 1.0; Back-Channel Logout 1.0 (logout tokens carry sid).
    end_session_endpoint: `${base}/oauth2/logout`,
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    frontchannel_logout_supported: false,
    response_types_supported: ['code'],
    // Said outright: left out, RFC 8414 and OIDC Discovery default it to query and fragment.
    response_modes_supported: ['query', 'form_post'],
    // OpenID Connect Core 3.1.2.1's values (the Prompt Create draft names this member).
    prompt_values_supported: ['none', 'login', 'consent', 'select_account'],
    // OpenID Connect Core 5.5: id_token and userinfo members.
    claims_parameter_supported: true,
    acr_values_supported: [ACR.oneFactor, ACR.multiFactor],
    // Said outright: both default to true when left out (OIDC Discovery §3); the endpoint refuses them.
    // (request_uri is OIDC Core 6.2's, fetched from the client; RFC 9126's pushed request_uri is taken.)
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
      // RFC 8693, the oauth2 plugin's.
      'urn:ietf:params:oauth:grant-type:token-exchange',
    ],
    // 'none': public clients send client_id alone (with PKCE). The JWT methods are RFC 7523's.
    token_endpoint_auth_methods_supported: [...SECRET_METHODS, ...JWT_METHODS, 'none'],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_methods_supported: [...SECRET_METHODS, ...JWT_METHODS],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint_auth_methods_supported: [...SECRET_METHODS, ...JWT_METHODS, 'none'],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ['S256'],
    // RFC 9449 §5.1: the token endpoint binds tokens to the key of a DPoP proof signed with one of these.
    dpop_signing_alg_values_supported: [...DPOP_SIGNING_ALGORITHMS],
    scopes_supported: ['openid', 'email', 'phone', 'username'],
    // RFC 9207: authorization responses carry iss, so a client talking to several servers tells them apart.
    authorization_response_iss_parameter_supported: true,
    claims_supported: [
      'iss',
      'sub',
      'iat',
      'exp',
      'jti',
      'oid',
      'person_id',
      'authenticated_methods',
      'first_token',
      'aud',
      'azp',
      'nonce',
      'auth_time',
      'sid',
      'amr',
      'acr',
      'email',
      'email_verified',
      'phone_number',
      'phone_number_verified',
      'username',
    ],
  };
}

const JWKS_JSON = {
  type: 'object' as const,
  properties: { keys: { type: 'array' as const, items: { type: 'object' as const } } },
  required: ['keys'],
};

/** The discovery document's members and their JSON types, for the OpenAPI document. */
const DISCOVERY_JSON = {
  type: 'object' as const,
  properties: Object.fromEntries(
    Object.entries(discoveryDocument('https://ids.example')).map(([name, value]) => [
      name,
      Array.isArray(value)
        ? { type: 'array' as const, items: { type: 'string' as const } }
        : { type: typeof value === 'boolean' ? ('boolean' as const) : ('string' as const) },
    ]),
  ),
};

/**
 * Public documents any origin may read: a browser app (a public client) runs discovery and verifies ID
 * tokens with the keys itself. Nothing in them depends on who asks, and no cookie is involved.
 */
const PUBLIC_CORS = { 'access-control-allow-origin': '*' };

/**
 * `GET /.well-known/jwks.json` (the deployment's token keys: current and, after a rotation, previous)
 * and `GET /.well-known/openid-configuration`. Public: no organization header, no key; readable from
 * any origin (CORS).
 */
export function wellKnownRoutes(base: string, keys: TokenKeys, maxAgeSeconds: number) {
  const render = jwksRenderer();
  const discovery = JSON.stringify(discoveryDocument(base));
  const discoveryAnswer = () =>
    new Response(discovery, {
      headers: {
        'content-type': 'application/json',
        'cache-control': `public, max-age=${maxAgeSeconds}`,
        ...PUBLIC_CORS,
      },
    });

  return new Elysia()
    .get(
      '/.well-known/jwks.json',
      async ({ request }) => {
        const { body, etag } = await render(await keys.jwks());
        const headers = {
          'cache-control': `public, max-age=${maxAgeSeconds}`,
          etag,
          'content-type': 'application/json',
          ...PUBLIC_CORS,
        };
        if (matches(request.headers.get('if-none-match'), etag))
          return new Response(null, { status: 304, headers });
        return new Response(body, { status: 200, headers });
      },
      {
        detail: {
          operationId: 'GetWellKnownJwksJson',
          summary: 'Identity token keys',
          description:
            'The ES256 public keys that sign identity tokens, chosen by the JWT header kid: the current key and, after a rotation, the previous ones until tokens they signed have expired. Public. Cacheable: Cache-Control, a strong ETag, 304 on If-None-Match.',
          tags: TAGS,
          security: [],
          // Here rather than a `response` map, which would replace the 304 in the document.
          responses: {
            200: {
              description: 'The key set, with Cache-Control and a strong ETag',
              headers: { ETag: { schema: { type: 'string' } } },
              content: { 'application/json': { schema: JWKS_JSON } },
            },
            304: { description: 'Not modified: the ETag still names the current key set' },
          },
        },
      },
    )
    .get('/.well-known/openid-configuration', discoveryAnswer, {
      detail: {
        operationId: 'GetWellKnownOpenidConfiguration',
        summary: 'OpenID configuration',
        description:
          'The OpenID Provider metadata: issuer (PUBLIC_BASE_URL), jwks_uri and the endpoints. Public.',
        tags: TAGS,
        security: [],
        responses: {
          200: {
            description: 'The metadata, with Cache-Control',
            content: { 'application/json': { schema: DISCOVERY_JSON } },
          },
        },
      },
    })
    .get('/.well-known/oauth-authorization-server', discoveryAnswer, {
      detail: {
        operationId: 'GetWellKnownOauthAuthorizationServer',
        summary: 'OAuth 2.0 authorization server metadata',
        description: 'RFC 8414: the same document as the OpenID configuration. Public.',
        tags: TAGS,
        security: [],
        responses: {
          200: {
            description: 'The metadata, with Cache-Control',
            content: { 'application/json': { schema: DISCOVERY_JSON } },
          },
        },
      },
    });
}
