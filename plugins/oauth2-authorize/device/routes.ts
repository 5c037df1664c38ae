import { Elysia } from 'elysia';
import { DEVICE_CODE_GRANT, type OAuth2Server } from '../../../core/capabilities/oauth2-server.ts';
import { ServiceError } from '../../../core/errors.ts';
import { browserBinding } from '../../../core/http/browser-binding.ts';
import { addressBucket } from '../../../core/http/client.ts';
import { pageHeaders } from '../../../core/http/hosted-page.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { TokenBuckets } from '../../../core/rate-limit/index.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { LoginAnswer } from '../login/answer.ts';
import type { Login } from '../login/login.ts';
import { DEVICE_CALLBACK_PATH } from '../login/require-client.ts';
import type { SessionCookies } from '../sessions/cookie.ts';
import type { SessionStore } from '../sessions/store.ts';
import type { CodeStore } from '../store/codes.ts';
import { digest } from '../store/digest.ts';
import { DEVICE_PAGE_PATH } from './authorization.ts';
import { deviceApproveDoc, deviceCallbackDoc, devicePageDoc, deviceSubmitDoc } from './docs.ts';
import { approvalPage, decidedPage, deviceErrorPage, userCodePage } from './pages.ts';
import type { DeviceRequest, DeviceStore } from './store.ts';
import { normalizeUserCode } from './user-code.ts';

export interface DeviceRouteDeps {
  server: OAuth2Server;
  login: Login;
  devices: DeviceStore;
  codes: CodeStore;
  sessions: SessionStore;
  sessionCookies: SessionCookies;
  readContext: (request: Request) => RequestContext;
  /** User codes entered, per client address. */
  perAddress: TokenBuckets;
  baseUrl: string;
  /** The CSP source of the pages' inline stylesheet. */
  style: string;
  /** Seconds the browser cookie lives: the login's lifetime. */
  cookieMaxAge: number;
}

const FORM = 'application/x-www-form-urlencoded';

/**
 * The person's side of the device grant (RFC 8628 §3.3): GET /oauth2/device (the code, prefilled from
 * verification_uri_complete), POST /oauth2/device (the code entered, limited per address), then the
 * hosted login: the page opens a sign-in of the device's client as an authorization request would,
 * answering DEVICE_CALLBACK_PATH on this service instead of a redirect URI of the client (a live
 * session of the client's organization answers it at once; else the person signs in with any factor
 * the organization allows). The callback redeems that sign-in's code, here, and shows the approval
 * form; POST /oauth2/device/approve records the decision. Each step must come from the browser that
 * entered the code (the login's browser cookie), and the approval with the session that signed in.
 */
