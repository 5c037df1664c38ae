import { Elysia } from 'elysia';
import * as v from 'valibot';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../../core/errors.ts';
import { browserBinding } from '../../../core/http/browser-binding.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { formPostParams, formPostRedirect } from '../../../core/http/form-post-callback.ts';
import { type PageSources, pageHeaders } from '../../../core/http/hosted-page.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { credentialRedirectUri, HOSTED_LOGIN_CALLBACK_PATH } from '../../../core/sso/redirect-uris.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { LoginAnswer } from '../login/answer.ts';
import { EMAIL_CODE_PATH, EMAIL_CODE_VERIFY_PATH } from '../login/email-code-login.ts';
import { SECOND_STEP_EMAIL_PATH } from '../login/email-code-second-step.ts';
import { formPostPage } from '../login/form-post.ts';
import type { Login } from '../login/login.ts';
import { errorPage } from '../login/page.ts';
import type { SessionCookies } from '../sessions/cookie.ts';
import { digest } from '../store/digest.ts';
import type { PushedRequestStore } from '../store/pushed-requests.ts';
import { type createUserInfo, postedAuthorization } from '../tokens/userinfo.ts';
import {
  consentDoc,
  getAuthorizeDoc,
  loginDoc,
  postAuthorizeDoc,
  secondFactorDoc,
  ssoCallbackDoc,
  ssoCallbackPostedDoc,
  ssoDoc,
  userInfoDoc,
  userInfoPreflightDoc,
} from './docs.ts';
import { emailCodeDoc, emailCodeVerifyDoc, secondFactorEmailDoc } from './email-code-docs.ts';
import { emailLinkRoutes } from './email-link-routes.ts';
import { passkeyRoutes } from './passkey-routes.ts';
import { burnPushed, resolvePushed } from './pushed.ts';
import { checkAuthorizeRequest } from './request.ts';

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
  /** The organizations' sign-in session cookies. */
  sessionCookies: SessionCookies;
  /** The CSP source of the auto-submitting form's script (formPostScriptSource()). */
  formPostScript: string;
  /** Pushed authorization requests (RFC 9126), named by request_uri. */
  pushed: PushedRequestStore;
}

/** Headers from records, each `set-cookie` its own header line (a browser and a session cookie). */
function headersOf(...records: (Record<string, string> | undefined)[]): Headers {
  const headers = new Headers();
  for (const record of records)
    for (const [name, value] of Object.entries(record ?? {}))
      if (name.toLowerCase() === 'set-cookie') headers.append(name, value);
      else headers.set(name, value);
  return headers;
}

const redirect = (status: 302 | 303, location: string, ...extra: (Record<string, string> | undefined)[]) =>
  new Response(null, {
    status,
    headers: headersOf({ location, 'cache-control': 'no-store', pragma: 'no-cache' }, ...extra),
  });

/** The credential a callback's path names (core/sso/redirect-uris.ts). */
const CallbackIdParams = v.object({
  callback_id: v.pipe(
    v.string(),
    v.maxLength(64, 'callback_id must be at most 64 characters'),
    v.description("The credential's callback ID, as in its hosted_login_redirect_uri"),
  ),
});

/**
 * The shared callback of before per-credential redirect URIs: with one callback for every credential,
 * the state alone chose whose token endpoint got the code (RFC 9700 section 4.4). It continues nothing,
 * and is out of the OpenAPI document as it never succeeds (the live callback's description says so).
 */
const retired = () =>
  AuthorizeErrors.SSO_CALLBACK_RETIRED(
    "This address no longer takes sign-ins: each SSO credential has a redirect URI of its own. The organization must register the credential's hosted_login_redirect_uri at the provider. Nothing was redeemed; start the sign-in again from the application.",
  );

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
const CONSENT_FIELDS = ['csrf_token', 'decision'] as const;
const SECOND_FIELDS = ['csrf_token', 'method', 'code'] as const;

/** A field a form may leave out (the second step's challenge_id), else given once. */
function optionalField(body: URLSearchParams, name: string): string | undefined {
  return body.has(name) ? singleField(body, name) : undefined;
}

