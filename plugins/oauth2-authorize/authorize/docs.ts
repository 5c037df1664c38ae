import type { DocumentDecoration } from 'elysia';

/** The authorization request's parameters: name, required, description (GET query or POST form). */
const PARAMETERS: [name: string, required: boolean, description?: string][] = [
  ['client_id', true],
  ['redirect_uri', false, 'required, but with request_uri'],
  ['response_type', false, 'code; required, but with request_uri'],
  ['scope', false, 'space-delimited, within the client scopes; required, but with request_uri'],
  ['state', false],
  ['code_challenge', false, 'BASE64URL(SHA256(code_verifier)); required for public clients'],
  ['code_challenge_method', false, 'S256'],
  ['nonce', false, 'copied into the ID token'],
  [
    'resource',
    false,
    "RFC 8707: the resource the grant's access tokens are for (their aud), one of the client's resources, once; another is invalid_target. Absent: the organization's own audience, PUBLIC_BASE_URL/organizations/<organization ID>",
  ],
  ['response_mode', false, 'query (the only one supported)'],
  ['prompt', false, 'none is answered login_required'],
  ['login_hint', false, 'prefills the handle'],
  [
    'idp',
    false,
    "the client_id of an SSO credential of the client's organization enabled for the authorization server: skips the page and goes straight to that provider (a credential not offered answers the page with a message)",
  ],
  ['request', false, 'not supported: answered request_not_supported'],
  [
    'request_uri',
    false,
    "RFC 9126: the request_uri POST /oauth2/par answered, beside client_id: the pushed parameters are used and any other is ignored; good once. Used, expired, unknown or another client's: an HTML error page, invalid_request_uri",
  ],
  [
    'dpop_jkt',
    false,
    'RFC 9449 section 10: the JWK SHA-256 thumbprint of the DPoP key the code is bound to; its exchange needs a proof by that key',
  ],
];

const DESCRIPTION =
  "RFC 6749 §4.1.1 with PKCE (RFC 7636). `client_id` and `redirect_uri` (exactly one of the client's) are checked first: a problem with either is an HTML error page, never a redirect. Every later problem redirects to the client with `error` (invalid_request, unauthorized_client, unsupported_response_type, invalid_scope, invalid_target, login_required, request_not_supported), `error_description`, `state` and `iss`. A parameter given twice is refused. With `request_uri` (RFC 9126), the parameters are those the client pushed to POST /oauth2/par; a client with require_pushed_authorization_requests gets invalid_request without one. `code_challenge_method` must be S256 (plain is refused); public clients must send a `code_challenge`. A valid request answers the sign-in page (no script, no external asset, a strict Content-Security-Policy, not framable) and sets an httpOnly cookie binding the login to the browser; after the login the browser is redirected (303) with `code`, `state` and `iss`. Codes are single-use and live 60 s. With SSO sign-in enabled, the page also shows one button per SSO credential of the client's organization with `enable_in_service_oidc_authz_server` (POST /oauth2/authorize/sso), and `idp` names one to go straight to its provider.";

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
  description: `The same request as GET /oauth2/authorize, its parameters in an application/x-www-form-urlencoded body (OpenID Connect Core §3.1.2.1), for a client that sends the browser with an auto-submitted form. The query string is not read. The same checks, errors and answers as GET; a body that is not form-encoded or cannot be read is an HTML error page (400). No cookie or CSRF token is needed: like GET, it is a navigation from the client application. A valid request posted from another site to a top-level page (Sec-Fetch-Site: cross-site, Sec-Fetch-Dest: document; not with idp), which the browser sends without the SameSite=Lax session cookie, answers a page (200) that posts the same form again from this origin, so that the session is found. ${DESCRIPTION}`,
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

