import type { HostedLoginPasskeys } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { HostedLogin, HostedLoginSso } from '../../../core/capabilities/hosted-login-sso.ts';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { PasswordAuthenticator } from '../../../core/capabilities/password-authenticator.ts';
import type {
  HandleType,
  PersonDirectory,
  PersonHandle,
} from '../../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { AuthorizeRequest, RedirectedError } from '../authorize/request.ts';
import type { OAuth2ConsentStore } from '../consent/store.ts';
import { AuthorizeErrors } from '../errors.ts';
import type { SessionCookies } from '../sessions/cookie.ts';
import type { EndedSession, SessionStore } from '../sessions/store.ts';
import type { CodeStore } from '../store/codes.ts';
import { digest } from '../store/digest.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from '../store/logins.ts';
import { createLoginAnswers, type LoginAnswer } from './answer.ts';
import { createConsentAnswer } from './consent-answer.ts';
import { createEmailCodeLogin } from './email-code-login.ts';
import { sendSecondStepEmail } from './email-code-second-step.ts';
import { createEmailLinkLogin } from './email-link-login.ts';
import { essentialAcrUnmet } from './essential-acr.ts';
import { factorOffers } from './factor-offers.ts';
import { createLoginFinish, type SignedIn } from './finish.ts';
import { handleTypesOf } from './page-look.ts';
import { createPasskeyOffer } from './passkey-offer.ts';
import { createPasskeySignIn } from './passkey-sign-in.ts';
import { OTHER_SUBJECT, subjectAllowed } from './requested-subject.ts';
import { requireLoginClient } from './require-client.ts';
import { createSecondStep, type SecondStepDeps } from './second-step.ts';
import { type ConsentStep, createSessionSignIn } from './session-sign-in.ts';

export interface LoginDeps {
  server: OAuth2Server;
  authenticator: PasswordAuthenticator;
  issuer: TokenIssuer;
  directory: PersonDirectory;
  logins: LoginStore;
  codes: CodeStore;
  events: EventPublisher;
  clock: Clock;
  /** PUBLIC_BASE_URL: the form's action and the `iss` of authorization responses. */
  baseUrl: string;
  /** SSO sign-in, when a plugin provides it (read at each request: capabilities are set up in any order). */
  sso: () => HostedLoginSso | undefined;
  sessions: SessionStore;
  cookies: SessionCookies;
  /** What follows an ended session: PersonLoggedOut_v1 and the clients' logout tokens. */
  ended: (sessions: EndedSession[], rc: RequestContext | undefined) => Promise<void>;
  consent: ConsentStep;
  consents: OAuth2ConsentStore;
  /** The second step of a sign-in (the organization's policy, the second factors' checks). */
  secondStep: Omit<
    SecondStepDeps,
    | 'server'
    | 'logins'
    | 'directory'
    | 'events'
    | 'clock'
    | 'baseUrl'
    | 'answer'
    | 'passkeys'
    | 'passkeyScript'
  >;
  /** The CSP source of the form_post page's script. */
  formPostScript: string;
  /** Passkeys, when a plugin provides them (read at each request). */
  passkeys: () => HostedLoginPasskeys | undefined;
  /** The CSP source of the passkey pages' script. */
  passkeyScript: string;
}

/**
 * The kind of handle typed into the one field: with an `@` an email address, starting with `+` a phone
 * number (E.164, as handles are stored), else a username (which may be all digits).
 */
export function handleOf(typed: string): PersonHandle {
  const value = typed.trim();
  const type: HandleType = value.includes('@')
    ? 'email_address'
    : /^\+[0-9 ().-]{7,}$/.test(value)
      ? 'phone_number'
      : 'username';
  return { type, value };
}

/**
 * Why a live session may not answer the request without a sign-in (prompt=login or select_account,
 * max_age passed); undefined when it may.
 */
function signInNeededBy(
  request: AuthorizeRequest,
  session: { authTime: number },
  nowSeconds: number,
): string | undefined {
  if (request.prompt.has('login')) return 'prompt=login asks for a new sign-in';
  if (request.prompt.has('select_account')) return 'prompt=select_account asks for the account to be chosen';
  // max_age=0 asks for a sign-in now, as prompt=login does (the OpenID Connect working group's reading
  // of Core §3.1.2.1): a session signed in within this second is not newer than 0 s by the clock.
  if (request.maxAge === 0) return 'max_age=0 asks for a new sign-in';
  if (request.maxAge !== undefined && nowSeconds - session.authTime > request.maxAge)
    return `the sign-in is older than max_age (${request.maxAge} s)`;
  return undefined;
}

