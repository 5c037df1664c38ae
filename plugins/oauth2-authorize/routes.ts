import { Elysia } from 'elysia';
import type { OAuth2Server } from '../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../core/errors.ts';
import { type PageSources, pageHeaders } from '../../core/http/hosted-page.ts';
import type { RequestContext } from '../../core/http/sign-in-context.ts';
import { randomSecret } from '../../core/ids.ts';
import type { TokenBuckets } from '../../core/rate-limit/index.ts';
import { getAuthorizeDoc, postAuthorizeDoc } from './authorize-doc.ts';
import { checkAuthorizeRequest } from './authorize-request.ts';
import { AuthorizeErrors } from './errors.ts';
import type { Login, LoginAnswer } from './login.ts';
import { errorPage } from './page.ts';
import { digest } from './store/digest.ts';
import type { createUserInfo } from './userinfo.ts';

const TAGS = ['OAuth 2.0 authorization endpoint'];
/** A browser cookie's value as this service makes it: 256 random bits, base64url. */
const BROWSER_VALUE = /^[A-Za-z0-9_-]{43}$/;

export interface AuthorizeRouteDeps {
  server: OAuth2Server;
  login: Login;
  userInfo: ReturnType<typeof createUserInfo>;
  readContext: (request: Request) => RequestContext;
  perAddress: TokenBuckets;
  baseUrl: string;
  /** The CSP source of the pages' inline stylesheet. */
  style: string;
  /** Seconds the browser cookie lives: the login's lifetime. */
  cookieMaxAge: number;
}

