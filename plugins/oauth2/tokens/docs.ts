import type { DocumentDecoration } from 'elysia';
import { ErrorJson } from '../../../core/http/openapi-docs.ts';

export const TAGS = ['OAuth2'];

/** HTTP Basic, or the credentials in the form (which OpenAPI cannot name as a scheme). */
export const security = [{ clientBasic: [] }];

export const form = (
  properties: Record<string, { type: 'string'; description: string; enum?: string[] }>,
  required: string[],
) => ({
  required: true,
  content: {
    'application/x-www-form-urlencoded': { schema: { type: 'object' as const, properties, required } },
  },
});

export const credentials = {
  client_id: {
    type: 'string' as const,
    description: 'With client_secret when not using HTTP Basic; alone for a public client.',
  },
  client_secret: { type: 'string' as const, description: 'When not using HTTP Basic.' },
  client_assertion_type: {
    type: 'string' as const,
    enum: ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer'],
    description:
      'With client_assertion, for a client registered for private_key_jwt or client_secret_jwt (RFC 7523).',
  },
  client_assertion: {
    type: 'string' as const,
    description:
      "A JWT signed by a key of the client's jwks or jwks_uri (private_key_jwt: RS256, PS256, ES256, EdDSA) or with HS256 keyed by its secret (client_secret_jwt): iss and sub the client_id, aud the issuer or the token endpoint, exp at most 5 minutes ahead, a jti used once.",
  },
};

export const oauthError = (description: string) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object' as const,
        properties: {
          ...ErrorJson.properties,
          meta: {
            type: 'object' as const,
            properties: {
              cursor_pagination: {
                type: 'object' as const,
                properties: {
                  limit: { type: 'integer' as const },
                  cursor: { type: 'string' as const },
                  total_count: { type: 'integer' as const },
                },
              },
            },
          },
          error: {
            type: 'string' as const,
            enum: [
              'invalid_request',
              'invalid_client',
              'invalid_grant',
              'unauthorized_client',
              'unsupported_grant_type',
              'invalid_scope',
              'invalid_target',
            ],
          },
          error_description: { type: 'string' as const },
        },
      },
    },
  },
});

const errors = {
  400: oauthError(
    'invalid_request (not a form, a parameter twice, grant_type missing, two authentication methods; token exchange: a subject or actor token refused, RFC 8693 section 2.2.2), unsupported_grant_type, unauthorized_client, invalid_scope, invalid_grant, invalid_target (a resource the client does not list, or more than one)',
  ),
  401: oauthError('invalid_client: unknown client, wrong secret; with WWW-Authenticate: Basic'),
};

/** OpenAPI of an OPTIONS route: the CORS preflight of a browser app's call. */
export const preflightDoc = (path: string) => ({
  detail: {
    summary: `CORS preflight of ${path}`,
    description:
      'Browser apps (public clients) call the token and revocation endpoints from any origin: they authenticate by their credentials, never by cookies.',
    tags: TAGS,
    security: [],
    responses: { 204: { description: 'Allowed: POST with Authorization and Content-Type' } },
  },
});