export function deviceRoutes(deps: DeviceRouteDeps) {
  // The hosted login's own browser cookie: its form checks the same binding.
  const browserCookie = browserBinding({
    baseUrl: deps.baseUrl,
    name: 'oauth2_browser',
    maxAgeSeconds: deps.cookieMaxAge,
  });
  const baseOrigin = new URL(deps.baseUrl).origin;
  const pageUrl = `${deps.baseUrl}${DEVICE_PAGE_PATH}`;
  const approveUrl = `${deps.baseUrl}${DEVICE_PAGE_PATH}/approve`;

  const headersOf = (...records: (Record<string, string> | undefined)[]) => {
    const headers = new Headers();
    for (const record of records)
      for (const [name, value] of Object.entries(record ?? {}))
        if (name.toLowerCase() === 'set-cookie') headers.append(name, value);
        else headers.set(name, value);
    return headers;
  };
  const page = (status: number, html: string, extra: Record<string, string> = {}) =>
    new Response(html, { status, headers: headersOf(pageHeaders(deps.style), extra) });
  const render = (answer: LoginAnswer, extra: Record<string, string>) =>
    answer.kind === 'redirect'
      ? new Response(null, {
          status: 303,
          headers: headersOf(
            { location: answer.location, 'cache-control': 'no-store' },
            answer.headers,
            extra,
          ),
        })
      : new Response(answer.html, {
          status: answer.status,
          headers: headersOf(
            pageHeaders(deps.style, answer.formTargets, answer.sources),
            answer.headers,
            extra,
          ),
        });
  const failed = (error: unknown) => {
    if (!(error instanceof ServiceError)) throw error;
    return page(error.status, deviceErrorPage(error.message), error.headers ?? {});
  };

  /** The form's fields, each once; from this origin when the browser says. */
  const formOf = async (request: Request, fields: readonly string[]) => {
    const origin = request.headers.get('origin');
    if (origin !== null && origin !== baseOrigin)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(`the form was posted from another origin (${origin})`);
    const type = request.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== FORM) throw AuthorizeErrors.INVALID_FORM(`the form must be sent as ${FORM}`);
    const body = new URLSearchParams(await request.text());
    const form = new Map<string, string>();
    for (const name of fields) {
      const all = body.getAll(name);
      if (all.length !== 1 || !all[0] || all[0].length > 256)
        throw AuthorizeErrors.INVALID_FORM(`${name} must be given once, not empty, at most 256 characters`);
      form.set(name, all[0]);
    }
    return (name: string) => form.get(name) ?? '';
  };

  /** The request comes from the browser that entered the code. */
  const requireBrowser = async (request: Request, device: DeviceRequest) => {
    const sent = browserCookie.sent(request);
    if (!device.browserHash || !sent || (await digest(sent)) !== device.browserHash)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(
        'this step was not sent by the browser that entered the code (its cookie is missing or another)',
      );
  };

  /** The device's client as it is now: there, of its organization, with the device grant. */
  const clientOf = async (device: DeviceRequest) => {
    const client = await deps.server.client(device.clientId);
    if (!client || client.orgId !== device.orgId || !client.grantTypes.includes(DEVICE_CODE_GRANT))
      throw AuthorizeErrors.INVALID_CLIENT(
        'the application of this code was removed or may no longer use devices',
      );
    return client;
  };

  /** POST /oauth2/device: the code entered, then the sign-in of its client. */
  const enter = async (request: Request) => {
    const rc = deps.readContext(request);
    const take = await deps.perAddress.take(addressBucket(rc.clientIp ?? 'unknown'));
    if (!take.ok)
      throw AuthorizeErrors.TOO_MANY_REQUESTS.with({
        headers: { 'retry-after': String(take.retryAfterSeconds) },
      })(`too many codes entered from this address; retry after ${take.retryAfterSeconds} s`);
    const field = await formOf(request, ['user_code']);
    const typed = field('user_code');
    const userCode = normalizeUserCode(typed);
    const device = userCode ? await deps.devices.pendingByUserCode(userCode) : undefined;
    if (!device)
      return page(
        400,
        userCodePage({
          action: pageUrl,
          userCode: typed,
          error:
            'This code is not valid: it may have expired or been used. Check the code your device shows.',
        }),
      );
    const client = await clientOf(device);
    const browser = browserCookie.take(request);
    const state = randomSecret('');
    await deps.devices.startLogin(device.deviceCodeHash, await digest(browser.value), state);
    const answer = await deps.login.open(
      {
        client,
        redirectUri: `${deps.baseUrl}${DEVICE_CALLBACK_PATH}`,
        scope: device.scope,
        state,
        nonce: undefined,
        codeChallenge: undefined,
        resource: undefined,
        loginHint: undefined,
        idp: undefined,
        dpopJkt: undefined,
        prompt: new Set(),
        maxAge: undefined,
        idTokenHint: undefined,
        acrValues: undefined,
        claims: undefined,
        responseMode: 'query',
      },
      browser.value,
      deps.sessionCookies.sent(request, client.orgId),
      rc,
    );
    return render(answer, { 'set-cookie': browser.setCookie });
  };

  /** GET /oauth2/device/callback: the hosted login's answer; its code redeemed here, then the approval form. */
  const callback = async (request: Request) => {
    const query = new URL(request.url).searchParams;
    const state = query.get('state');
    const device = state ? await deps.devices.byLoginState(state) : undefined;
    if (device?.status !== 'pending')
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in is not one under way for a device code here');
    await requireBrowser(request, device);
    const code = query.get('code');
    if (!code) {
      const why = query.get('error_description') ?? query.get('error') ?? 'the sign-in did not finish';
      return page(400, userCodePage({ action: pageUrl, error: `The sign-in did not finish: ${why}` }));
    }
    const burnt = await deps.codes.burn(code);
    if (
      burnt.kind !== 'fresh' ||
      burnt.code.clientId !== device.clientId ||
      burnt.code.orgId !== device.orgId
    )
      throw AuthorizeErrors.LOGIN_NOT_FOUND('the sign-in was not for this device code, or was used already');
    const client = await clientOf(device);
    const secret = deps.sessionCookies.sent(request, device.orgId);
    const session = secret ? await deps.sessions.find(device.orgId, secret) : undefined;
    if (!session || session.personId !== burnt.code.personId)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(
        'the sign-in session of this browser ended: enter the code again',
      );
    const csrfToken = randomSecret('');
    const recorded = await deps.devices.signedIn(device.deviceCodeHash, {
      personId: burnt.code.personId,
      sessionId: session.sessionId,
      familyId: burnt.code.familyId,
      authTime: burnt.code.authTime,
      idToken: burnt.code.idToken,
      csrfToken,
    });
    if (!recorded) throw AuthorizeErrors.LOGIN_NOT_FOUND('this device code was decided already');
    return page(
      200,
      approvalPage({ action: approveUrl, clientName: client.name, scope: device.scope, csrfToken }),
    );
  };

  /** POST /oauth2/device/approve: the person's decision, from the browser and session that signed in. */
  const approve = async (request: Request) => {
    const field = await formOf(request, ['csrf_token', 'decision']);
    const decision = field('decision');
    if (decision !== 'allow' && decision !== 'deny')
      throw AuthorizeErrors.INVALID_FORM('decision must be allow or deny');
    const device = await deps.devices.byCsrf(field('csrf_token'));
    if (device?.status !== 'pending')
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this approval form is not one under way (expired, or answered)');
    await requireBrowser(request, device);
    const secret = deps.sessionCookies.sent(request, device.orgId);
    const session = secret ? await deps.sessions.find(device.orgId, secret) : undefined;
    if (!session || session.sessionId !== device.sessionId || session.personId !== device.personId)
      throw AuthorizeErrors.LOGIN_FORBIDDEN(
        "the approval was not sent with the sign-in session of the organization's person who signed in: enter the code again",
      );
    await clientOf(device);
    const approved = decision === 'allow';
    if (!(await deps.devices.decide(device.deviceCodeHash, approved ? 'approved' : 'denied')))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this device code was decided already');
    return page(200, decidedPage(approved));
  };

  const guarded =
    (handler: (request: Request) => Promise<Response>) =>
    async ({ request }: { request: Request }) => {
      try {
        return await handler(request);
      } catch (error) {
        return failed(error);
      }
    };

  return new Elysia()
    .get(
      DEVICE_PAGE_PATH,
      ({ request }) => {
        const prefilled = new URL(request.url).searchParams.get('user_code') ?? undefined;
        return page(200, userCodePage({ action: pageUrl, userCode: prefilled?.slice(0, 64) }));
      },
      { detail: devicePageDoc },
    )
    .post(DEVICE_PAGE_PATH, guarded(enter), { parse: 'none', detail: deviceSubmitDoc })
    .get(DEVICE_CALLBACK_PATH, guarded(callback), { detail: deviceCallbackDoc })
    .post(`${DEVICE_PAGE_PATH}/approve`, guarded(approve), { parse: 'none', detail: deviceApproveDoc });
}
