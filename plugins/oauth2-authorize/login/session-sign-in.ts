import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret, uuidv7 } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SessionCookies } from '../sessions/cookie.ts';
import type {
  EndedSession,
  FoundSession,
  SessionFactor,
  SessionStore,
  SignInSession,
} from '../sessions/store.ts';
import type { PendingLogin } from '../store/logins.ts';
import type { AnswerTarget, LoginAnswer } from './answer.ts';
import { essentialAcrUnmet } from './essential-acr.ts';
import { type createLoginFinish, factorOf, type SessionGrant, type SignedIn } from './finish.ts';
import type { PasskeyOffer } from './passkey-offer.ts';
import { OTHER_SUBJECT, subjectAllowed } from './requested-subject.ts';
import type { SecondStep } from './second-step.ts';

/** Whether a sign-in must ask the person's consent before the client gets a code, and the page that asks. */
export interface ConsentStep {
  needed(login: PendingLogin, client: OAuthClient, personId: string): Promise<boolean>;
  /**
   * The consent page for the request, answered by the browser holding the session whose cookie value
   * is `secret` (a fresh login row of the same request, bound to that cookie), with `headers`.
   */
  ask(
    login: PendingLogin,
    client: OAuthClient,
    session: { sessionId: string; secret: string },
    headers: Record<string, string>,
  ): Promise<LoginAnswer>;
}

export interface SessionSignInDeps {
  sessions: SessionStore;
  cookies: SessionCookies;
  directory: PersonDirectory;
  clock: Clock;
  finish: ReturnType<typeof createLoginFinish>;
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer;
  /** What follows an ended session: PersonLoggedOut_v1 and the clients' logout tokens. */
  ended: (sessions: EndedSession[], rc: RequestContext | undefined) => Promise<void>;
  consent: ConsentStep;
  secondStep: Pick<SecondStep, 'needed' | 'ask'>;
  /** "Add a passkey?" after a sign-in by another factor (the passkeys plugin, the policy allowing). */
  offer?: Pick<PasskeyOffer, 'wanted' | 'ask'>;
}

/** A browser's live session with its person, active, as read for this request. */
export interface LiveSession extends FoundSession {
  person: PersonRecord;
}

/** Adds headers (the session's cookie) to an answer. */
export const withHeaders = (answer: LoginAnswer, headers: Record<string, string>): LoginAnswer => ({
  ...answer,
  headers: { ...answer.headers, ...headers },
});

/** A refusal by the token_minted hook, answered to the client. */
const refusedByHook = (login: PendingLogin) => ({
  error: 'access_denied',
  error_description: 'the sign-in was refused by the organization (token_minted hook)',
  state: login.state,
});

/**
 * Sign-in sessions in the hosted login: the session a browser holds (its person still active), the
 * code a valid session answers without a page, and the session a sign-in starts or renews.
 */
