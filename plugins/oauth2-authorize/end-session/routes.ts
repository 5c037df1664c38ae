import { Elysia } from 'elysia';
import type { OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import { formGuard, pageHeaders } from '../../../core/http/hosted-page.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Storage } from '../../../core/ports/storage.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { SessionCookies } from '../sessions/cookie.ts';
import type { SessionEnding } from '../sessions/end.ts';
import type { SessionStore } from '../sessions/store.ts';
import { getLogoutDoc, postLogoutDoc } from './docs.ts';
import { confirmPage, logoutErrorPage, signedOutPage } from './page.ts';
import { checkLogoutRequest, type LogoutRequest, logoutParams, redirectAfter } from './request.ts';

export const LOGOUT_PATH = '/oauth2/logout';

export interface EndSessionDeps {
  server: Pick<OAuth2Server, 'client'>;
  issuer: Pick<TokenIssuer, 'verifyIdToken'>;
  sessions: SessionStore;
  finish: SessionEnding;
  storage: Storage;
  cookies: SessionCookies;
  readContext: (request: Request) => RequestContext;
  baseUrl: string;
  /** The CSP source of the pages' inline stylesheet. */
  style: string;
}

const FORM = 'application/x-www-form-urlencoded';

/** An organization ID from a cookie name's key: its 32 hex digits, dashes put back. */
const orgIdOf = (key: string) =>
  /^[0-9a-f]{32}$/i.test(key)
    ? `${key.slice(0, 8)}-${key.slice(8, 12)}-${key.slice(12, 16)}-${key.slice(16, 20)}-${key.slice(20)}`
    : undefined;

/**
 * RP-Initiated Logout 1.0 at GET and POST /oauth2/logout, the discovery document's end_session_endpoint.
 * With a valid `id_token_hint` whose person is the one signed in to this browser, the browser's session
 * of the hint's organization ends at once; otherwise (no hint, or a hint for someone else: §2 says the
 * OP MUST then ask) a page asks the person, and its form (a POST back with a token paired with this
 * browser, SameSite=Strict, so another site's POST ends nothing) ends the browser's session of the
 * client's organization, or, without a client, every session this browser holds. Then the browser goes
 * to the registered `post_logout_redirect_uri` with `state` (303), or sees a "signed out" page.
 */
export function endSessionRoutes(deps: EndSessionDeps) {
  const { sessions, cookies } = deps;
  const guard = formGuard({
    baseUrl: deps.baseUrl,
    name: 'oauth2_logout',
    path: LOGOUT_PATH,
    maxAgeSeconds: 900,
  });
  const action = `${deps.baseUrl}${LOGOUT_PATH}`;

  const page = (status: number, html: string, formTargets: string[] = [], cookieHeaders: string[] = []) => {
    const headers = new Headers(pageHeaders(deps.style, formTargets));
    for (const c of cookieHeaders) headers.append('set-cookie', c);
    return new Response(html, { status, headers });
  };

  /** Ends what the browser holds of these organizations, each in its transaction, and clears their cookies. */
  async function endBrowserSessions(request: Request, orgIds: string[]): Promise<string[]> {
    const rc = deps.readContext(request);
    const cleared: string[] = [];
    for (const orgId of new Set(orgIds)) {
      const secret = cookies.sent(request, orgId);
      if (!secret) continue;
      cleared.push(cookies.clear(orgId));
      const session = await sessions.find(orgId, secret);
      if (!session) continue;
      await deps.storage.transaction(async (tx) => {
        const ended = await sessions.end(orgId, session.sessionId, tx);
        if (ended) await deps.finish([ended], { tx, request: rc });
      });
    }
    return cleared;
  }

  /** After the logout: back to the client, with state, or the page that says it is done. */
  function done(req: LogoutRequest, cleared: string[]): Response {
    const location = redirectAfter(req);
    if (!location) return page(200, signedOutPage(), [], cleared);
    const headers = new Headers({ location, 'cache-control': 'no-store', pragma: 'no-cache' });
    for (const c of cleared) headers.append('set-cookie', c);
    return new Response(null, { status: 303, headers });
  }

  /** The confirmation page: what the form carries back, and the redirect's origin allowed after it. */
  function confirm(req: LogoutRequest): Response {
    const { token, cookie } = guard.issue();
    const carried: Record<string, string> = {
      ...(req.client ? { client_id: req.client.clientId } : {}),
      ...(req.redirect ? { post_logout_redirect_uri: req.redirect } : {}),
      ...(req.state !== undefined ? { state: req.state } : {}),
    };
    // Browsers hold the redirect that follows a form's submission to the page's form-action.
    const targets = req.redirect ? [new URL(req.redirect).origin] : [];
    return page(
      200,
      confirmPage({ action, csrfToken: token, clientName: req.client?.name, carried }),
      targets,
      [cookie],
    );
  }

  /** A logout request from a client (GET, or POST without the confirmation's token). */
  async function requested(request: Request, params: URLSearchParams): Promise<Response> {
    const req = await checkLogoutRequest(logoutParams(params), deps);
    if (!req.hint || !req.orgId) return confirm(req);
    const secret = cookies.sent(request, req.orgId);
    const session = secret ? await sessions.find(req.orgId, secret) : undefined;
    // Signed out already: nothing to ask.
    if (!session) return done(req, secret ? [cookies.clear(req.orgId)] : []);
    // Someone else is signed in here than the hint's person: ask before ending their session.
    if (session.personId !== req.hint.personId) return confirm(req);
    return done(req, await endBrowserSessions(request, [req.orgId]));
  }

  /** The person confirmed on the page: the token must be the one this browser was given. */
  async function confirmed(request: Request, params: URLSearchParams): Promise<Response> {
    const p = logoutParams(params);
    if (p.id_token_hint !== undefined)
      throw AuthorizeErrors.INVALID_LOGOUT_REQUEST('id_token_hint is not taken with a confirmation');
    const refusal = guard.refusal(request, p.csrf_token ?? '');
    if (refusal) throw AuthorizeErrors.LOGOUT_FORBIDDEN(`nothing was signed out: ${refusal}`);
    const req = await checkLogoutRequest(p, deps);
    const orgIds = req.orgId
      ? [req.orgId]
      : cookies
          .all(request)
          .map((c) => orgIdOf(c.orgKey))
          .filter((o): o is string => o !== undefined);
    return done(req, await endBrowserSessions(request, orgIds));
  }

  const answer = async (run: () => Promise<Response>) => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      return page(error.status, logoutErrorPage(error.message));
    }
  };

  return new Elysia()
    .get(LOGOUT_PATH, ({ request }) => answer(() => requested(request, new URL(request.url).searchParams)), {
      detail: getLogoutDoc,
    })
    .post(
      LOGOUT_PATH,
      ({ request }) =>
        answer(async () => {
          const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
          if (type !== FORM)
            throw AuthorizeErrors.INVALID_LOGOUT_REQUEST(`a logout by POST must be sent as ${FORM}`);
          const body = await request.text().catch(() => {
            throw AuthorizeErrors.INVALID_LOGOUT_REQUEST('the body of the logout request could not be read');
          });
          const params = new URLSearchParams(body);
          return params.has('csrf_token') ? confirmed(request, params) : requested(request, params);
        }),
      { parse: 'none', detail: postLogoutDoc },
    );
}