/** Field lengths a page's form keeps to: longer is a malformed form. */
function checkLengths(form: Record<string, string | undefined>, limits: Record<string, number>) {
  for (const [name, max] of Object.entries(limits))
    if ((form[name]?.length ?? 0) > max)
      throw AuthorizeErrors.INVALID_FORM(`${name} must be at most ${max} characters`);
}

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
  // The login's browser: the same binding as SSO sign-in's, under its own name and lifetime.
  const browserCookie = browserBinding({
    baseUrl: deps.baseUrl,
    name: 'oauth2_browser',
    maxAgeSeconds: deps.cookieMaxAge,
  });
  const baseOrigin = new URL(deps.baseUrl).origin;

  const page = (
    status: number,
    html: string,
    formTargets: string[] = [],
    extra: Record<string, string> = {},
    sources: PageSources = {},
    more: Record<string, string> = {},
  ) =>
    new Response(html, {
      status,
      headers: headersOf(pageHeaders(deps.style, formTargets, sources), extra, more),
    });
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
      ? redirect(303, answer.location, answer.headers, extra)
      : page(answer.status, answer.html, answer.formTargets, answer.headers, answer.sources, extra);

  /**
   * GET and POST /oauth2/authorize: the same checks on the parameters, the query's or the form's. No
   * cookie or Origin is asked of a POST: like a GET, it is a navigation from the client application.
   */
  const authorize = async (request: Request, readParams: () => Promise<URLSearchParams>) => {
    try {
      const rc = deps.readContext(request);
      if (rc.clientIp) {
        const take = await deps.perAddress.take(addressBucket(rc.clientIp));
        if (!take.ok)
          throw AuthorizeErrors.TOO_MANY_REQUESTS.with({
            headers: { 'retry-after': String(take.retryAfterSeconds) },
          })(`too many sign-ins started from this address; retry after ${take.retryAfterSeconds} s`);
      }
      const sent = await readParams();
      // RFC 9126 §4: client_id and request_uri stand for the parameters the client pushed.
      const resolved = await resolvePushed(sent, deps.pushed);
      const checked = await checkAuthorizeRequest(deps.server, resolved.params, deps.baseUrl, {
        pushed: resolved.pushed,
      });
      // A POST from another site brings no SameSite=Lax cookie, so a signed-in person would be asked to
      // sign in again: the browser posts the same form once more, from this origin, with its cookies.
      // Its answer may redirect to the client, which form-action must allow. Only a top-level page
      // (in another site's frame the cookie stays out, and the page may not be framed), and not with
      // idp (straight to a provider whose origin the page does not know: it goes on without the session).
      // A pushed request is posted again as sent (client_id and request_uri), not used up yet.
      if (
        checked.ok &&
        request.method === 'POST' &&
        request.headers.get('sec-fetch-site') === 'cross-site' &&
        request.headers.get('sec-fetch-dest') === 'document' &&
        checked.request.idp === undefined
      )
        return page(
          200,
          formPostPage(`${deps.baseUrl}/oauth2/authorize`, Object.fromEntries(sent)),
          [new URL(checked.request.redirectUri).origin],
          {},
          { scripts: [deps.formPostScript] },
        );
      // Single use (RFC 9126 §4): of two requests naming one request_uri, one goes on.
      if (resolved.pushed) await burnPushed(resolved, deps.pushed);
      if (!checked.ok) {
        const refusal = deps.login.refusal(checked.refusal);
        return refusal.kind === 'redirect' ? redirect(302, refusal.location) : render(refusal);
      }
      const browser = browserCookie.take(request);
      const session = deps.sessionCookies.sent(request, checked.request.client.orgId);
      const answer = await deps.login.open(checked.request, browser.value, session, rc);
      return render(answer, { 'set-cookie': browser.setCookie });
    } catch (error) {
      return errorAnswer(error);
    }
  };

  return new Elysia()
    .use(
      passkeyRoutes({
        login: deps.login,
        browserCookie,
        readContext: deps.readContext,
        formOf,
        render: (answer) => render(answer),
        errorAnswer,
        sessionSecret: (request, orgId) => deps.sessionCookies.sent(request, orgId),
      }),
    )
    .use(
      emailLinkRoutes({
        login: deps.login,
        baseUrl: deps.baseUrl,
        browserCookie,
        readContext: deps.readContext,
        formOf,
        render,
        errorAnswer,
      }),
    )
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
          const sent = browserCookie.sent(request);
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
      { parse: 'none', detail: loginDoc },
    )
    .post(
      '/oauth2/authorize/second-factor',
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = { csrf_token: '', method: '', code: '' };
          for (const name of SECOND_FIELDS) form[name] = singleField(body, name);
          if (form.code.length > 64 || form.method.length > 32)
            throw AuthorizeErrors.INVALID_FORM('method must be at most 32 and code at most 64 characters');
          const sent = browserCookie.sent(request);
          const challengeId = optionalField(body, 'challenge_id');
          checkLengths({ challenge_id: challengeId }, { challenge_id: 64 });
          const answer = await deps.login.secondFactor(
            { csrfToken: form.csrf_token, method: form.method, code: form.code, challengeId },
            sent ? await digest(sent) : undefined,
            deps.readContext(request),
          );
          return render(answer);
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: secondFactorDoc },
    )
    .post(
      SECOND_STEP_EMAIL_PATH,
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const sent = browserCookie.sent(request);
          const answer = await deps.login.secondFactorEmail(
            { csrfToken: singleField(body, 'csrf_token') },
            sent ? await digest(sent) : undefined,
            deps.readContext(request),
          );
          return render(answer);
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: secondFactorEmailDoc },
    )
    .post(
      EMAIL_CODE_PATH,
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = { csrfToken: singleField(body, 'csrf_token'), handle: singleField(body, 'handle') };
          checkLengths(form, { handle: 320 });
          const sent = browserCookie.sent(request);
          return render(
            await deps.login.emailCode.start(
              form,
              sent ? await digest(sent) : undefined,
              deps.readContext(request),
            ),
          );
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: emailCodeDoc },
    )
    .post(
      EMAIL_CODE_VERIFY_PATH,
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = {
            csrfToken: singleField(body, 'csrf_token'),
            challengeId: singleField(body, 'challenge_id'),
            code: singleField(body, 'code'),
            handle: optionalField(body, 'handle') ?? '',
          };
          checkLengths(
            { challenge_id: form.challengeId, code: form.code, handle: form.handle },
            { challenge_id: 64, code: 64, handle: 320 },
          );
          const sent = browserCookie.sent(request);
          return render(
            await deps.login.emailCode.verify(
              form,
              sent ? await digest(sent) : undefined,
              deps.readContext(request),
            ),
          );
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: emailCodeVerifyDoc },
    )
    .post(
      '/oauth2/authorize/consent',
      async ({ request }) => {
        try {
          const body = await formOf(request);
          const form = { csrf_token: '', decision: '' };
          for (const name of CONSENT_FIELDS) form[name] = singleField(body, name);
          if (form.decision !== 'allow' && form.decision !== 'deny')
            throw AuthorizeErrors.INVALID_FORM('decision must be allow or deny');
          const answer = await deps.login.consentAnswer(
            { csrfToken: form.csrf_token, decision: form.decision },
            (orgId) => deps.sessionCookies.sent(request, orgId),
            deps.readContext(request),
          );
          return render(answer);
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: consentDoc },
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
          const sent = browserCookie.sent(request);
          return render(
            await deps.login.choose({ csrfToken: form.csrf_token, credential: form.credential }, sent),
          );
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { parse: 'none', detail: ssoDoc },
    )
    .get(
      `${HOSTED_LOGIN_CALLBACK_PATH}/:callback_id`,
      async ({ request, params }) => {
        try {
          const sent = browserCookie.sent(request);
          const query = new URL(request.url).searchParams;
          return render(
            await deps.login.callback(query, params.callback_id, sent, deps.readContext(request)),
          );
        } catch (error) {
          return errorAnswer(error);
        }
      },
      { params: CallbackIdParams, detail: ssoCallbackDoc },
    )
    .post(
      `${HOSTED_LOGIN_CALLBACK_PATH}/:callback_id`,
      async ({ request, params }) => {
        const read = await formPostParams(request);
        if (!read.ok) return errorAnswer(AuthorizeErrors.INVALID_FORM(read.problem));
        const own = credentialRedirectUri(deps.baseUrl, HOSTED_LOGIN_CALLBACK_PATH, params.callback_id);
        return formPostRedirect(own, read.params);
      },
      { parse: 'none', params: CallbackIdParams, detail: ssoCallbackPostedDoc },
    )
    .get(HOSTED_LOGIN_CALLBACK_PATH, () => errorAnswer(retired()), { detail: { hide: true } })
    .post(HOSTED_LOGIN_CALLBACK_PATH, () => errorAnswer(retired()), {
      parse: 'none',
      detail: { hide: true },
    })
    .options('/oauth2/userinfo', () => new Response(null, { status: 204, headers: USERINFO_PREFLIGHT }), {
      detail: userInfoPreflightDoc,
    })
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

/**
 * CORS for userinfo, so a browser app (a public client) can read it with its access token: any origin,
 * since the request carries the token, never a cookie. Its refusals too, with their WWW-Authenticate.
 */
const USERINFO_CORS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'www-authenticate, dpop-nonce',
};
const USERINFO_PREFLIGHT = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'GET, POST',
  'access-control-allow-headers': 'authorization, content-type, dpop',
  'access-control-max-age': '600',
};

async function userInfoResponse(deps: AuthorizeRouteDeps, request: Request) {
  const cors = request.headers.has('origin') ? USERINFO_CORS : {};
  try {
    const authorization =
      request.method === 'POST' ? await postedAuthorization(request) : request.headers.get('authorization');
    const info = await deps.userInfo(request, authorization);
    return new Response(JSON.stringify(info), {
      headers: {
        'content-type': 'application/json',
        'cache-control': 'no-store',
        pragma: 'no-cache',
        ...cors,
      },
    });
  } catch (error) {
    if (!(error instanceof ServiceError) || !request.headers.has('origin')) throw error;
    throw new ServiceError(error.status, error.code, error.message, {
      cause: error,
      headers: { ...error.headers, ...cors },
    });
  }
}
