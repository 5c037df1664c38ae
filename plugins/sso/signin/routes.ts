import { Elysia } from 'elysia';
import { consistentWrite } from '../../../core/http/consistency.ts';
import { errorResponses, ok } from '../../../core/http/envelope.ts';
import { formPostParams, formPostRedirect } from '../../../core/http/form-post-callback.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../core/plugin.ts';
import { SsoSignInErrors } from './errors.ts';
import type { SignInFlow } from './flow.ts';
import { isSecureUrl } from './loopback.ts';
import { CallbackQuery, RedirectUrisBody, RedirectUrisResult, StartQuery } from './schema.ts';
import type { SignInStore } from './store.ts';

const TAGS = ['SSO sign-in'];

// The token travels in the Location's fragment: never cached, never sent on as a Referer.
const redirect = (location: string) =>
  new Response(null, {
    status: 302,
    headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  });

export function signInRoutes(
  ctx: ServiceContext,
  deps: { flow: SignInFlow; store: SignInStore; readContext: (r: Request) => RequestContext },
) {
  return new Elysia()
    .use(ctx.auth)
    .get('/sso/oidc/start', async ({ org, query }) => redirect(await deps.flow.start(org.id, query)), {
      orgOnly: true,
      query: StartQuery,
      detail: {
        operationId: 'StartSsoSignIn',
        summary: 'Start a sign-in with a stored SSO credential',
        description:
          "End-user facing: `Service-OrgID` only. Answers 302 to the provider of the credential `client_id`, with state, nonce (OIDC) and PKCE S256 (where the provider supports it) and the credential's effective scopes. `redirect_uri` must be exactly one of the organization's SSO redirect URIs; `state`, the application's own, comes back with the result. The state expires after SSO_SIGNIN_STATE_TTL_SECONDS (600 by default) and is single-use.",
        responses: {
          302: { description: "The provider's authorization URL in Location" },
          400: errorDoc('redirect_uri is not allowed, or a parameter breaks its rule'),
          404: errorDoc('No credential with this client_id in this organization'),
          502: errorDoc('The provider could not be discovered'),
        },
        tags: TAGS,
      },
    })
    .get(
      '/sso/oidc/callback',
      async ({ request }) => {
        const params = new URL(request.url).searchParams;
        return redirect(await deps.flow.callback(params, deps.readContext(request)));
      },
      {
        query: CallbackQuery,
        detail: {
          operationId: 'SsoSignInCallback',
          summary: "The providers' redirect back: finishes the sign-in",
          description:
            "Register `{PUBLIC_BASE_URL}/sso/oidc/callback` at the provider. Exchanges the code, verifies the ID token (the issuer's keys, pinned asymmetric algorithms, issuer, audience, nonce, expiry) or fetches the profile, finds or creates the person by verified email, issues the token (the token_minted hook runs) and answers 302 to the application's redirect URI with `#token=...&person_id=...&expires_at=...&state=...` in the fragment, or `#error=...&error_description=...&state=...` (access_denied, server_error, invalid_request). Emits AuthenticationSucceeded_v1 or AuthenticationFailed_v1 (method oidc). A state this service never issued is a 400 envelope.",
          responses: {
            302: { description: "The application's redirect URI, with the result in the fragment" },
            400: errorDoc('No sign-in was started with this state'),
          },
          tags: TAGS,
        },
      },
    )
    .post(
      '/sso/oidc/callback',
      async ({ request }) => {
        const read = await formPostParams(request);
        if (!read.ok) throw SsoSignInErrors.INVALID_STATE(read.problem);
        return formPostRedirect(`${ctx.config.publicBaseUrl}/sso/oidc/callback`, read.params);
      },
      {
        parse: 'none',
        detail: {
          operationId: 'SsoSignInCallbackPosted',
          summary: "A provider's answer posted back (form_post): on to the callback by GET",
          description:
            'For providers that post their answer (the OAuth 2.0 Form Post Response Mode, which Sign in with Apple uses when asked for the name or email): a 303 to GET /sso/oidc/callback with the posted fields in its query, which then finishes the sign-in as for an answer in the query. A body that is not a form is a 400 envelope.',
          responses: {
            303: { description: 'GET /sso/oidc/callback with the same parameters' },
            400: errorDoc('The body is not a form of at most 16 fields'),
          },
          tags: TAGS,
        },
      },
    )
    .get(
      '/organizations/sso/redirect-uris',
      async ({ org }) => ok({ redirect_uris: await deps.store.redirectUris(org.id) }),
      {
        apiKey: true,
        response: { 200: RedirectUrisResult, ...errorResponses },
        detail: {
          operationId: 'GetSsoRedirectUris',
          summary: 'The application URIs an SSO sign-in may end at',
          tags: TAGS,
        },
      },
    )
    .put(
      '/organizations/sso/redirect-uris',
      async ({ org, body, request }) => {
        body.redirect_uris.forEach((uri, i) => {
          if (!isSecureUrl(uri, true))
            throw SsoSignInErrors.INVALID_REDIRECT_URI(
              `redirect_uris[${i}] must be an https URL (http only on a loopback host) without credentials or fragment`,
            );
        });
        await consistentWrite(request, ctx.headers, () =>
          deps.store.setRedirectUris(org.id, body.redirect_uris),
        );
        return ok({ redirect_uris: await deps.store.redirectUris(org.id) });
      },
      {
        apiKey: true,
        body: RedirectUrisBody,
        parse: 'json',
        headers: consistencyHeaders(ctx.headers),
        response: { 200: RedirectUrisResult, ...errorResponses },
        detail: {
          operationId: 'SetSsoRedirectUris',
          summary: 'Replace the application URIs an SSO sign-in may end at',
          description:
            'Exact-match list (at most 50): https URLs, or http on a loopback host for native apps and development.',
          responses: { 400: errorDoc('A URI breaks the rule'), ...writeErrorDocs },
          tags: TAGS,
        },
      },
    );
}