/** OpenAPI of POST /oauth2/tokens. */
export const tokenDoc: DocumentDecoration = {
  operationId: 'PostOauth2Tokens',
  summary: 'Obtain an access token',
  description:
    'Form-encoded only. The client authenticates by HTTP Basic (id and secret each form-url-encoded, RFC 6749 appendix B) or client_id and client_secret in the form, never both, or a JWT client assertion (client_assertion_type and client_assertion, RFC 7523) when registered for private_key_jwt or client_secret_jwt; a public client sends client_id alone. A parameter given twice is refused. Answers bare JSON with Cache-Control: no-store; the access token is an ES256 JWT (typ at+jwt, RFC 9068). Errors are the envelope with meta.cursor_pagination plus RFC 6749 error and error_description.',
  tags: TAGS,
  security,
  requestBody: form(
    {
      grant_type: {
        type: 'string',
        enum: [
          'client_credentials',
          'authorization_code',
          'refresh_token',
          'urn:ietf:params:oauth:grant-type:device_code',
          'urn:ietf:params:oauth:grant-type:token-exchange',
        ],
        description: 'The grants this deployment registers; others: unsupported_grant_type.',
      },
      scope: {
        type: 'string',
        description: "Space-delimited; absent: all of the client's scopes (client_credentials).",
      },
      code: { type: 'string', description: 'authorization_code' },
      redirect_uri: { type: 'string', description: 'authorization_code' },
      code_verifier: { type: 'string', description: 'authorization_code with PKCE' },
      code_challenge: {
        type: 'string',
        description:
          "authorization_code with PKCE: the spec's name for code_verifier (the same value; send one of the two)",
      },
      refresh_token: { type: 'string', description: 'refresh_token' },
      device_code: {
        type: 'string',
        description:
          'The device grant (RFC 8628): the device_code of POST /oauth2/device_authorization. Until the person approves: authorization_pending (slow_down when polled faster than the interval, which grows by 5 s), then the tokens once; access_denied, expired_token.',
      },
      subject_token: {
        type: 'string',
        description:
          "Token exchange (RFC 8693): the person's token to exchange, of the client's organization: an access token of this service or an identity token.",
      },
      subject_token_type: {
        type: 'string',
        enum: ['urn:ietf:params:oauth:token-type:access_token', 'urn:ietf:params:oauth:token-type:jwt'],
        description:
          'Token exchange: access_token for an access token of this service, jwt for an identity token. An ID token (id_token) is refused.',
      },
      actor_token: {
        type: 'string',
        description:
          'Token exchange: the token of the party acting for the person (delegation: the new token carries act); absent: impersonation.',
      },
      actor_token_type: {
        type: 'string',
        enum: ['urn:ietf:params:oauth:token-type:access_token', 'urn:ietf:params:oauth:token-type:jwt'],
        description: 'Token exchange: with actor_token, and only with it.',
      },
      requested_token_type: {
        type: 'string',
        enum: ['urn:ietf:params:oauth:token-type:access_token'],
        description: 'Token exchange: only access tokens are issued; another type is invalid_request.',
      },
      audience: {
        type: 'string',
        description:
          "Token exchange: the new token's aud, checked as resource is (one of the client's resources, or the organization's own audience); with resource, the same value.",
      },
      resource: {
        type: 'string',
        description:
          "RFC 8707: the resource the access token is for, its aud. client_credentials: one of the client's resources. authorization_code and refresh_token: the grant's own (the authorization request's resource), which may be named again, never changed. Absent: the grant's resource, else the organization's own audience, PUBLIC_BASE_URL/organizations/<organization ID>. Another, or more than one: invalid_target.",
      },
      ...credentials,
    },
    ['grant_type'],
  ),
  responses: {
    200: {
      description: 'The token response (RFC 6749 §5.1)',
      content: {
        'application/json': {
          schema: {
            type: 'object' as const,
            required: ['access_token', 'token_type', 'expires_in', 'scope'],
            properties: {
              access_token: { type: 'string' as const },
              token_type: { type: 'string', enum: ['bearer'] },
              expires_in: { type: 'integer' as const },
              scope: { type: 'string' as const },
              refresh_token: { type: 'string' as const },
              id_token: { type: 'string' as const },
              issued_token_type: {
                type: 'string' as const,
                description: 'Token exchange (RFC 8693 section 2.2.1): the access token type URN.',
              },
            },
          },
        },
      },
    },
    ...errors,
  },
};

/** OpenAPI of POST /oauth2/device_authorization. */
export const deviceAuthorizationDoc: DocumentDecoration = {
  operationId: 'PostOauth2DeviceAuthorization',
  summary: 'Start a device authorization (RFC 8628)',
  description:
    "Form-encoded only; the client authenticates as at the token endpoint (a public client by client_id alone) and must have the urn:ietf:params:oauth:grant-type:device_code grant. Answers a device code for the device to poll the token endpoint with, and a user code the person enters at verification_uri (the hosted page GET /oauth2/device), or opens verification_uri_complete. The scope asked for must be among the client's (absent: all of them).",
  tags: TAGS,
  security,
  requestBody: form(
    {
      scope: { type: 'string', description: "Space-delimited; absent: all of the client's scopes." },
      ...credentials,
    },
    [],
  ),
  responses: {
    200: {
      description: 'The device authorization response (RFC 8628 §3.2)',
      content: {
        'application/json': {
          schema: {
            type: 'object' as const,
            required: [
              'device_code',
              'user_code',
              'verification_uri',
              'verification_uri_complete',
              'expires_in',
              'interval',
            ],
            properties: {
              device_code: { type: 'string' as const },
              user_code: { type: 'string' as const, description: 'Shown as XXXX-XXXX' },
              verification_uri: { type: 'string' as const },
              verification_uri_complete: { type: 'string' as const },
              expires_in: { type: 'integer' as const },
              interval: { type: 'integer' as const },
            },
          },
        },
      },
    },
    ...errors,
  },
};