/** OpenAPI of POST /oauth2/authorize/login: the hosted sign-in form. */
export const loginDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'handle', 'password'],
          properties: {
            csrf_token: { type: 'string', description: 'From the page: names the login' },
            handle: { type: 'string', maxLength: 320 },
            password: { type: 'string', maxLength: 1024 },
          },
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizeLogin',
  summary: 'The hosted sign-in form',
  description:
    'Posted by the page of GET /oauth2/authorize, form-encoded: `csrf_token` (the login, bound to the browser cookie set by the page), `handle` (an email address, phone number or username) and `password`. A wrong password answers the page again (401; 429 with Retry-After past the password limits); success redirects (303) to the client with `code`, `state` and `iss`; a login the token_minted hook refuses redirects with `error=access_denied`. Emits AuthenticationSucceeded_v1 or AuthenticationFailed_v1, and TokenMinted_v1 for the ID token.',
  responses: {
    303: { description: 'Back to the client with the code, or an error' },
    400: {
      description: 'An HTML error page: the login expired, was completed, or the form is malformed',
    },
    401: { description: 'The page again: the handle and password do not match' },
    403: {
      description: 'An HTML error page: the form did not come from the browser that opened the login',
    },
    429: { description: 'The page again: too many attempts' },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/second-factor: the second step of a sign-in. */
export const secondFactorDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'method', 'code'],
          properties: {
            csrf_token: {
              type: 'string',
              description: 'From the page: names the sign-in waiting for its second factor',
            },
            method: { type: 'string', enum: ['totp', 'otp_via_email'] },
            code: {
              type: 'string',
              maxLength: 64,
              description: 'A TOTP code, a recovery code, or the code sent by email',
            },
            challenge_id: {
              type: 'string',
              maxLength: 64,
              description: 'otp_via_email: the challenge of the code, from the page',
            },
          },
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizeSecondFactor',
  summary: 'The second step of the hosted login',
  description:
    "Posted by the page the hosted login shows after a first factor when the organization's authentication policy asks for a second (`second_factor` required, or optional for a person who enrolled one): `csrf_token`, `method` and `code`. A wrong code answers the page again (401; 429 with Retry-After past the factor's limits) and emits AuthenticationFailed_v1 with the method; a right one starts the session with both factors (`amr` then ends in `mfa`) and redirects (303) to the client with `code`, `state` and `iss`.",
  responses: {
    303: { description: 'Back to the client with the code, or an error' },
    400: { description: 'An HTML error page: the sign-in expired, was completed, or the form is malformed' },
    401: { description: 'The page again: the code is not right' },
    403: { description: 'An HTML error page: the form did not come from the browser that signed in' },
    429: { description: 'The page again: too many attempts' },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/consent: the person's answer on the consent page. */
export const consentDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'decision'],
          properties: {
            csrf_token: {
              type: 'string',
              description: 'From the page: names the request, bound to the session',
            },
            decision: { type: 'string', enum: ['allow', 'deny'] },
          },
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizeConsent',
  summary: 'The consent page',
  description:
    'Posted by the consent page a third-party client (first_party false) shows, or any client asked with prompt=consent: `csrf_token` and `decision`. It must come from the browser holding the sign-in session the page was shown in. `allow` remembers the scopes for the person and client (GET /persons/{person_id}/oauth2-consents lists them) and redirects (303) to the client with `code`, `state` and `iss` (or posts them, for response_mode=form_post); `deny` redirects with `error=access_denied`.',
  responses: {
    303: { description: 'Back to the client with the code, or access_denied' },
    400: { description: 'An HTML error page: the request expired, was answered, or the form is malformed' },
    403: { description: "An HTML error page: not the browser of the page's sign-in session" },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/sso: a single sign-on button of the hosted login. */
export const ssoDoc: DocumentDecoration = {
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['csrf_token', 'credential'],
          properties: {
            csrf_token: { type: 'string', description: 'From the page: names the login' },
            credential: {
              type: 'string',
              maxLength: 512,
              description: 'The client_id of the SSO credential the button names',
            },
          },
        },
      },
    },
  },
  operationId: 'PostOauth2AuthorizeSso',
  summary: 'A single sign-on button of the hosted login',
  description:
    "Posted by a button of the page of GET /oauth2/authorize (one per SSO credential of the client's organization with `enable_in_service_oidc_authz_server`), form-encoded, with the same CSRF defence as the password form (the login's `csrf_token` bound to the browser cookie, and the Origin). Redirects (303) to the provider with its own state, nonce and PKCE S256, bound to this login; the provider returns to GET /oauth2/authorize/sso/callback. A credential that is not enabled, or not the organization's, answers the page again (400) with a message.",
  responses: {
    303: { description: "The provider's authorization URL" },
    400: {
      description:
        'The page again (the credential is not offered, or the provider is unreachable), or an HTML error page',
    },
    403: {
      description: 'An HTML error page: the form did not come from the browser that opened the login',
    },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of GET /oauth2/authorize/sso/callback/{callback_id}: a provider's redirect back into the login. */
export const ssoCallbackDoc: DocumentDecoration = {
  operationId: 'GetOauth2AuthorizeSsoCallback',
  summary: "A credential's redirect back into the hosted login",
  description:
    "Each SSO credential has its own: register its `hosted_login_redirect_uri` (`{PUBLIC_BASE_URL}/oauth2/authorize/sso/callback/{callback_id}`, shown by GET /organizations/sso/oidc/provider-credentials) at the provider (besides its `redirect_uri` for SSO sign-in). Burns the provider state (single-use) and takes it only when it was started for this credential (RFC 9700 section 4.4, mix-up: another credential's state is an HTML error page, 403, reported as AuthenticationFailed_v1 wrong_callback, before any code is sent anywhere) and from the browser that opened the login. The provider's `iss` (RFC 9207) is required when its metadata says it sends one, and must be its issuer whenever present. Exchanges the code, verifies the ID token (issuer keys, nonce, audience, expiry), finds the person by verified email or creates one, and finishes the login the state was bound to: the token_minted hook runs as the ID token is minted (`authenticated_methods` [\"oidc\"] and `idp`, the provider), then a redirect (303) to the client with `code`, `state` and `iss`. The person refusing at the provider redirects with `error=access_denied`. Any other failure (a provider error, a wrong nonce, an unverified email, the hook's refusal) answers the page again (400) with a message and a fresh login. A replayed answer (its state used before) answers the page again too, to the browser that opened the login, while the authorization request has not expired, and finishes nothing; a state never issued, a callback ID of no credential, or a replay past that, is an HTML error page. Emits AuthenticationSucceeded_v1 (method oidc, no handle) or AuthenticationFailed_v1 with the reason, TokenMinted_v1, and PersonCreated_v1 for a new person. The shared `/oauth2/authorize/sso/callback` of before per-credential redirect URIs is retired: an HTML error page (410) for GET and POST, redeeming nothing.",
  responses: {
    303: { description: 'Back to the client with the code, or access_denied' },
    400: {
      description: 'The page again with a message, or an HTML error page (unknown, used or expired)',
    },
    403: {
      description:
        "An HTML error page: another browser than the one that opened the login, or another credential's state",
    },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of POST /oauth2/authorize/sso/callback/{callback_id}. */
export const ssoCallbackPostedDoc: DocumentDecoration = {
  operationId: 'PostOauth2AuthorizeSsoCallback',
  summary: "A provider's answer posted back into the hosted login (form_post)",
  description:
    "For providers that post their answer (the OAuth 2.0 Form Post Response Mode, which Sign in with Apple uses when asked for the name or email): a 303 to GET /oauth2/authorize/sso/callback/{callback_id} (the same credential's) with the posted fields in its query. The browser then comes back by a top-level GET, which carries the cookie binding the login to it (a cross-site POST does not), and the login finishes as for an answer in the query.",
  responses: {
    303: { description: 'GET /oauth2/authorize/sso/callback/{callback_id} with the same parameters' },
    400: { description: 'An HTML error page: the body is not a form of at most 16 fields' },
  },
  tags: TAGS,
  security: [],
};

/** OpenAPI of GET and POST /oauth2/userinfo, each with its operationId. */
export const userInfoDoc = (operationId: string) => ({
  detail: {
    operationId,
    summary: "Retrieve a person's profile (OpenID Connect UserInfo)",
    description:
      'Authorization: Bearer <access token> with the openid scope (or, by POST, the token as the `access_token` field of an application/x-www-form-urlencoded body, RFC 6750 §2.2; both at once is 400 invalid_request). Answers `sub`, `iss`, `aud` (the client), `org_id`, and the handles the token scopes ask for: `email` (scope email), `phone_number` (scope phone), `username` (scope username), with `email_verified` and `phone_number_verified` as the `verified` flag of the handle (true once a verification link was followed, an SSO provider vouched for it, a password reset link sent to it was used, or the organization set it through the API). 401 with a bare `WWW-Authenticate: Bearer` challenge (no error code, RFC 6750 §3.1) when the request has no Authorization header or one of another scheme; 400 with `Bearer error="invalid_request"` for a Bearer header that does not carry one token; 401 with `Bearer error="invalid_token"` for a bearer token that is not valid, expired, revoked or of a disabled or deleted person; 403 `insufficient_scope` without openid.',
    responses: {
      200: { description: 'The profile' },
      401: { description: 'No valid access token' },
      403: { description: 'The token lacks the openid scope' },
    },
    tags: TAGS,
    security: [],
  },
});

/** OpenAPI of OPTIONS /oauth2/userinfo. */
export const userInfoPreflightDoc = {
  summary: 'CORS preflight of /oauth2/userinfo',
  description:
    'Browser apps (public clients) read userinfo from any origin with their access token: it is never a cookie. Its answers, refusals too, carry Access-Control-Allow-Origin: * when the request has an Origin, and expose WWW-Authenticate.',
  tags: TAGS,
  security: [],
  responses: { 204: { description: 'Allowed: GET and POST with Authorization and Content-Type' } },
};
