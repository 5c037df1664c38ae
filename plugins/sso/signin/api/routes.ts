import { Elysia } from 'elysia';
import { type BrowserBinding, browserDigest } from '../../../../core/http/browser-binding.ts';
import { consistentWrite } from '../../../../core/http/consistency.ts';
import { errorResponses, ok } from '../../../../core/http/envelope.ts';
import { formPostParams, formPostRedirect } from '../../../../core/http/form-post-callback.ts';
import { consistencyHeaders, errorDoc, writeErrorDocs } from '../../../../core/http/openapi-docs.ts';
import type { RequestContext } from '../../../../core/http/sign-in-context.ts';
import type { ServiceContext } from '../../../../core/plugin.ts';
import { credentialRedirectUri, SIGN_IN_CALLBACK_PATH } from '../../../../core/sso/redirect-uris.ts';
import { SsoSignInErrors } from '../errors.ts';
import type { SignInFlow } from '../flow.ts';
import { isSecureUrl } from '../loopback.ts';
import {
  CallbackParams,
  CallbackQuery,
  RedirectUrisBody,
  RedirectUrisResult,
  StartQuery,
} from '../schema.ts';
import type { SignInStore } from '../store.ts';

const TAGS = ['SSO sign-in'];

// The token travels in the Location's fragment: never cached, never sent on as a Referer.
const redirect = (location: string, extra: Record<string, string> = {}) =>
  new Response(null, {
    status: 302,
    headers: { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer', ...extra },
  });

/**
 * The shared callback of before per-credential redirect URIs. It redeems nothing: with one callback
 * for every credential, the state alone chose whose token endpoint got the code (RFC 9700 section 4.4).
 * Out of the OpenAPI document, as it never succeeds (the live callback's description says so).
 */
const retired = () => {
  throw SsoSignInErrors.CALLBACK_RETIRED(
    "/sso/oidc/callback is retired: each SSO credential has a redirect URI of its own. Register the credential's redirect_uri (GET /organizations/sso/oidc/provider-credentials) at the provider and sign in again. Nothing was redeemed.",
  );
};
export function signInRoutes(
  ctx: ServiceContext,
  deps: {
    flow: SignInFlow;
    store: SignInStore;
    browser: BrowserBinding;
    readContext: (r: Request) => RequestContext;
  },
) {
  return new Elysia()
    .use(ctx.auth)
    .get(
      '/sso/oidc/start',
      async ({ org, query, request }) => {
        const browser = deps.browser.take(request);
        const location = await deps.flow.start(org.id, query, await browserDigest(browser.value));
        return redirect(location, { 'set-cookie': browser.setCookie });
      },
      {
        orgOnly: true,
        query: StartQuery,
        detail: {
          operationId: 'StartSsoSignIn',
          summary: 'Start a sign-in with a stored SSO credential',
          description:
            "End-user facing: `Service-OrgID` only; the browser itself must follow this answer, since it binds the sign-in to it. Answers 302 to the provider of the credential `client_id`, with the credential's own redirect URI (its `redirect_uri`, `{PUBLIC_BASE_URL}/sso/oidc/callback/{callback_id}`), state, nonce (OIDC) and PKCE S256 (where the provider supports it) and the credential's effective scopes, and sets a cookie (`__Host-sso_browser`, HttpOnly, SameSite=Lax; `sso_browser` without Secure on plain-http loopback development) that the callback requires. `redirect_uri` must be exactly one of the organization's SSO redirect URIs; `state`, the application's own, comes back with the result. The state expires after SSO_SIGNIN_STATE_TTL_SECONDS (600 by default) and is single-use.",
          responses: {
            302: { description: "The provider's authorization URL in Location, and the browser's cookie" },
            400: errorDoc('redirect_uri is not allowed, or a parameter breaks its rule'),
            404: errorDoc('No credential with this client_id in this organization'),
            502: errorDoc('The provider could not be discovered'),
          },
          tags: TAGS,
        },
      },
    )
    .get(
      `${SIGN_IN_CALLBACK_PATH}/:callback_id`,
      async ({ request, params }) => {
        const query = new URL(request.url).searchParams;
        const location = await deps.flow.callback(
          query,
          deps.readContext(request),
          params.callback_id,
          (stored) => deps.browser.refusal(request, stored),
        );
        return redirect(location);
      },
      {
        params: CallbackParams,
        query: CallbackQuery,
        detail: {
          operationId: 'SsoSignInCallback',
          summary: "A credential's redirect URI: the provider's answer finishes the sign-in",
          description:
            "Each credential has its own: register its `redirect_uri` (`{PUBLIC_BASE_URL}/sso/oidc/callback/{callback_id}`, shown by GET /organizations/sso/oidc/provider-credentials) at the provider. Takes only a state started for this credential (RFC 9700 section 4.4, mix-up: another credential's state is refused, 400 WRONG_CALLBACK, before any code is sent anywhere) by the browser that started it (the cookie of GET /sso/oidc/start; else 403 OTHER_BROWSER); both are reported as AuthenticationFailed_v1 (wrong_callback, other_browser). The provider's `iss` (RFC 9207) is required when its metadata says it sends one, and must be its issuer whenever present. Exchanges the code, verifies the ID token (the issuer's keys, pinned asymmetric algorithms, issuer, audience, nonce, expiry) or fetches the profile, finds or creates the person by verified email, issues the token (the token_minted hook runs) and answers 302 to the application's redirect URI with `#token=...&person_id=...&expires_at=...&state=...` in the fragment, or `#error=...&error_description=...&state=...` (access_denied, server_error, invalid_request). Emits AuthenticationSucceeded_v1 or AuthenticationFailed_v1 (method oidc). A state this service never issued is a 400 envelope; a callback ID of no credential a 404. The shared `/sso/oidc/callback` of before per-credential redirect URIs is retired: it answers 410 CALLBACK_RETIRED (GET and POST) and redeems nothing.",
          responses: {
            302: { description: "The application's redirect URI, with the result in the fragment" },
            400: errorDoc("No sign-in was started with this state, or it was another credential's"),
            403: errorDoc('The sign-in was started by another browser'),
            404: errorDoc('No credential has this callback ID'),
          },
          tags: TAGS,
        },
      },
    )
    .post(
      `${SIGN_IN_CALLBACK_PATH}/:callback_id`,
      async ({ request, params }) => {
        const read = await formPostParams(request);
        if (!read.ok) throw SsoSignInErrors.INVALID_STATE(read.problem);
        const own = credentialRedirectUri(
          ctx.config.publicBaseUrl,
          SIGN_IN_CALLBACK_PATH,
          params.callback_id,
        );
        return formPostRedirect(own, read.params);
      },
      {
        parse: 'none',
        params: CallbackParams,
        detail: {
          operationId: 'SsoSignInCallbackPosted',
          summary: "A provider's answer posted back (form_post): on to the callback by GET",
          description:
            "For providers that post their answer (the OAuth 2.0 Form Post Response Mode, which Sign in with Apple uses when asked for the name or email): a 303 to GET /sso/oidc/callback/{callback_id} (the same credential's) with the posted fields in its query, which then finishes the sign-in as for an answer in the query, with the browser's cookie. A body that is not a form is a 400 envelope.",
          responses: {
            303: { description: 'GET /sso/oidc/callback/{callback_id} with the same parameters' },
            400: errorDoc('The body is not a form of at most 16 fields'),
          },
          tags: TAGS,
        },
      },
    )
    .get(SIGN_IN_CALLBACK_PATH, () => retired(), { detail: { hide: true } })
    .post(SIGN_IN_CALLBACK_PATH, () => retired(), { parse: 'none', detail: { hide: true } })
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
