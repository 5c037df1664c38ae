import type { DocumentDecoration } from 'elysia';
import { credentials, form, oauthError, security, TAGS } from './docs.ts';

const text = (description: string) => ({ type: 'string' as const, description });

/** OpenAPI of POST /oauth2/par (RFC 9126). */
export const pushedAuthorizationDoc: DocumentDecoration = {
  operationId: 'PostOauth2Par',
  summary: 'Push an authorization request (RFC 9126)',
  description:
    "Form-encoded only; the client authenticates as at the token endpoint (HTTP Basic, client_secret in the form, a JWT client assertion whose aud may be the issuer, the token endpoint or this endpoint; a public client by client_id alone). The body holds the authorization request's parameters, checked exactly as GET /oauth2/authorize checks them (redirect_uri, response_type, scope, PKCE, resource, prompt, claims...): a refusal is answered here as JSON, never by a redirect. request_uri in the body is refused (invalid_request). A DPoP proof (header DPoP) or dpop_jkt binds the authorization code to that key (RFC 9449 section 10): its exchange then needs a proof by it. Answers 201 with the request_uri the browser is sent to the authorization endpoint with, beside client_id; it is good once, for expires_in seconds (OAUTH2_PAR_LIFETIME_SECONDS, default 60).",
  tags: TAGS,
  security,
  requestBody: form(
    {
      response_type: { type: 'string', enum: ['code'], description: 'code' },
      redirect_uri: text("One of the client's redirect URIs, exactly."),
      scope: text("Space-delimited; among the client's scopes."),
      state: text('Echoed to the redirect URI.'),
      nonce: text('Put in the ID token.'),
      code_challenge: text('PKCE S256 challenge; required of public clients.'),
      code_challenge_method: { type: 'string', enum: ['S256'], description: 'S256' },
      resource: text('RFC 8707: one of the resources the client may ask for.'),
      prompt: text('none, login, consent or select_account (OpenID Connect).'),
      max_age: text('Seconds (OpenID Connect).'),
      claims: text('The OpenID Connect claims parameter (JSON).'),
      login_hint: text('Prefills the handle field.'),
      dpop_jkt: text(
        "RFC 9449 section 10: the JWK SHA-256 thumbprint of the DPoP key the code is bound to; with a DPoP proof, it must be the proof's key.",
      ),
      ...credentials,
    },
    ['response_type', 'redirect_uri', 'scope'],
  ),
  responses: {
    201: {
      description: 'The pushed request is stored (RFC 9126 section 2.2)',
      content: {
        'application/json': {
          schema: {
            type: 'object' as const,
            required: ['request_uri', 'expires_in'],
            properties: {
              request_uri: {
                type: 'string' as const,
                description: 'urn:ietf:params:oauth:request_uri: and 256 random bits, good once',
              },
              expires_in: { type: 'integer' as const, description: 'Seconds it may be used in' },
            },
          },
        },
      },
    },
    400: oauthError(
      'invalid_request (not a form, a parameter twice, request_uri pushed, a bad redirect_uri or PKCE...), invalid_scope, invalid_target, unauthorized_client, unsupported_response_type, invalid_dpop_proof (RFC 6749 error and error_description, RFC 9126 section 2.3)',
    ),
    401: oauthError(
      'invalid_client: unknown client, wrong secret or assertion; with WWW-Authenticate: Basic',
    ),
  },
};