function cookieOf(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get('cookie') ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

const redirect = (status: 302 | 303, location: string, extra: Record<string, string> = {}) =>
  new Response(null, {
    status,
    headers: { location, 'cache-control': 'no-store', pragma: 'no-cache', ...extra },
  });

const FORM = 'application/x-www-form-urlencoded';
const mediaType = (request: Request) =>
  request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();

/** A form-encoded body's parameters; another type, or a body that cannot be read, is an error page. */
async function readForm(request: Request, what: string): Promise<URLSearchParams> {
  if (mediaType(request) !== FORM) throw AuthorizeErrors.INVALID_FORM(`${what} must be sent as ${FORM}`);
  const body = await request.text().catch(() => {
    throw AuthorizeErrors.INVALID_FORM(`the body of ${what} could not be read`);
  });
  return new URLSearchParams(body);
}

const FORM_FIELDS = ['csrf_token', 'handle', 'password'] as const;
const SSO_FIELDS = ['csrf_token', 'credential'] as const;

function singleField(body: URLSearchParams, name: string): string {
  const all = body.getAll(name);
  if (all.length !== 1 || !all[0])
    throw AuthorizeErrors.INVALID_FORM(`${name} must be given once and not be empty`);
  return all[0];
}

/**
 * GET and POST /oauth2/authorize, POST /oauth2/authorize/login (the hosted form), the SSO routes of the
 * hosted login, and GET, POST /oauth2/userinfo.
 */
export function authorizeRoutes(deps: AuthorizeRouteDeps) {
  const secure = new URL(deps.baseUrl).protocol === 'https:';
  // __Host-: only this origin may set or read it (Secure, Path=/, no Domain). Plain http is loopback only.
  const cookieName = secure ? '__Host-oauth2_browser' : 'oauth2_browser';
  const cookie = (value: string) =>
    `${cookieName}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${deps.cookieMaxAge}${secure ? '; Secure' : ''}`;
  const baseOrigin = new URL(deps.baseUrl).origin;

  const page = (
    status: number,
    html: string,
    formTargets: string[] = [],
    extra: Record<string, string> = {},
    sources: PageSources = {},
  ) =>
    new Response(html, { status, headers: { ...pageHeaders(deps.style, formTargets, sources), ...extra } });
  const errorAnswer = (error: unknown) => {
    if (!(error instanceof ServiceError)) throw error;
    return page(error.status, errorPage(error.message), [], error.headers ?? {});
  };
  /** A form posted by a page of this service: same origin (when the browser says), form-encoded. */
  const formOf = async (request: Request) => {
    const origin = request.headers.get('origin');
    if (origin !== null && origin !== baseOrigin)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(`the form was posted from another origin (${origin})`);
    return readForm(request, 'the form');
  };
  const render = (answer: LoginAnswer, extra: Record<string, string> = {}) =>
    answer.kind === 'redirect'
      ? redirect(303, answer.location, extra)
      : page(answer.status, answer.html, answer.formTargets, { ...answer.headers, ...extra }, answer.sources);

  /**
   * GET and POST /oauth2/authorize: the same checks on the parameters, the query's or the form's. No
   * cookie or Origin is asked of a POST: like a GET, it is a navigation from the client application.
   */
  const authorize = async (request: Request, readParams: () => Promise<URLSearchParams>) => {
    try {
      const rc = deps.readContext(request);
      if (rc.clientIp) {
        const take = await deps.perAddress.take(rc.clientIp);
        if (!take.ok)
          throw AuthorizeErrors.TOO_MANY_REQUESTS.with({
            headers: { 'retry-after': String(take.retryAfterSeconds) },
          })(`too many sign-ins started from this address; retry after ${take.retryAfterSeconds} s`);
      }
      const checked = await checkAuthorizeRequest(deps.server, await readParams());
      if (!checked.ok) return redirect(302, deps.login.refusal(checked.refusal));
      const sent = cookieOf(request, cookieName);
      const browser = sent && BROWSER_VALUE.test(sent) ? sent : randomSecret('');
      const answer = await deps.login.open(checked.request, browser);
      return render(answer, { 'set-cookie': cookie(browser) });
    } catch (error) {
      return errorAnswer(error);
    }
  };

  return new Elysia()
    .get(
      '/oauth2/authorize',
      ({ request }) => authorize(request, async () => new URL(request.url).searchParams),
      { detail: getAuthorizeDoc },
    )
    .post(
      '/oauth2/authorize',
      ({ request }) => authorize(request, () => readForm(request, 'the authorization request')),
      {
        parse: 'none',
        detail: postAuthorizeDoc,
      },
    )
    .post(
      '/oauth2/authorize/login',
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = { csrf_token: '', handle: '', password: '' };
          for (const name of FORM_FIELDS) form[name] = singleField(body, name);
          if (form.handle.length > 320 || form.password.length > 1024)
            throw AuthorizeErrors.INVALID_FORM(
              'handle must be at most 320 and password at most 1024 characters',
            );
          const sent = cookieOf(request, cookieName);
          const answer = await deps.login.submit(
            { csrfToken: form.csrf_token, handle: form.handle, password: form.password },
            sent ? await digest(sent) : undefined,
            deps.readContext(request),
          );
          return render(answer);
        } catch (error) {
          return errorAnswer(error);
        }
      },
      {
        parse: 'none',
        detail: {
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
        },
      },
    )
    .post(
      '/oauth2/authorize/sso',
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = { csrf_token: '', credential: '' };
          for (const name of SSO_FIELDS) form[name] = singleField(body, name);
          if (form.credential.length > 512)
            throw AuthorizeErrors.INVALID_FORM('credential must be at most 512 characters');
          const sent = cookieOf(request, cookieName);
          return render(
            await deps.login.choose({ csrfToken: form.csrf_token, credential: form.credential }, sent),
          );
        } catch (error) {
          return errorAnswer(error);
        }
      },
      {
        parse: 'none',
        detail: {
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
        },
      },
    )
    .get(
      '/oauth2/authorize/sso/callback',
      async ({ request }) => {
        try {
          const sent = cookieOf(request, cookieName);
          const params = new URL(request.url).searchParams;
          return render(await deps.login.callback(params, sent, deps.readContext(request)));
        } catch (error) {
          return errorAnswer(error);
        }
      },
      {
        detail: {
          operationId: 'GetOauth2AuthorizeSsoCallback',
          summary: "The providers' redirect back into the hosted login",
          description:
            'Register `{PUBLIC_BASE_URL}/oauth2/authorize/sso/callback` at the provider (besides `/sso/oidc/callback` for SSO sign-in). Burns the provider state (single-use), exchanges the code, verifies the ID token (issuer keys, nonce, audience, expiry), finds the person by verified email or creates one, and finishes the login the state was bound to, only from the browser that opened it: the token_minted hook runs as the ID token is minted (`authenticated_methods` ["oidc"] and `idp`, the provider), then a redirect (303) to the client with `code`, `state` and `iss`. The person refusing at the provider redirects with `error=access_denied`. Any other failure (a provider error, a wrong nonce, an unverified email, the hook\'s refusal) answers the page again (400) with a message and a fresh login. A replayed answer (its state used before) answers the page again too, to the browser that opened the login, while the authorization request has not expired, and finishes nothing; a state never issued, or a replay past that, is an HTML error page. Emits AuthenticationSucceeded_v1 (method oidc, no handle) or AuthenticationFailed_v1 with the reason, TokenMinted_v1, and PersonCreated_v1 for a new person.',
          responses: {
            303: { description: 'Back to the client with the code, or access_denied' },
            400: {
              description: 'The page again with a message, or an HTML error page (unknown, used or expired)',
            },
            403: { description: 'An HTML error page: another browser than the one that opened the login' },
          },
          tags: TAGS,
          security: [],
        },
      },
    )
    .get(
      '/oauth2/userinfo',
      ({ request }) => userInfoResponse(deps, request),
      userInfoDoc('GetOauth2Userinfo'),
    )
    .post('/oauth2/userinfo', ({ request }) => userInfoResponse(deps, request), {
      ...userInfoDoc('PostOauth2Userinfo'),
      parse: 'none',
    });
}

async function userInfoResponse(deps: AuthorizeRouteDeps, request: Request) {
  const info = await deps.userInfo(request.headers.get('authorization'));
  return new Response(JSON.stringify(info), {
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache' },
  });
}

const userInfoDoc = (operationId: string) => ({
  detail: {
    operationId,
    summary: "Retrieve a person's profile (OpenID Connect UserInfo)",
    description:
      'Authorization: Bearer <access token> with the openid scope. Answers `sub`, `iss`, `aud` (the client), `org_id`, and the handles the token scopes ask for: `email` (scope email), `phone_number` (scope phone), `username` (scope username), with `email_verified` and `phone_number_verified` as the `verified` flag of the handle (true once a verification link was followed, an SSO provider vouched for it, a password reset link sent to it was used, or the organization set it through the API). 401 with a bare `WWW-Authenticate: Bearer` challenge (no error code, RFC 6750 §3.1) when the request has no Authorization header or one of another scheme; 400 with `Bearer error="invalid_request"` for a Bearer header that does not carry one token; 401 with `Bearer error="invalid_token"` for a bearer token that is not valid, expired, revoked or of a disabled or deleted person; 403 `insufficient_scope` without openid.',
    responses: {
      200: { description: 'The profile' },
      401: { description: 'No valid access token' },
      403: { description: 'The token lacks the openid scope' },
    },
    tags: TAGS,
    security: [],
  },
});
