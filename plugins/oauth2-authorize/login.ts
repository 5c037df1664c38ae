import type { OAuth2Server, OAuthClient } from '../../core/capabilities/oauth2-server.ts';
import type { PasswordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import type {
  HandleType,
  PersonDirectory,
  PersonHandle,
  PersonRecord,
} from '../../core/capabilities/person-directory.ts';
import type { SsoAuthenticator, SsoChoice } from '../../core/capabilities/sso-authenticator.ts';
import type { TokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../core/errors.ts';
import { PersonHandleType } from '../../core/events/shared-types.ts';
import type { EventPublisher } from '../../core/events/types.ts';
import type { PageSources } from '../../core/http/hosted-page.ts';
import { analyticsMetadata, type RequestContext } from '../../core/http/sign-in-context.ts';
import { randomSecret } from '../../core/ids.ts';
import type { Clock } from '../../core/ports/clock.ts';
import type { TokenAuthentication } from '../../core/tokens/before-token-issued.ts';
import { type AuthorizeRequest, type RedirectedError, redirectTo } from './authorize-request.ts';
import { AuthorizeErrors } from './errors.ts';
import { handleTypesOf, headOf, lookOf } from './look.ts';
import { type LoginPageInput, loginPage } from './page.ts';
import { createSsoLogin } from './sso-login.ts';
import type { CodeStore } from './store/codes.ts';
import { type LoginStore, openLoginOf, type PendingLogin } from './store/logins.ts';

/** A page to answer: the form (again, with why). */
export interface LoginPage {
  kind: 'page';
  status: number;
  html: string;
  /** Origins the form's answer may redirect to (the CSP's form-action). */
  formTargets: string[];
  /** The page's own stylesheet and image origins, for the CSP (the client's hosted-UI configuration). */
  sources?: PageSources;
  headers?: Record<string, string>;
}

/** What the login answers: a page or a redirect to the client. */
export type LoginAnswer = LoginPage | { kind: 'redirect'; location: string };

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
  sso: () => SsoAuthenticator | undefined;
}

/** Who signed in, by which factor, for the ID token, the events and the code. */
export interface SignedIn {
  personId: string;
  method: 'password' | 'oidc';
  authentication: TokenAuthentication;
  /** The SSO provider's id, named in the ID token's `idp` claim. */
  idp?: string;
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

/** The handle as events carry it: its PersonHandleType number. */
const eventHandle = (h: { type: string; value: string }) => ({
  type:
    h.type === 'email_address'
      ? PersonHandleType.EmailAddress
      : h.type === 'phone_number'
        ? PersonHandleType.PhoneNumber
        : PersonHandleType.Username,
  value: h.value,
});

/** What the page says for a handle and password that do not sign anyone in. */
const WRONG_HANDLE_OR_PASSWORD = 'The handle and password do not match.';

/** The origin a redirect URI sends the browser to, for the page's form-action. */
const originOf = (uri: string) => new URL(uri).origin;

/**
 * The hosted login: opens a login for a validated authorization request (the form), and finishes it on
 * submission: the password check, the ID token (the token_minted hook runs as the token issuer mints
 * it), AuthenticationSucceeded_v1, a code, and the redirect back to the client.
 */
export function createLogin(deps: LoginDeps) {
  const { logins, codes, clock } = deps;
  const action = `${deps.baseUrl}/oauth2/authorize/login`;
  const ssoAction = `${deps.baseUrl}/oauth2/authorize/sso`;

  /** The SSO credentials the organization offers here (none without an SSO plugin). */
  const choicesOf = async (orgId: string): Promise<SsoChoice[]> => (await deps.sso()?.choices(orgId)) ?? [];

  /**
   * The form, with one button per SSO credential offered. The CSP's form-action lists the client's
   * origin (the password form's answer) and the providers' (an SSO button's answer redirects there).
   */
  const page = async (
    status: number,
    login: Pick<PendingLogin, 'orgId' | 'redirectUri'>,
    input: Omit<LoginPageInput, 'action' | 'ssoAction' | 'choices'>,
    offered?: SsoChoice[],
  ): Promise<LoginPage> => {
    const choices = offered ?? (await choicesOf(login.orgId));
    const look = lookOf(input.ui, input.clientName);
    const { head, sources } = await headOf(look);
    return {
      kind: 'page',
      status,
      html: loginPage({ ...input, action, ssoAction, choices }, look, head),
      sources,
      formTargets: [
        originOf(login.redirectUri),
        ...new Set(choices.flatMap((c) => (c.origin ? [c.origin] : []))),
      ],
    };
  };

  /** The redirect that answers the client: the code, or an error (RFC 6749 §4.1.2, RFC 9207 iss). */
  const answer = (redirectUri: string, params: Record<string, string | undefined>): LoginAnswer => ({
    kind: 'redirect',
    location: redirectTo(redirectUri, { ...params, iss: deps.baseUrl }),
  });

  /**
   * Mints the login's ID token: every hosted login mints it now, so the token_minted hook decides on
   * every login whatever the scope (the client receives the token only with openid). A refusal is
   * reported as AuthenticationFailed_v1; an error other than the hook's block is thrown.
   */
  async function mint(
    login: PendingLogin,
    client: OAuthClient,
    who: SignedIn,
    rc: RequestContext,
  ): Promise<
    { ok: true; idToken: string; authTime: number; person?: PersonRecord } | { ok: false; message: string }
  > {
    const authTime = Math.floor(clock.now() / 1000);
    // Read while the token is issued: the events need the person's region.
    const personRead = deps.directory.get(login.orgId, who.personId);
    try {
      const issued = await deps.issuer.issue({
        orgId: login.orgId,
        personId: who.personId,
        methods: [who.method],
        issuer: 'oauth2',
        authentications: [who.authentication],
        request: rc.analytics,
        ...(who.idp ? { customClaims: { idp: who.idp } } : {}),
        idToken: { clientId: client.clientId, authTime, ...(login.nonce ? { nonce: login.nonce } : {}) },
        // Without openid the client gets no ID token: the hook decides, and no TokenMinted_v1 says otherwise.
        ...(login.scope.includes('openid') ? {} : { hookOnly: true }),
      });
      const person = await personRead;
      return { ok: true, idToken: issued.token, authTime, ...(person ? { person } : {}) };
    } catch (error) {
      const blocked = error instanceof ServiceError && error.status === 403;
      const person = await personRead;
      const message = error instanceof Error ? error.message : 'the token could not be issued';
      // Source Cloud: no browser_metadata, which the spec gives this event only "when from the SDK".
      await deps.events.publish(login.orgId, 'AuthenticationFailed_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        ...(person ? { person_id: person.personId, region: person.region } : {}),
        // Authenticated already: the token was refused after the method succeeded.
        authenticated_methods: [who.method],
        failed_authn_method: who.method,
        failure_reason: blocked ? 'token_blocked' : 'token_not_issued',
        failure_detail: message,
        ...(who.method === 'password' ? { handle: eventHandle(who.authentication.handle) } : {}),
      });
      if (!blocked) throw error;
      return { ok: false, message };
    }
  }

  /** Publishes AuthenticationSucceeded_v1, issues the code and answers the redirect to the client. */
  async function grant(
    login: PendingLogin,
    client: OAuthClient,
    who: SignedIn,
    minted: { idToken: string; authTime: number; person?: PersonRecord },
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const { person } = minted;
    const code = randomSecret('');
    await Promise.all([
      person &&
        deps.events.publish(login.orgId, 'AuthenticationSucceeded_v1', {
          analytics_metadata: analyticsMetadata(rc.analytics),
          browser_metadata: rc.browser,
          person_id: person.personId,
          region: person.region,
          success_authn_method: who.method,
          authenticated_methods: [who.method],
          // A handle names what the person typed; an SSO sign-in typed none.
          ...(who.method === 'password' ? { handle: eventHandle(who.authentication.handle) } : {}),
        }),
      codes.issue(code, {
        orgId: login.orgId,
        clientId: client.clientId,
        redirectUri: login.redirectUri,
        scope: login.scope,
        codeChallenge: login.codeChallenge,
        personId: who.personId,
        methods: [who.method],
        authTime: minted.authTime,
        idToken: minted.idToken,
      }),
    ]);
    return answer(login.redirectUri, { code, state: login.state });
  }

  const sso = createSsoLogin({
    server: deps.server,
    logins,
    authenticator: deps.sso,
    callbackUrl: `${deps.baseUrl}/oauth2/authorize/sso/callback`,
    page,
    answer,
    mint,
    grant,
  });

  return {
    /** The client's redirect for a refused authorization request. */
    refusal: (r: RedirectedError): string =>
      redirectTo(r.redirectUri, {
        error: r.error,
        error_description: r.description,
        state: r.state,
        iss: deps.baseUrl,
      }),

    /** Opens a login for the request, bound to the browser, and answers the form. */
    async open(request: AuthorizeRequest, browser: string): Promise<LoginAnswer> {
      const loginId = randomSecret('');
      const login: PendingLogin = {
        orgId: request.client.orgId,
        clientId: request.client.clientId,
        redirectUri: request.redirectUri,
        scope: request.scope,
        state: request.state,
        nonce: request.nonce,
        codeChallenge: request.codeChallenge,
      };
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
        const started = chosen ? await sso.begin(login.orgId, loginId, chosen.clientId) : undefined;
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
      const login = openLoginOf(await logins.find(form.csrfToken), browserHash, {
        unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
        otherBrowser:
          'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
      });
      const client = await deps.server.client(login.clientId);
      if (!client || client.orgId !== login.orgId)
        return answer(login.redirectUri, {
          error: 'unauthorized_client',
          error_description: 'the client was removed during the sign-in',
          state: login.state,
        });

      const handle = handleOf(form.handle);
      const retry = {
        clientName: client.name,
        ui: client.ui,
        csrfToken: form.csrfToken,
        handle: form.handle,
      };
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
      const minted = await mint(login, client, who, rc);
      if (!minted.ok)
        return answer(login.redirectUri, {
          error: 'access_denied',
          error_description: 'the sign-in was refused by the organization (token_minted hook)',
          state: login.state,
        });
      return grant(login, client, who, minted, rc);
    },

    ...sso,
  };
}

export type Login = ReturnType<typeof createLogin>;