/** OpenAPI of POST /oauth2/tokens/introspect. */
export const introspectDoc: DocumentDecoration = {
  operationId: 'PostOauth2TokensIntrospect',
  summary: 'Introspect a token',
  description:
    'RFC 7662, for confidential clients (authenticated as at the token endpoint). A token of the client\'s organization that is active answers active: true with its claims; anything else, another organization\'s token included, answers {"active": false}.',
  tags: TAGS,
  security,
  requestBody: form(
    {
      token: { type: 'string', description: 'An access token or a refresh token' },
      token_type_hint: {
        type: 'string',
        description: 'access_token or refresh_token: which kind to look up first',
      },
      scope: {
        type: 'string',
        description:
          'Space-delimited scopes the token must have been granted, every one: else active is false',
      },
      ...credentials,
    },
    ['token'],
  ),
  responses: {
    200: {
      description: 'RFC 7662 §2.2',
      content: {
        'application/json': {
          schema: {
            type: 'object' as const,
            required: ['active'],
            properties: {
              active: { type: 'boolean' as const },
              scope: { type: 'string' as const },
              client_id: { type: 'string' as const },
              token_type: { type: 'string' as const },
              exp: { type: 'integer' as const },
              iat: { type: 'integer' as const },
              sub: { type: 'string' as const },
              aud: { type: 'string' as const },
              iss: { type: 'string' as const },
              jti: { type: 'string' as const },
              oid: { type: 'string' as const },
            },
          },
        },
      },
    },
    ...errors,
  },
};

/** OpenAPI of POST /oauth2/tokens/revoke. */
export const revokeDoc: DocumentDecoration = {
  operationId: 'PostOauth2TokensRevoke',
  summary: 'Revoke a token',
  description:
    "RFC 7009. An access token issued to this client stops being active (introspection, userinfo) until it expires; a refresh token goes with what its grant says. A token that is not one (invalid, expired, another organization's) answers 200 and changes nothing; another client's token of the organization is unauthorized_client.",
  tags: TAGS,
  security,
  requestBody: form(
    {
      token: { type: 'string', description: 'The token to revoke' },
      token_type_hint: { type: 'string', description: 'access_token or refresh_token' },
      ...credentials,
    },
    ['token'],
  ),
  responses: { 200: { description: 'Revoked, or nothing to revoke' }, ...errors },
};

/** OpenAPI of POST /oauth2/tokens/revoke-all. */
export const revokeAllDoc: DocumentDecoration = {
  operationId: 'PostOauth2TokensRevokeAll',
  summary: "Revoke a client's tokens for a person",
  description:
    "For confidential clients (authenticated as at the token endpoint; a public client is invalid_client). Revokes every grant this client holds for the person that began at or before until (default: now), whole: its refresh tokens stop working and the access tokens issued in it stop being active (introspection, userinfo). Another client's tokens are untouched. A person this client holds nothing for (unknown, of another organization) answers 200 and changes nothing, as revocation of an unknown token does. A bad or repeated parameter is invalid_request naming it.",
  tags: TAGS,
  security,
  requestBody: form(
    {
      person_id: { type: 'string', description: 'The person (a UUID)' },
      until: {
        type: 'string',
        description: 'RFC 3339 date-time; grants begun after it are kept. Default: now.',
      },
      ...credentials,
    },
    ['person_id'],
  ),
  responses: { 200: { description: 'Revoked, or nothing to revoke' }, ...errors },
};
