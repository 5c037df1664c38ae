import type { HostedLoginEmailCodes } from '../../../core/capabilities/hosted-login-email-codes.ts';
import type { HostedLoginPasskeys } from '../../../core/capabilities/hosted-login-passkeys.ts';
import type { OAuth2Server, OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory } from '../../../core/capabilities/person-directory.ts';
import type { SignInCompletion } from '../../../core/capabilities/sign-in-completion.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import type { SecondFactor } from '../../../core/factors/policy.ts';
import type { SecondFactorOutcome } from '../../../core/factors/second-factor.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { AuthorizeErrors } from '../errors.ts';
import { type LoginStore, type PendingLogin, requireOpenLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer, LoginPage } from './answer.ts';
import { SECOND_STEP_EMAIL_PATH } from './email-code-second-step.ts';
import { factorOf, type SignedIn } from './finish.ts';
import { headOf, lookOf } from './page-look.ts';
import { requireLoginClient } from './require-client.ts';
import { PAGE_SECOND_FACTORS, secondStepPage } from './second-step-page.ts';

export interface SecondStepDeps {
  server: OAuth2Server;
  logins: LoginStore;
  directory: PersonDirectory;
  events: EventPublisher;
  clock: Clock;
  baseUrl: string;
  /** The policy's second step, when a factors plugin provides it (read at each request). */
  completion: () => SignInCompletion | undefined;
  /** Runs the second factor's check (the checkSecondFactor hook point). */
  check: (input: {
    orgId: string;
    personId: string;
    method: SecondFactor;
    input: Readonly<Record<string, unknown>>;
    rc: RequestContext;
  }) => Promise<SecondFactorOutcome | undefined>;
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer;
  /** Codes by email, when the email-codes plugin provides them (read at each request). */
  emailCodes: () => HostedLoginEmailCodes | undefined;
  /** Passkeys, when a plugin provides them: the `webauthn` second step's options. */
  passkeys: () => HostedLoginPasskeys | undefined;
  /** The CSP source of the passkey script. */
  passkeyScript: string;
}

/** What the page says of a second factor that did not answer, in the factor's own words. */
export const refusedMessage = (method: SecondFactor): string =>
  method === 'webauthn'
    ? 'That passkey could not be verified. Try again, or choose another way.'
    : 'That code is not right. Try again.';

/** The sign-in that continues once the second factor is given: the session, the ID token, the code. */
export type ContinueSignIn = (
  login: PendingLogin,
  client: OAuthClient,
  who: SignedIn,
  rc: RequestContext,
  factors: ReturnType<typeof factorOf>[],
) => Promise<{ ok: true; answer: LoginAnswer } | { ok: false; message: string }>;

/**
 * The hosted login's second step: after a first factor, the organization's policy may ask for a second
 * (a TOTP code). The page is a login of its own, bound to the same browser, holding who signed in with
 * which first factor; its answer is checked by the factor's plugin, then the sign-in goes on with both.
 */