export function createSessionSignIn(deps: SessionSignInDeps) {
  const { sessions, cookies, finish, answer } = deps;
  const nowSeconds = () => Math.floor(deps.clock.now() / 1000);

  /**
   * The browser's live session of the organization, its person still there and active: the person as
   * read here is the one a silent authorization mints the ID token for (not read again).
   */
  async function live(orgId: string, secret: string | undefined): Promise<LiveSession | undefined> {
    if (!secret) return undefined;
    const session = await sessions.find(orgId, secret);
    if (!session) return undefined;
    const person = await deps.directory.get(orgId, session.personId);
    if (person?.active) return { ...session, person };
    // The person was disabled or deleted: the session ends here if nothing ended it before.
    const ended = await sessions.end(orgId, session.sessionId);
    if (ended) await deps.ended([ended], undefined);
    return undefined;
  }

  /** The session's factors as the ID token is minted with them. */
  const grantOf = (s: Pick<SignInSession, 'sessionId' | 'factors' | 'authTime'>): SessionGrant => ({
    sessionId: s.sessionId,
    factors: s.factors,
    authTime: s.authTime,
  });

  /** A code for the client from a valid session, without a page (the consent, when asked, is given). */
  async function silent(
    login: PendingLogin,
    client: OAuthClient,
    session: LiveSession,
    rc: RequestContext,
  ): Promise<LoginAnswer> {
    const last = session.factors.at(-1);
    const who: SignedIn = {
      personId: session.personId,
      method: last?.method ?? 'password',
      authentication: {
        handle: last?.handle ?? { type: '', value: '' },
        method: last?.method ?? 'password',
        timestamp: new Date((last?.at ?? session.authTime) * 1000).toISOString(),
      },
    };
    const grant = grantOf(session);
    const minted = await finish.mint(login, client, who, rc, grant, { person: session.person });
    if (!minted.ok) return answer(login, refusedByHook(login));
    await sessions.used(session, client.clientId);
    return finish.grant(login, client, minted, grant);
  }

  /**
   * After a factor signed someone in: the ID token (the token_minted hook decides), the session started
   * (or renewed, for its own person: a new cookie value, the new factor and time), then the consent page
   * when one is needed, else the code. Another person's session in this browser ends.
   */
  async function signedIn(
    login: PendingLogin,
    client: OAuthClient,
    who: SignedIn,
    rc: RequestContext,
    /** Every factor, once a second one completed the sign-in; else the first is `who`'s and the policy may ask for a second. */
    completed?: SessionFactor[],
  ): Promise<{ ok: true; answer: LoginAnswer } | { ok: false; message: string }> {
    // Someone else than the person the request named: no token, and no session for them either.
    if (!subjectAllowed(login.claims, who.personId))
      return {
        ok: true,
        answer: answer(login, {
          error: 'access_denied',
          error_description: OTHER_SUBJECT,
          state: login.state,
        }),
      };
    // A sign-in short of an essential acr failed (§5.5.1.1): no token, no session.
    const short = essentialAcrUnmet(login.claims, [who.method]);
    if (short)
      return {
        ok: true,
        answer: answer(login, { error: 'access_denied', error_description: short, state: login.state }),
      };
    const now = nowSeconds();
    // A first sign-in with SSO (a person not stored yet) has no second factor to give.
    if (!completed && !who.prospective) {
      const methods = await deps.secondStep.needed(login.orgId, who.personId);
      // The second step takes another factor than the first (none left: the page refuses the sign-in).
      const others = methods.filter((m) => m !== who.method);
      if (methods.length) return { ok: true, answer: await deps.secondStep.ask(login, client, who, others) };
    }
    const previous = login.sessionId ? await sessions.get(login.orgId, login.sessionId) : undefined;
    const renew = previous !== undefined && !who.prospective && previous.personId === who.personId;
    const grant: SessionGrant = {
      sessionId: renew ? previous.sessionId : uuidv7(deps.clock.now()),
      factors: completed ?? [factorOf(who, now)],
      authTime: now,
    };
    const asks = await deps.consent.needed(login, client, who.personId);
    // A passkey is offered when no consent is asked (a person stored already).
    const offers =
      !asks && !who.prospective && deps.offer
        ? await deps.offer.wanted(login.orgId, who.personId, who.method)
        : false;
    // With a consent to ask (or the offer), the hook decides now and the ID token is minted once the person answers.
    const minted = await finish.mint(login, client, who, rc, grant, { hookOnly: asks || offers });
    if (!minted.ok) return minted;
    const personId = minted.who.personId;

    const secret = randomSecret('');
    if (renew) await sessions.reauthenticated(grant.sessionId, secret, grant.factors, now);
    else {
      const ended = previous ? await sessions.end(login.orgId, previous.sessionId) : undefined;
      if (ended) await deps.ended([ended], rc);
      await sessions.start({
        ...grant,
        secret,
        orgId: login.orgId,
        personId,
        userAgent: rc.analytics.userAgent,
        ipAddress: rc.analytics.clientIpAddress,
      });
    }
    await finish.succeeded(login, minted, rc, grant);
    const cookie = { 'set-cookie': cookies.set(login.orgId, secret) };
    if (asks)
      return {
        ok: true,
        answer: await deps.consent.ask(login, client, { sessionId: grant.sessionId, secret }, cookie),
      };
    const offered =
      offers && deps.offer
        ? await deps.offer.ask(login, client, { sessionId: grant.sessionId, secret, personId }, cookie)
        : undefined;
    if (offered) return { ok: true, answer: offered };
    await sessions.served(grant.sessionId, client.clientId);
    return { ok: true, answer: withHeaders(await finish.grant(login, client, minted, grant), cookie) };
  }

  return { live, silent, signedIn, refusedByHook };
}

export type SessionSignIn = ReturnType<typeof createSessionSignIn>;
