import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { SsoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import type { IssuedToken, TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SsoProfile } from '../../../core/sso/define-provider.ts';
import { credentialRedirectUri, SIGN_IN_CALLBACK_PATH } from '../../../core/sso/redirect-uris.ts';
import { SsoSignInErrors } from './errors.ts';
import { asFailure, reportFailure, SignInFailure } from './failure.ts';
import { isSecureUrl } from './loopback.ts';
import { personFor, type SsoPerson, storedMeanwhile, storedPersonFor } from './person-link.ts';
import type { ProviderClient } from './provider-client.ts';
import { createProviderSignIn } from './provider-sign-in.ts';
import type { PendingSignIn, SignInStore } from './store.ts';

export interface FlowDeps {
  credentials: SsoCredentials;
  directory: PersonDirectory;
  issuer: TokenIssuer;
  store: SignInStore;
  client: ProviderClient;
  events: EventPublisher;
  clock: Clock;
  /** PUBLIC_BASE_URL: each credential's callback is `${baseUrl}/sso/oidc/callback/{callback_id}`. */
  baseUrl: string;
}

/**
 * Failures that refuse the answer at the callback rather than take it back to the application: the
 * state is another credential's, or another browser's, so its redirect URI is not the one this
 * browser's sign-in would go back to (it may be another organization's application).
 */
const REFUSED_HERE = new Set(['wrong_callback', 'other_browser']);

/** What the callback's common part found: the person, or why not (already reported). */
export type Completed =
  | ({ ok: true; pending: PendingSignIn; profile: SsoProfile; provider: string } & SsoPerson)
  | { ok: false; pending: PendingSignIn; failure: SignInFailure }
  /** No sign-in of this kind was started with this state, or no credential has this callback ID. */
  | { ok: false; pending?: undefined; failure?: undefined; unknownCallback?: true };

const withFragment = (uri: string, params: Record<string, string>) => {
  const url = new URL(uri);
  url.hash = new URLSearchParams(Object.entries(params).filter(([, x]) => x !== '')).toString();
  return url.toString();
};

/** The start and callback of a sign-in with a stored SSO credential. */
export function createSignInFlow(deps: FlowDeps) {
  const { store, events, clock } = deps;
  const { begin, authenticate } = createProviderSignIn(deps);

  /**
   * GET /sso/oidc/start: the provider's authorization URL for the application's sign-in, bound to the
   * browser whose cookie value's digest is `browserHash`.
   */
  async function start(
    orgId: string,
    q: { client_id: string; redirect_uri: string; state?: string | undefined },
    browserHash: string,
  ) {
    if (!isSecureUrl(q.redirect_uri, true))
      throw SsoSignInErrors.INVALID_REDIRECT_URI(
        'redirect_uri must be an https URL (http only on loopback) without a fragment',
      );
    if (!(await store.allows(orgId, q.redirect_uri)))
      throw SsoSignInErrors.INVALID_REDIRECT_URI(
        "redirect_uri is not one of the organization's sso redirect URIs (exact match)",
      );
    return begin(orgId, q.client_id, {
      redirectUri: q.redirect_uri,
      appState: q.state ?? '',
      browserHash,
      callbackUrl: (id) => credentialRedirectUri(deps.baseUrl, SIGN_IN_CALLBACK_PATH, id),
    });
  }

  /**
   * The callback's common part: burns the state (of a bound sign-in or not, as `bound` says), checks it
   * was started for the credential whose callback ID the path names (`callbackId`), verifies the
   * provider's answer and finds or creates the person. A failure is reported before it is returned.
   */
  async function complete(
    params: URLSearchParams,
    rc: RequestContext,
    bound: boolean,
    callbackId: string,
    accept?: (pending: PendingSignIn) => Promise<string | undefined>,
  ): Promise<Completed> {
    const target = await deps.credentials.byCallback(callbackId);
    if (!target) return { ok: false, unknownCallback: true };
    const state = params.get('state') ?? '';
    const burnt = state ? await store.burn(state, bound) : ({ kind: 'unknown' } as const);
    if (burnt.kind === 'unknown') return { ok: false };
    const { pending } = burnt;
    const orgId = pending.orgId;
    const failed = async (failure: SignInFailure): Promise<Completed> => {
      await reportFailure(events, orgId, failure, rc);
      return { ok: false, pending, failure };
    };
    // RFC 9700 section 4.4 (mix-up): the answer came back to this credential's redirect URI, so it is
    // this credential's provider's code; a state started for another credential (of this organization
    // or another) would send it to that credential's token endpoint. Refused before anything is sent.
    if (target.orgId !== orgId || target.clientId !== pending.clientId) {
      const failure = new SignInFailure(
        'wrong_callback',
        'access_denied',
        "the provider's answer came back to another SSO credential's redirect URI than the one this sign-in was started for",
      );
      // The credential whose redirect URI was used hears of it too: someone tried its provider's code.
      if (target.orgId !== orgId) await reportFailure(events, target.orgId, failure, rc);
      return failed(failure);
    }
    if (burnt.kind !== 'fresh')
      return failed(
        new SignInFailure(
          `${burnt.kind}_state`,
          'invalid_request',
          `the state was ${burnt.kind === 'replayed' ? 'already used' : 'used too late'}`,
        ),
      );
    // The caller's own check of who sent the answer (the browser that started the sign-in), before the
    // code is exchanged and a person found or created: a refused answer changes nothing but its state.
    const refusal = accept && (await accept(pending));
    if (refusal) return failed(new SignInFailure('other_browser', 'access_denied', refusal));
    if (!params.has('code') && !params.has('error'))
      return failed(
        new SignInFailure(
          'invalid_callback',
          'invalid_request',
          "the provider's answer has neither code nor error",
        ),
      );
    try {
      const { profile, provider } = await authenticate(orgId, state, pending, params, bound);
      const who = await personFor(deps.directory, orgId, profile, rc);
      return { ok: true, pending, ...who, profile, provider };
    } catch (e) {
      return failed(asFailure(e));
    }
  }

  /**
   * GET /sso/oidc/callback/{callback_id}: where the browser goes next (the application's redirect URI),
   * or an error. `browserRefusal` says why the request is not from the browser whose cookie digest the
   * sign-in stored (undefined: it is).
   */
  async function callback(
    params: URLSearchParams,
    rc: RequestContext,
    callbackId: string,
    browserRefusal: (browserHash: string | undefined) => Promise<string | undefined>,
  ): Promise<string> {
    if (!params.get('state')) throw SsoSignInErrors.INVALID_STATE('query.state: is required');
    const done = await complete(params, rc, false, callbackId, (p) => browserRefusal(p.browserHash));
    if (!done.pending)
      throw done.unknownCallback
        ? SsoSignInErrors.UNKNOWN_CALLBACK(
            'callback_id: no SSO credential has this redirect URI (it may have been deleted)',
          )
        : SsoSignInErrors.INVALID_STATE('state: no sign-in was started with this state');
    if (!done.ok && REFUSED_HERE.has(done.failure.reason))
      throw done.failure.reason === 'wrong_callback'
        ? SsoSignInErrors.WRONG_CALLBACK(
            "state: this sign-in was started for another SSO credential; the provider's answer must come back to that credential's redirect URI. Nothing was redeemed.",
          )
        : SsoSignInErrors.OTHER_BROWSER(
            'state: this sign-in was started by another browser (its cookie is missing or another); start it again here. Nothing was redeemed.',
          );
    const { pending } = done;
    const orgId = pending.orgId;
    const back = (f: SignInFailure) =>
      withFragment(pending.redirectUri, {
        error: f.error,
        error_description: f.message,
        state: pending.appState,
      });
    if (!done.ok) return back(done.failure);
    const { profile } = done;
    let who: SsoPerson = done;
    const issue = () =>
      deps.issuer.issue({
        orgId,
        personId: who.person.personId,
        ...(who.prospective ? { prospective: who.prospective } : {}),
        methods: ['oidc'],
        issuer: 'authentication',
        authentications: [authenticationOf(profile)],
        request: rc.analytics,
      });
    let issued: IssuedToken;
    try {
      issued = await issue().catch(async (e) => {
        // Another sign-in stored a person with this address first (a racing first sign-in, the API):
        // this one is for that person, under the same checks (verified address, active) as any.
        if (!storedMeanwhile(e, who)) throw e;
        who = { person: await storedPersonFor(deps.directory, orgId, profile, rc) };
        return issue();
      });
    } catch (e) {
      const blocked = e instanceof ServiceError && e.status === 403;
      // A first sign-in refused names nobody if its person was never stored (the hook blocked it); one
      // stored before a later step failed is named.
      const stored = who.prospective ? await deps.directory.get(orgId, who.person.personId) : who.person;
      const f =
        e instanceof SignInFailure
          ? e
          : new SignInFailure(
              blocked ? 'token_blocked' : 'token_not_issued',
              blocked ? 'access_denied' : 'server_error',
              e instanceof Error ? e.message : 'the token could not be issued',
              stored,
              stored && ['oidc'],
            );
      await reportFailure(events, orgId, f, rc);
      return back(f);
    }
    const { person } = who;
    await events.publish(orgId, 'AuthenticationSucceeded_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      browser_metadata: rc.browser,
      person_id: person.personId,
      region: person.region,
      success_authn_method: 'oidc',
      authenticated_methods: ['oidc'],
    });
    return withFragment(pending.redirectUri, {
      token: issued.token,
      person_id: person.personId,
      expires_at: String(issued.expiresAt),
      state: pending.appState,
    });
  }

  const authenticationOf = (profile: SsoProfile) => ({
    handle: { type: 'email_address', value: profile.email ?? '' },
    method: 'oidc',
    timestamp: new Date(clock.now()).toISOString(),
  });

  /**
   * A bound sign-in's first-sign-in person that the issuer refused with a 409: the person stored
   * meanwhile with the address (`storedPersonFor`), or the failure, reported.
   */
  async function linkStored(
    orgId: string,
    profile: SsoProfile,
    rc: RequestContext,
  ): Promise<{ ok: true; person: PersonRecord } | { ok: false; failure: SignInFailure }> {
    try {
      return { ok: true, person: await storedPersonFor(deps.directory, orgId, profile, rc) };
    } catch (e) {
      // As the application's callback reports an error after the provider's answer: token_not_issued.
      const failure = asFailure(e, 'token_not_issued');
      await reportFailure(events, orgId, failure, rc);
      return { ok: false, failure };
    }
  }

  return { begin, start, complete, callback, authenticationOf, linkStored };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