export function createSecondStep(deps: SecondStepDeps) {
  const action = `${deps.baseUrl}/oauth2/authorize/second-factor`;
  const sendAction = `${deps.baseUrl}${SECOND_STEP_EMAIL_PATH}`;
  /** The second factors this page runs here: otp_via_email only with the email-codes plugin. */
  const runs = (m: SecondFactor) =>
    PAGE_SECOND_FACTORS.includes(m) && (m !== 'otp_via_email' || deps.emailCodes() !== undefined);

  /** The second factors the hosted login asks of the person after a first factor; [] when none. */
  async function needed(orgId: string, personId: string): Promise<SecondFactor[]> {
    const completion = deps.completion();
    if (!completion) return [];
    return completion.secondStep(orgId, personId);
  }

  async function page(
    status: number,
    login: PendingLogin,
    client: OAuthClient,
    csrfToken: string,
    offered: readonly SecondFactor[],
    error?: string,
    /** otp_via_email's challenge, once its code was sent. */
    challengeId?: string,
  ): Promise<LoginPage> {
    const look = lookOf(client.ui, client.name);
    const { head, sources } = await headOf(look);
    const personId = login.pending?.personId;
    const ceremony =
      offered.includes('webauthn') && personId
        ? await deps.passkeys()?.secondStepOptions(login.orgId, personId)
        : undefined;
    // A passkey is offered only to a person who has one.
    const methods = ceremony ? offered : offered.filter((m) => m !== 'webauthn');
    const passkey = ceremony ? { ceremony, action: `${action}/passkey` } : undefined;
    return {
      kind: 'page',
      status,
      html: secondStepPage(
        {
          clientName: client.name,
          ui: client.ui,
          action,
          csrfToken,
          methods,
          error,
          emailCode: { sendAction, challengeId },
          passkey,
        },
        look,
        head,
      ),
      sources: passkey ? { ...sources, scripts: [deps.passkeyScript] } : sources,
      formTargets: [new URL(login.redirectUri).origin],
    };
  }

  /** Asks for the second factor: a login of the same request holding the first factor's success. */
  async function ask(
    login: PendingLogin,
    client: OAuthClient,
    who: SignedIn,
    methods: SecondFactor[],
  ): Promise<LoginAnswer> {
    const offered = methods.filter(runs);
    if (!offered.length || !login.browserHash)
      return deps.answer(login, {
        error: 'access_denied',
        error_description: `the organization asks for a second factor (${methods.join(', ') || 'none enrolled'}) the sign-in page cannot take`,
        state: login.state,
      });
    const loginId = randomSecret('');
    const now = Math.floor(deps.clock.now() / 1000);
    const waiting: PendingLogin = {
      ...login,
      pending: {
        personId: who.personId,
        factors: [factorOf(who, now)],
        ...(who.idp ? { idp: who.idp } : {}),
      },
    };
    await deps.logins.openHashed(loginId, login.browserHash, waiting);
    return page(200, waiting, client, loginId, offered);
  }

  /** POST /oauth2/authorize/second-factor: the second factor's answer, from the browser that signed in. */
  async function answer(
    form: {
      csrfToken: string;
      method: string;
      code: string;
      challengeId?: string | undefined;
      input?: Readonly<Record<string, unknown>>;
    },
    browserHash: string | undefined,
    rc: RequestContext,
    continueSignIn: ContinueSignIn,
  ): Promise<LoginAnswer> {
    const login = requireOpenLogin(await deps.logins.find(form.csrfToken), browserHash, {
      unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
      otherBrowser: 'the form was not sent by the browser that signed in (its cookie is missing or another)',
    });
    const pending = login.pending;
    if (!pending) throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in is not waiting for a second factor');
    const client = await requireLoginClient(deps.server, login, deps.answer);
    if (!('clientId' in client)) return client;
    const methods = (await needed(login.orgId, pending.personId)).filter(
      (m) => runs(m) && !pending.factors.some((f) => f.method === m),
    );
    const method = methods.find((m) => m === form.method);
    if (!method)
      return page(400, login, client, form.csrfToken, methods, 'This second factor is not offered here.');

    const outcome = await deps.check({
      orgId: login.orgId,
      personId: pending.personId,
      method,
      input: form.input ?? {
        code: form.code,
        ...(form.challengeId ? { challenge_id: form.challengeId } : {}),
      },
      rc,
    });
    if (!outcome?.ok) {
      const person = await deps.directory.get(login.orgId, pending.personId);
      await deps.events.publish(login.orgId, 'AuthenticationFailed_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        ...(person
          ? {
              person_id: person.personId,
              region: person.region,
              authenticated_methods: pending.factors.map((f) => f.method),
            }
          : {}),
        failed_authn_method: method,
        failure_reason: outcome ? outcome.reason : 'not_enrolled',
        failure_detail: outcome ? outcome.detail : `no ${method} factor answered for this person`,
      });
      if (outcome?.reason === 'rate_limited') {
        const after = outcome.retryAfter ?? 60;
        return {
          ...(await page(
            429,
            login,
            client,
            form.csrfToken,
            methods,
            `Too many attempts. Try again in ${after} seconds.`,
            form.challengeId,
          )),
          headers: { 'retry-after': String(after) },
        };
      }
      return page(401, login, client, form.csrfToken, methods, refusedMessage(method), form.challengeId);
    }
    // One answer finishes the step; a second (a double click) finds it used.
    if (!(await deps.logins.finish(form.csrfToken)))
      throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in has already been completed');
    const who: SignedIn = {
      personId: pending.personId,
      method,
      authentication: outcome.authentication,
      ...(pending.idp ? { idp: pending.idp } : {}),
    };
    const factors = [...pending.factors, factorOf(who, Math.floor(deps.clock.now() / 1000))];
    const signed = await continueSignIn(login, client, who, rc, factors);
    return signed.ok
      ? signed.answer
      : deps.answer(login, { error: 'access_denied', error_description: signed.message, state: login.state });
  }

  /** The page of a sign-in waiting for its second factor, open for the browser that signed in. */
  async function waiting(form: { csrfToken: string }, browserHash: string | undefined) {
    const login = requireOpenLogin(await deps.logins.find(form.csrfToken), browserHash, {
      unknown: 'this sign-in was never started here (csrf_token names no sign-in under way)',
      otherBrowser: 'the form was not sent by the browser that signed in (its cookie is missing or another)',
    });
    const pending = login.pending;
    if (!pending) throw AuthorizeErrors.LOGIN_NOT_FOUND('this sign-in is not waiting for a second factor');
    const client = await requireLoginClient(deps.server, login, deps.answer);
    if (!('clientId' in client)) return { ok: false as const, answer: client };
    const methods = (await needed(login.orgId, pending.personId)).filter(
      (m) => runs(m) && !pending.factors.some((f) => f.method === m),
    );
    return { ok: true as const, login, pending, client, methods };
  }

  return { needed, ask, answer, page, waiting };
}

export type SecondStep = ReturnType<typeof createSecondStep>;
