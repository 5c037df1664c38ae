import type { OAuthClient } from '../../../core/capabilities/oauth2-server.ts';
import {
  eventHandleOf,
  type PersonDirectory,
  type PersonRecord,
  type ProspectivePerson,
} from '../../../core/capabilities/person-directory.ts';
import type { TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import { randomSecret } from '../../../core/ids.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import { acrOf, acrSatisfies, amrOf } from '../../../core/tokens/authentication-context.ts';
import type { TokenAuthentication } from '../../../core/tokens/before-token-issued.ts';
import { stillAllowedScope } from '../../oauth2/grants/index.ts';
import type { SessionFactor } from '../sessions/store.ts';
import type { CodeStore } from '../store/codes.ts';
import type { PendingLogin } from '../store/logins.ts';
import { claimsAsked, claimsOfScope, personClaims } from '../tokens/person-claims.ts';
import type { AnswerTarget, LoginAnswer } from './answer.ts';

/** Who signed in, by which factor, for the ID token, the events and the code. */
export interface SignedIn {
  personId: string;
  /** The factor (the reference's FactorMethod): `password`, `oidc`, a second factor's. */
  method: string;
  authentication: TokenAuthentication;
  /** The SSO provider's id, named in the ID token's `idp` claim. */
  idp?: string;
  /** A first SSO sign-in's person, stored by the issuer once the token_minted hook allows the token. */
  prospective?: ProspectivePerson;
  /**
   * With `prospective`: who signed in when the issuer refuses it with a 409 (another sign-in stored
   * the person meanwhile), or the page's message when that person may not sign in (reported).
   */
  linkStored?: () => Promise<StoredSignedIn | { failed: string }>;
}

/** Who signed in, a person stored already: what `linkStored` answers. */
export type StoredSignedIn = Omit<SignedIn, 'prospective' | 'linkStored'>;

/** The sign-in session an ID token is minted in: its `sid`, the factors used and when. */
export interface SessionGrant {
  sessionId: string;
  factors: SessionFactor[];
  /** Seconds since the epoch. */
  authTime: number;
}

/** A login's ID token, and whom it was issued for (a raced first sign-in's: the person stored), or why not. */
export type Minted =
  | { ok: true; who: SignedIn; idToken: string; authTime: number; person?: PersonRecord }
  | { ok: false; message: string };

/** The `acr` an ID token carries: asked for by acr_values or the claims parameter, else none. */
function acrClaim(login: Pick<PendingLogin, 'acrValues' | 'claims'>, methods: string[]): string | undefined {
  const asked = login.claims?.id_token?.acr;
  if (!login.acrValues && asked === undefined) return undefined;
  const met = acrOf(methods);
  const wanted = login.acrValues ?? asked?.values ?? (asked?.value ? [asked.value] : []);
  // The first value asked for that the sign-in meets; else the one it met (acr is voluntary here).
  return wanted.find((w) => acrSatisfies(met, w)) ?? met;
}

/** What finishing a login uses: the issuer of its ID token, its events, its code and its redirect. */
export interface LoginFinishDeps {
  issuer: TokenIssuer;
  directory: PersonDirectory;
  codes: CodeStore;
  events: EventPublisher;
  clock: Clock;
  /** The redirect that answers the client. */
  answer: (to: AnswerTarget, params: Record<string, string | undefined>) => LoginAnswer;
}

/** A password sign-in's `handle` member of its events. */
const handleMember = (h: { type: string; value: string }) => {
  const handle = eventHandleOf(h);
  return handle ? { handle } : {};
};

/**
 * The end of a login once someone signed in, by password or SSO: the ID token (the token_minted hook
 * runs as the token issuer mints it), then AuthenticationSucceeded_v1, a code and the redirect back to
 * the client.
 */
export function createLoginFinish(deps: LoginFinishDeps) {
  const { codes, answer } = deps;

  /**
   * Mints the login's ID token: every hosted login mints it now, so the token_minted hook decides on
   * every login whatever the scope (the client receives the token only with openid). A refusal is
   * reported as AuthenticationFailed_v1; an error other than the hook's block is thrown. A first SSO
   * sign-in whose person another stored meanwhile (a 409) is minted again for that person
   * (`linkStored`), once; without `linkStored` it is reported and answered as a refusal.
   */
  async function mint(
    login: PendingLogin,
    client: OAuthClient,
    who: SignedIn,
    rc: RequestContext,
    session: SessionGrant,
    options: {
      hookOnly?: boolean;
      /** `who`'s person, active, as this request read it already (a session's): not read again. */
      person?: PersonRecord;
    } = {},
  ): Promise<Minted> {
    const authTime = session.authTime;
    const methods = session.factors.map((f) => f.method);
    const known = who.prospective ? undefined : options.person;
    // Read while the token is issued: the events need the person's region.
    const personRead = who.prospective
      ? Promise.resolve(who.prospective.person)
      : known
        ? Promise.resolve(known)
        : deps.directory.get(login.orgId, who.personId);
    // The members the claims parameter asks for in the ID token, as the person has them now: only
    // those of the scopes granted (the client's registered scopes, and what a consent covers), or the
    // parameter would hand a client what neither the organization nor the person allowed it.
    const granted = new Set(claimsOfScope(stillAllowedScope(login.scope, client)));
    const asked = claimsAsked(login.claims, 'id_token').filter((name) => granted.has(name));
    const holder = asked.length ? await personRead : undefined;
    try {
      const issued = await deps.issuer.issue({
        orgId: login.orgId,
        personId: who.personId,
        ...(who.prospective ? { prospective: who.prospective } : {}),
        ...(known ? { person: known } : {}),
        methods,
        issuer: 'oauth2',
        authentications: session.factors.map((f) => ({
          handle: f.handle,
          method: f.method,
          timestamp: new Date(f.at * 1000).toISOString(),
        })),
        request: rc.analytics,
        ...(who.idp ? { customClaims: { idp: who.idp } } : {}),
        idToken: {
          clientId: client.clientId,
          issuer: client.issuer,
          authTime,
          sessionId: session.sessionId,
          amr: amrOf(methods),
          ...(login.nonce ? { nonce: login.nonce } : {}),
          ...optional('acr', acrClaim(login, methods)),
          ...(holder ? { claims: personClaims(holder, asked) } : {}),
        },
        // Without openid the client gets no ID token: the hook decides, and no TokenMinted_v1 says otherwise.
        ...(options.hookOnly || !stillAllowedScope(login.scope, client).includes('openid')
          ? { hookOnly: true }
          : {}),
      });
      const person = await personRead;
      return { ok: true, who, idToken: issued.token, authTime, ...(person ? { person } : {}) };
    } catch (error) {
      // Two first sign-ins of one person raced and the other stored the person: this one is for it,
      // and the hook decides again, for the person stored.
      const raced = who.prospective && error instanceof ServiceError && error.status === 409;
      if (raced && who.linkStored) {
        const linked = await who.linkStored();
        if ('failed' in linked) return { ok: false, message: linked.failed };
        return mint(
          login,
          client,
          linked,
          rc,
          { ...session, factors: [factorOf(linked, authTime)] },
          // Another person than any read before: the issuer reads the one stored.
          options.hookOnly ? { hookOnly: true } : {},
        );
      }
      const blocked = error instanceof ServiceError && error.status === 403;
      // A first sign-in refused names nobody if its person was never stored (the hook blocked it); one
      // stored before a later step failed is named.
      const person = who.prospective ? await deps.directory.get(login.orgId, who.personId) : await personRead;
      // An authenticator that cannot link the person stored meanwhile: this one signs in again.
      const message = raced
        ? 'Another sign-in has just registered you. Sign in again.'
        : error instanceof Error
          ? error.message
          : 'the token could not be issued';
      // Source Cloud: no browser_metadata, which the spec gives this event only "when from the SDK".
      await deps.events.publish(login.orgId, 'AuthenticationFailed_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        // Authenticated already, the token refused after the method succeeded: "only if previously
        // authenticated" (spec), these three together, for a person that exists.
        ...(person
          ? { person_id: person.personId, region: person.region, authenticated_methods: methods }
          : {}),
        failed_authn_method: who.method,
        failure_reason: blocked ? 'token_blocked' : 'token_not_issued',
        failure_detail: message,
        ...(who.method === 'password' ? handleMember(who.authentication.handle) : {}),
      });
      if (!blocked && !raced) throw error;
      return { ok: false, message };
    }
  }

  /** Publishes AuthenticationSucceeded_v1 for a sign-in (not for an authorization a session answered). */
  async function succeeded(
    login: Pick<PendingLogin, 'orgId'>,
    minted: Extract<Minted, { ok: true }>,
    rc: RequestContext,
    session: SessionGrant,
  ) {
    const { person, who } = minted;
    if (!person) return;
    await deps.events.publish(login.orgId, 'AuthenticationSucceeded_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      browser_metadata: rc.browser,
      person_id: person.personId,
      region: person.region,
      // Every factor of the sign-in; the one that completed it last.
      success_authn_method: who.method,
      authenticated_methods: session.factors.map((f) => f.method),
      // A handle names what the person typed; an SSO sign-in typed none.
      ...(who.method === 'password' ? handleMember(who.authentication.handle) : {}),
    });
  }

  /** Issues the code for the minted ID token and answers the client with it. */
  async function grant(
    login: PendingLogin,
    client: OAuthClient,
    minted: Extract<Minted, { ok: true }>,
    session: SessionGrant,
  ): Promise<LoginAnswer> {
    const code = randomSecret('');
    await codes.issue(code, {
      orgId: login.orgId,
      clientId: client.clientId,
      redirectUri: login.redirectUri,
      scope: stillAllowedScope(login.scope, client),
      codeChallenge: login.codeChallenge,
      resource: login.resource,
      claims: login.claims,
      sessionId: session.sessionId,
      personId: minted.who.personId,
      methods: session.factors.map((f) => f.method),
      authTime: minted.authTime,
      idToken: minted.idToken,
      dpopJkt: login.dpopJkt,
    });
    return answer(login, { code, state: login.state });
  }

  return { mint, succeeded, grant };
}

/** A factor as a session records it, for who signed in at `at` (seconds). */
export const factorOf = (who: Pick<SignedIn, 'method' | 'authentication'>, at: number): SessionFactor => ({
  method: who.method,
  at,
  handle: who.authentication.handle,
});

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  value === undefined ? {} : ({ [key]: value } as Record<K, V>);
