import type { OAuth2Server } from '../../core/capabilities/oauth2-server.ts';
import type { PasswordAuthenticator } from '../../core/capabilities/password-authenticator.ts';
import type { HandleType, PersonDirectory, PersonHandle } from '../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../core/errors.ts';
import { PersonHandleType } from '../../core/events/shared-types.ts';
import type { EventPublisher } from '../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../core/http/sign-in-context.ts';
import { randomSecret } from '../../core/ids.ts';
import type { Clock } from '../../core/ports/clock.ts';
import { type AuthorizeRequest, type RedirectedError, redirectTo } from './authorize-request.ts';
import { AuthorizeErrors } from './errors.ts';
import { type LoginPageInput, loginPage } from './page.ts';
import type { CodeStore } from './store/codes.ts';
import type { LoginStore, PendingLogin } from './store/logins.ts';

/** A page to answer: the form (again, with why). */
export interface LoginPage {
  kind: 'page';
  status: number;
  html: string;
  /** Origins the form's answer may redirect to (the CSP's form-action). */
  formTargets: string[];
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

  const page = (status: number, login: PendingLogin, input: Omit<LoginPageInput, 'action'>): LoginPage => ({
    kind: 'page',
    status,
    html: loginPage({ ...input, action }),
    formTargets: [originOf(login.redirectUri)],
  });

  /** The redirect that answers the client: the code, or an error (RFC 6749 §4.1.2, RFC 9207 iss). */
  const answer = (redirectUri: string, params: Record<string, string | undefined>): LoginAnswer => ({
    kind: 'redirect',
    location: redirectTo(redirectUri, { ...params, iss: deps.baseUrl }),
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
      return page(200, login, {
        clientName: request.client.name,
        csrfToken: loginId,
        handle: request.loginHint,
      });
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
      const found = await logins.find(form.csrfToken);
      if (found.kind !== 'open')
        throw AuthorizeErrors.LOGIN_NOT_FOUND(
          found.kind === 'expired'
            ? 'this sign-in took too long and has expired'
            : found.kind === 'used'
              ? 'this sign-in has already been completed'
              : 'this sign-in was never started here (csrf_token names no sign-in under way)',
        );
      if (browserHash === undefined || browserHash !== found.browserHash)
        throw AuthorizeErrors.LOGIN_FORBIDDEN(
          'the form was not sent by the browser that opened this sign-in (its cookie is missing or another)',
        );
      const { login } = found;
      const client = await deps.server.client(login.clientId);
      if (!client || client.orgId !== login.orgId)
        return answer(login.redirectUri, {
          error: 'unauthorized_client',
          error_description: 'the client was removed during the sign-in',
          state: login.state,
        });

      const handle = handleOf(form.handle);
      const retry = { clientName: client.name, csrfToken: form.csrfToken, handle: form.handle };
      const checked = await deps.authenticator.check(login.orgId, {
        handle,
        password: form.password,
        request: rc.analytics,
      });
      if (!checked.ok) {
        if (checked.reason === 'rate_limited') {
          const after = checked.retryAfter ?? 60;
          return {
            ...page(429, login, { ...retry, error: `Too many attempts. Try again in ${after} seconds.` }),
            headers: { 'retry-after': String(after) },
          };
        }
        return page(401, login, { ...retry, error: 'The handle and password do not match.' });
      }
      // One submission finishes a login; a second (a double click) finds it used.
      if (!(await logins.finish(form.csrfToken)))
        throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');

      const authTime = Math.floor(clock.now() / 1000);
      // Read while the token is issued: the events need the person's region.
      const personRead = deps.directory.get(login.orgId, checked.personId);
      let idToken: string;
      try {
        // Every hosted login mints its ID token now, so the token_minted hook decides on every login
        // whatever the scope (the client receives the token only with openid).
        idToken = (
          await deps.issuer.issue({
            orgId: login.orgId,
            personId: checked.personId,
            methods: ['password'],
            issuer: 'oauth2',
            authentications: [checked.authentication],
            request: rc.analytics,
            idToken: { clientId: client.clientId, authTime, ...(login.nonce ? { nonce: login.nonce } : {}) },
          })
        ).token;
      } catch (error) {
        const blocked = error instanceof ServiceError && error.status === 403;
        const person = await personRead;
        await deps.events.publish(login.orgId, 'AuthenticationFailed_v1', {
          analytics_metadata: analyticsMetadata(rc.analytics),
          browser_metadata: rc.browser,
          ...(person ? { person_id: person.personId, region: person.region } : {}),
          failed_authn_method: 'password',
          failure_reason: blocked ? 'token_blocked' : 'token_not_issued',
          failure_detail: error instanceof Error ? error.message : 'the token could not be issued',
          handle: eventHandle(checked.authentication.handle),
        });
        if (!blocked) throw error;
        return answer(login.redirectUri, {
          error: 'access_denied',
          error_description: 'the sign-in was refused by the organization (token_minted hook)',
          state: login.state,
        });
      }
      const person = await personRead;
      const code = randomSecret('');
      await Promise.all([
        person &&
          deps.events.publish(login.orgId, 'AuthenticationSucceeded_v1', {
            analytics_metadata: analyticsMetadata(rc.analytics),
            browser_metadata: rc.browser,
            person_id: person.personId,
            region: person.region,
            success_authn_method: 'password',
            authenticated_methods: ['password'],
            handle: eventHandle(checked.authentication.handle),
          }),
        codes.issue(code, {
          orgId: login.orgId,
          clientId: client.clientId,
          redirectUri: login.redirectUri,
          scope: login.scope,
          codeChallenge: login.codeChallenge,
          personId: checked.personId,
          methods: ['password'],
          authTime,
          idToken,
        }),
      ]);
      return answer(login.redirectUri, { code, state: login.state });
    },
  };
}

export type Login = ReturnType<typeof createLogin>;