/** What the page says for a handle and password that do not sign anyone in. */
const WRONG_HANDLE_OR_PASSWORD = 'The handle and password do not match.';

/**
 * The hosted login: opens a login for a validated authorization request (the form), and finishes it on
 * submission: the password check, the ID token (the token_minted hook runs as the token issuer mints
 * it), AuthenticationSucceeded_v1, a code, and the redirect back to the client.
 */
export function createLogin(deps: LoginDeps) {
  const { logins } = deps;
  const signInNeeded = async (request: AuthorizeRequest, session: { authTime: number }) =>
    signInNeededBy(request, session, Math.floor(deps.clock.now() / 1000));
  const offers = factorOffers(deps.secondStep);
  const answers = createLoginAnswers({ ...deps, ...offers });
  const { choicesOf, page, answer } = answers;
  const finish = createLoginFinish({
    issuer: deps.issuer,
    directory: deps.directory,
    codes: deps.codes,
    events: deps.events,
    clock: deps.clock,
    answer,
  });
  const secondStep = createSecondStep({
    ...deps.secondStep,
    server: deps.server,
    logins,
    directory: deps.directory,
    events: deps.events,
    clock: deps.clock,
    baseUrl: deps.baseUrl,
    answer,
    passkeys: deps.passkeys,
    passkeyScript: deps.passkeyScript,
  });
  const offer = createPasskeyOffer({
    server: deps.server,
    logins,
    passkeys: deps.passkeys,
    answer,
    baseUrl: deps.baseUrl,
    passkeyScript: deps.passkeyScript,
  });
  const sessionSignIn = createSessionSignIn({
    offer,
    secondStep,
    sessions: deps.sessions,
    cookies: deps.cookies,
    directory: deps.directory,
    clock: deps.clock,
    finish,
    answer,
    ended: deps.ended,
    consent: deps.consent,
  });

  /** What the SSO buttons (the hostedLoginSso capability) borrow from the login. */
  const parts: HostedLogin<PendingLogin, OAuthClient, LoginAnswer> = {
    digest,
    open: async (loginHash, browserHash, why) =>
      requireOpenLogin(await logins.findHashed(loginHash), browserHash, why),
    organization: (login) => login.orgId,
    async client(login) {
      const client = await requireLoginClient(deps.server, login, answer);
      return 'clientId' in client ? { ok: true, client } : { ok: false, answer: client };
    },
    request: (loginHash) => logins.requestOfHashed(loginHash),
    finish: (loginHash) => logins.finishHashed(loginHash),
    retry: (login, client, csrfToken, error) =>
      page(400, login, { clientName: client.name, ui: client.ui, csrfToken, error }),
    async reopen(login, client, browser, error) {
      const loginId = randomSecret('');
      await logins.open(loginId, browser, login);
      return page(400, login, { clientName: client.name, ui: client.ui, csrfToken: loginId, error });
    },
    // A provider's answer signs in only while the organization's policy allows oidc.
    signIn: async (login, client, who, rc) =>
      (await offers.allows(login.orgId, 'oidc'))
        ? sessionSignIn.signedIn(login, client, who, rc)
        : { ok: false, message: 'single sign-on is not offered by this organization' },
    refuse: (login, error, description) =>
      answer(login, { error, error_description: description, state: login.state }),
    redirect: (location) => ({ kind: 'redirect', location }),
    notFound: (message) => AuthorizeErrors.LOGIN_NOT_FOUND(message),
    forbidden: (message) => AuthorizeErrors.LOGIN_FORBIDDEN(message),
  };

  const emailCodeLogin = createEmailCodeLogin({
    server: deps.server,
    logins,
    baseUrl: deps.baseUrl,
    emailCodes: deps.secondStep.emailCodes,
    allows: offers.allows,
    answers,
    sessionSignIn,
  });

  const emailLinkLogin = createEmailLinkLogin({
    server: deps.server,
    logins,
    baseUrl: deps.baseUrl,
    emailCodes: deps.secondStep.emailCodes,
    allows: offers.allows,
    answers,
    sessionSignIn,
  });

  const consentAnswer = createConsentAnswer({
    server: deps.server,
    logins,
    consents: deps.consents,
    sessionSignIn,
    answer,
  });

  return {
    consentAnswer,
    /** POST /oauth2/authorize/email-code and /email-code/verify: the first factor by email. */
    emailCode: emailCodeLogin,
    /** POST /oauth2/authorize/email-link (and /continue), the link's page: the first factor by a link. */
    emailLink: emailLinkLogin,

    /** POST /oauth2/authorize/second-factor/email: the second step's code by email. */
    secondFactorEmail: (form: { csrfToken: string }, browserHash: string | undefined, rc: RequestContext) =>
      sendSecondStepEmail({ secondStep, emailCodes: deps.secondStep.emailCodes }, form, browserHash, rc),

    /** POST /oauth2/authorize/passkey/offer: "Add a passkey?" answered. */
    passkeyOffer: (
      form: Parameters<typeof offer.answer>[0],
      sessionSecretOf: (orgId: string) => string | undefined,
      rc: RequestContext,
    ) => offer.answer(form, sessionSecretOf, rc, sessionSignIn),

    /** POST /oauth2/authorize/passkey: the page's passkey answered. */
    passkeySignIn: createPasskeySignIn({
      server: deps.server,
      logins,
      passkeys: deps.passkeys,
      answers,
      sessionSignIn,
    }),

    /** POST /oauth2/authorize/second-factor: the second step's answer. */
    secondFactor: (
      form: {
        csrfToken: string;
        method: string;
        code: string;
        challengeId?: string | undefined;
        input?: Readonly<Record<string, unknown>>;
      },
      browserHash: string | undefined,
      rc: RequestContext,
    ) =>
      secondStep.answer(form, browserHash, rc, (login, client, who, context, factors) =>
        sessionSignIn.signedIn(login, client, who, context, factors),
      ),

    /** The client's answer for a refused authorization request. */
    refusal: (r: RedirectedError): LoginAnswer =>
      answer(r, { error: r.error, error_description: r.description, state: r.state }),

    /**
     * Answers a validated authorization request: a code without a page when the browser's session of
     * the organization (`sessionSecret`, its cookie) may answer it, the error prompt=none asks for when it
     * may not, else a login bound to the browser and its form.
     */
    async open(
      request: AuthorizeRequest,
      browser: string,
      sessionSecret: string | undefined,
      rc: RequestContext,
    ): Promise<LoginAnswer> {
      const loginId = randomSecret('');
      const login: PendingLogin = {
        orgId: request.client.orgId,
        clientId: request.client.clientId,
        redirectUri: request.redirectUri,
        scope: request.scope,
        state: request.state,
        nonce: request.nonce,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        responseMode: request.responseMode,
        issuer: request.client.issuer,
        claims: request.claims,
        acrValues: request.acrValues,
        prompt: [...request.prompt],
        sessionId: undefined,
        ...(request.dpopJkt !== undefined ? { dpopJkt: request.dpopJkt } : {}),
      };
      const session = await sessionSignIn.live(login.orgId, sessionSecret);
      const refuse = (error: string, description: string) =>
        answer(login, { error, error_description: description, state: login.state });
      // OIDC Core 3.1.2.1: id_token_hint names who the client believes is signed in; another person's
      // session is not the one to answer it (prompt=none: login_required).
      const hinted = request.idTokenHint ? await deps.issuer.verifyIdToken(request.idTokenHint) : undefined;
      if (request.idTokenHint && (!hinted || hinted.orgId !== login.orgId))
        return refuse(
          'invalid_request',
          'id_token_hint is not an ID token this service issued for this organization',
        );
      const why = !session
        ? 'no sign-in session in this browser'
        : hinted && hinted.personId !== session.personId
          ? 'the person signed in is not the one id_token_hint names'
          : !subjectAllowed(request.claims, session.personId)
            ? `the session is another person's: ${OTHER_SUBJECT}`
            : (essentialAcrUnmet(
                request.claims,
                session.factors.map((f) => f.method),
              ) ?? (await signInNeeded(request, session)));
      if (session && why === undefined && sessionSecret) {
        if (await deps.consent.needed(login, request.client, session.personId)) {
          if (request.prompt.has('none'))
            return refuse(
              'consent_required',
              `prompt=none: ${request.client.name} needs the person's consent`,
            );
          return deps.consent.ask(
            login,
            request.client,
            { sessionId: session.sessionId, secret: sessionSecret },
            {},
          );
        }
        return sessionSignIn.silent(login, request.client, session, rc);
      }
      if (request.prompt.has('none')) return refuse('login_required', `prompt=none: ${why}`);
      // A sign-in of the session's person renews it; another person's replaces it.
      login.sessionId = session?.sessionId;
      await logins.open(loginId, browser, login);
      const choices = await choicesOf(login.orgId);
      const form = {
        clientName: request.client.name,
        ui: request.client.ui,
        csrfToken: loginId,
        handle: request.loginHint,
      };
      if (request.idp !== undefined) {
        // Direct selection: straight to the provider, or the page saying why not (never a redirect).
        const chosen = choices.find((c) => c.clientId === request.idp);
        const sso = deps.sso();
        const started =
          chosen && sso ? await sso.begin(parts, login.orgId, loginId, chosen.clientId) : undefined;
        if (started?.ok) return { kind: 'redirect', location: started.url };
        return page(
          400,
          login,
          {
            ...form,
            error: started
              ? `Signing in with ${chosen?.name} is not possible right now: ${started.message}`
              : `The sign-in provider "${request.idp}" named by idp is not available for ${request.client.name}.`,
          },
          choices,
        );
      }
      return page(200, login, form, choices);
    },

    /**
     * Finishes a login from its form. `browserHash` is the digest of the browser cookie sent with it
     * (undefined without one); the caller has checked the Origin.
     */
    async submit(
      form: { csrfToken: string; handle: string; password: string },
      browserHash: string | undefined,
      rc: RequestContext,
    ): Promise<LoginAnswer> {
      const login = requireOpenLogin(await logins.find(form.csrfToken), browserHash, {
        unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
        otherBrowser:
          'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
      });
      const client = await requireLoginClient(deps.server, login, answer);
      if (!('clientId' in client)) return client;

      const handle = handleOf(form.handle);
      const retry = {
        clientName: client.name,
        ui: client.ui,
        csrfToken: form.csrfToken,
        handle: form.handle,
      };
      // The organization's policy may leave passwords out of its first factors: nothing is checked then.
      const completion = deps.secondStep.completion();
      if (completion && !(await completion.allows(login.orgId, 'password')))
        return page(403, login, { ...retry, error: 'Signing in with a password is not offered here.' });
      // A handle of a type this client's page does not take is refused as a wrong one, unchecked.
      if (!handleTypesOf(client.ui).includes(handle.type))
        return page(401, login, { ...retry, error: WRONG_HANDLE_OR_PASSWORD });
      const checked = await deps.authenticator.check(login.orgId, {
        handle,
        password: form.password,
        request: rc.analytics,
      });
      if (!checked.ok) {
        if (checked.reason === 'rate_limited') {
          const after = checked.retryAfter ?? 60;
          return {
            ...(await page(429, login, {
              ...retry,
              error: `Too many attempts. Try again in ${after} seconds.`,
            })),
            headers: { 'retry-after': String(after) },
          };
        }
        return page(401, login, { ...retry, error: WRONG_HANDLE_OR_PASSWORD });
      }
      // One submission finishes a login; a second (a double click) finds it used.
      if (!(await logins.finish(form.csrfToken)))
        throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');

      const who: SignedIn = {
        personId: checked.personId,
        method: 'password',
        authentication: checked.authentication,
      };
      const signed = await sessionSignIn.signedIn(login, client, who, rc);
      return signed.ok ? signed.answer : answer(login, sessionSignIn.refusedByHook(login));
    },

    /** POST /oauth2/authorize/sso: a button of the page; the caller has checked the Origin. */
    async choose(form: { csrfToken: string; credential: string }, browser: string | undefined) {
      const sso = deps.sso();
      // A policy without oidc offers no button: a hand-made one is refused as one without SSO is.
      const found = await logins.find(form.csrfToken);
      if (sso && (found.kind !== 'open' || (await offers.allows(found.login.orgId, 'oidc'))))
        return sso.choose(parts, form, browser);
      // Without SSO sign-in no button is offered: a hand-made one finds its login, and no provider.
      const login = await parts.open(await digest(form.csrfToken), browser && (await digest(browser)), {
        unknown: 'this sign-in was never started here',
        otherBrowser:
          'the sign-in was not continued by the browser that opened it (its cookie is missing or another)',
      });
      const client = await parts.client(login);
      if (!client.ok) return client.answer;
      return parts.retry(login, client.client, form.csrfToken, 'This sign-in provider is not offered here.');
    },

    /** GET /oauth2/authorize/sso/callback/{callback_id}: a provider's answer, for the SSO buttons. */
    async callback(
      params: URLSearchParams,
      callbackId: string,
      browser: string | undefined,
      rc: RequestContext,
    ) {
      const sso = deps.sso();
      if (!sso) throw AuthorizeErrors.LOGIN_NOT_FOUND('single sign-on is not offered here');
      return sso.callback(parts, params, callbackId, browser, rc);
    },
  };
}

export type Login = ReturnType<typeof createLogin>;
