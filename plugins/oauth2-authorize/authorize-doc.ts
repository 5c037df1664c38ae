import type { DocumentDecoration } from 'elysia';

/** The authorization request's parameters: name, required, description (GET query or POST form). */
const PARAMETERS: [name: string, required: boolean, description?: string][] = [
  ['client_id', true],
  ['redirect_uri', true],
  ['response_type', true, 'code'],
  ['scope', true, 'space-delimited, within the client scopes'],
  ['state', false],
  ['code_challenge', false, 'BASE64URL(SHA256(code_verifier)); required for public clients'],
  ['code_challenge_method', false, 'S256'],
  ['nonce', false, 'copied into the ID token'],
  ['response_mode', false, 'query (the only one supported)'],
  ['prompt', false, 'none is answered login_required'],
  ['login_hint', false, 'prefills the handle'],
  [
    'idp',
    false,
    "the client_id of an SSO credential of the client's organization enabled for the authorization server: skips the page and goes straight to that provider (a credential not offered answers the page with a message)",
  ],
  ['request', false, 'not supported: answered request_not_supported'],
  ['request_uri', false, 'not supported: answered request_uri_not_supported'],
];

const DESCRIPTION =
  "RFC 6749 §4.1.1 with PKCE (RFC 7636). `client_id` and `redirect_uri` (exactly one of the client's) are checked first: a problem with either is an HTML error page, never a redirect. Every later problem redirects to the client with `error` (invalid_request, unauthorized_client, unsupported_response_type, invalid_scope, login_required, request_not_supported, request_uri_not_supported), `error_description`, `state` and `iss`. A parameter given twice is refused. `code_challenge_method` must be S256 (plain is refused); public clients must send a `code_challenge`. A valid request answers the sign-in page (no script, no external asset, a strict Content-Security-Policy, not framable) and sets an httpOnly cookie binding the login to the browser; after the login the browser is redirected (303) with `code`, `state` and `iss`. Codes are single-use and live 60 s. With SSO sign-in enabled, the page also shows one button per SSO credential of the client's organization with `enable_in_service_oidc_authz_server` (POST /oauth2/authorize/sso), and `idp` names one to go straight to its provider.";

const responses = (bad: string): DocumentDecoration['responses'] => ({
  200: { description: 'The sign-in page', content: { 'text/html': { schema: { type: 'string' as const } } } },
  302: { description: 'An error sent back to the client redirect URI' },
  400: { description: `An HTML error page: ${bad}` },
  429: { description: 'An HTML error page: too many sign-ins started from this address' },
});

const TAGS = ['OAuth 2.0 authorization endpoint'];

/** OpenAPI of GET /oauth2/authorize: the parameters in the query. */
export const getAuthorizeDoc: DocumentDecoration = {
  operationId: 'GetOauth2Authorize',
  summary: 'Request an authorization code: the hosted login page',
  description: DESCRIPTION,
  parameters: PARAMETERS.map(([name, required, description]) => ({
    name,
    in: 'query',
    required,
    schema: { type: 'string' as const },
    ...(description ? { description } : {}),
  })),
  responses: responses('client_id or redirect_uri is missing, repeated or unknown'),
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize: the same parameters, form-serialized (OIDC Core §3.1.2.1). */
export const postAuthorizeDoc: DocumentDecoration = {
  operationId: 'PostOauth2Authorize',
  summary: 'Request an authorization code by POST (form-serialized): the hosted login page',
  description: `The same request as GET /oauth2/authorize, its parameters in an application/x-www-form-urlencoded body (OpenID Connect Core §3.1.2.1), for a client that sends the browser with an auto-submitted form. The query string is not read. The same checks, errors and answers as GET; a body that is not form-encoded or cannot be read is an HTML error page (400). No cookie or CSRF token is needed: like GET, it is a navigation from the client application. ${DESCRIPTION}`,
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object' as const,
          required: PARAMETERS.filter(([, required]) => required).map(([name]) => name),
          properties: Object.fromEntries(
            PARAMETERS.map(([name, , description]) => [
              name,
              { type: 'string' as const, ...(description ? { description } : {}) },
            ]),
          ),
        },
      },
    },
  },
  responses: responses(
    'client_id or redirect_uri is missing, repeated or unknown, or the body is not application/x-www-form-urlencoded',
  ),
  tags: TAGS,
  security: [],
};
