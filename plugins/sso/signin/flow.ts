import * as oauth from 'oauth4webapi';
import * as v from 'valibot';
import type { PersonDirectory, PersonRecord } from '../../../core/capabilities/person-directory.ts';
import type { OpenedSsoCredential, SsoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import type { IssuedToken, TokenIssuer } from '../../../core/capabilities/token-issuer.ts';
import { ServiceError } from '../../../core/errors.ts';
import type { EventPublisher } from '../../../core/events/types.ts';
import { analyticsMetadata, type RequestContext } from '../../../core/http/sign-in-context.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SsoProfile, SsoProvider } from '../../../core/sso/define-provider.ts';
import { SsoSignInErrors } from './errors.ts';
import { isSecureUrl } from './loopback.ts';
import { type ProviderClient, ProviderFailure } from './provider-client.ts';
import type { PendingSignIn, SignInStore } from './store.ts';

export interface FlowDeps {
  credentials: SsoCredentials;
  directory: PersonDirectory;
  issuer: TokenIssuer;
  store: SignInStore;
  client: ProviderClient;
  events: EventPublisher;
  clock: Clock;
  /** The service's callback, registered at the provider: `${PUBLIC_BASE_URL}/sso/oidc/callback`. */
  callbackUrl: string;
}

/** What the callback's common part found: the person, or why not (already reported). */
export type Completed =
  | { ok: true; pending: PendingSignIn; person: PersonRecord; profile: SsoProfile; provider: string }
  | { ok: false; pending: PendingSignIn; failure: SignInFailure }
  /** No sign-in of this kind was started with this state. */
  | { ok: false; pending?: undefined; failure?: undefined };

/** A failed sign-in the application hears of (`error` in the fragment) and the organization's events record. */
export class SignInFailure extends Error {
  constructor(
    readonly reason: string,
    readonly error: 'access_denied' | 'server_error' | 'invalid_request',
    message: string,
    readonly person?: PersonRecord,
    /** The methods that had succeeded when it failed (the provider's, before the token was refused). */
    readonly authenticated?: string[],
  ) {
    super(message);
  }
}

const profileFromClaims = (c: Record<string, unknown>): SsoProfile => ({
  subject: String(c.sub),
  ...(typeof c.email === 'string' ? { email: c.email } : {}),
  emailVerified: c.email_verified === true || c.email_verified === 'true',
  ...(typeof c.name === 'string' ? { name: c.name } : {}),
});

const withFragment = (uri: string, params: Record<string, string>) => {
  const url = new URL(uri);
  url.hash = new URLSearchParams(Object.entries(params).filter(([, x]) => x !== '')).toString();
  return url.toString();
};

/** The start and callback of a sign-in with a stored SSO credential. */
export function createSignInFlow(deps: FlowDeps) {
  const { credentials, store, client, events, clock } = deps;

  async function opened(orgId: string, clientId: string) {
    const credential = await credentials.open(orgId, clientId);
    const provider = credential && credentials.provider(credential.provider);
    if (!credential || !provider)
      throw SsoSignInErrors.UNKNOWN_CLIENT(`client_id: no SSO credential ${clientId} in this organization`);
    const parsed = v.safeParse(provider.options, credential.options);
    if (!parsed.success)
      throw SsoSignInErrors.PROVIDER_ERROR(`the credential's options no longer fit ${provider.id}`);
    return { credential, provider, options: parsed.output };
  }

  async function secretOf<O>(p: SsoProvider<string, O>, c: OpenedSsoCredential, options: O) {
    const context = {
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      options,
      now: Math.floor(clock.now() / 1000),
    };
    return { context, secret: p.clientSecret ? await p.clientSecret(context) : c.clientSecret };
  }

  /** The provider's authorization URL, after recording state, nonce and verifier with `record`. */
  async function begin(
    orgId: string,
    clientId: string,
    record: Pick<PendingSignIn, 'redirectUri' | 'appState' | 'binding' | 'callbackUrl'>,
  ) {
    const { credential, provider, options } = await opened(orgId, clientId);
    const server = await client.serverOf(provider, options, clock.now()).catch((e) => {
      throw SsoSignInErrors.PROVIDER_ERROR(e instanceof Error ? e.message : String(e));
    });
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const codeVerifier = provider.pkce ? oauth.generateRandomCodeVerifier() : '';
    await store.put(state, { orgId, clientId: credential.clientId, nonce, codeVerifier, ...record });
    const url = new URL(server.as.authorization_endpoint ?? '');
    const p = url.searchParams;
    p.set('response_type', 'code');
    p.set('client_id', credential.clientId);
    p.set('redirect_uri', record.callbackUrl ?? deps.callbackUrl);
    p.set('scope', credential.effectiveScopes.join(' '));
    p.set('state', state);
    if (server.oidc) p.set('nonce', nonce);
    if (codeVerifier) {
      p.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
      p.set('code_challenge_method', 'S256');
    }
    for (const [k, x] of Object.entries(provider.authorizationParams?.(options) ?? {})) p.set(k, x);
    return url.toString();
  }

  /** GET /sso/oidc/start: the provider's authorization URL for the application's sign-in. */
  async function start(
    orgId: string,
    q: { client_id: string; redirect_uri: string; state?: string | undefined },
  ) {
    if (!isSecureUrl(q.redirect_uri, true))
      throw SsoSignInErrors.INVALID_REDIRECT_URI(
        'redirect_uri must be an https URL (http only on loopback) without a fragment',
      );
    if (!(await store.allows(orgId, q.redirect_uri)))
      throw SsoSignInErrors.INVALID_REDIRECT_URI(
        "redirect_uri is not one of the organization's sso redirect URIs (exact match)",
      );
    return begin(orgId, q.client_id, { redirectUri: q.redirect_uri, appState: q.state ?? '' });
  }

  async function authenticate(
    orgId: string,
    state: string,
    pending: PendingSignIn,
    params: URLSearchParams,
    bound: boolean,
  ) {
    const { credential, provider, options } = await opened(orgId, pending.clientId).catch((e) => {
      throw new SignInFailure('provider_error', 'server_error', e instanceof Error ? e.message : String(e));
    });
    // The organization may have turned the flag off while the person was at the provider.
    if (bound && !credential.enableInServiceOidcAuthzServer)
      throw new SignInFailure(
        'not_enabled',
        'access_denied',
        'this credential is no longer enabled for the authorization server',
      );
    try {
      const server = await client.serverOf(provider, options, clock.now());
      const { context, secret } = await secretOf(provider, credential, options);
      const tokens = await client.exchange(server, {
        clientId: credential.clientId,
        clientSecret: secret,
        callbackUrl: pending.callbackUrl ?? deps.callbackUrl,
        params,
        state,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
      });
      const profile = provider.profile
        ? await provider.profile(tokens, context)
        : tokens.idTokenClaims
          ? profileFromClaims(
              await client.withUserInfo(
                server,
                credential.clientId,
                tokens.accessToken,
                tokens.idTokenClaims,
              ),
            )
          : undefined;
      if (!profile)
        throw new ProviderFailure('provider_error', `${provider.id} gave no ID token and has no profile`);
      return { profile, provider: provider.id };
    } catch (e) {
      if (e instanceof ProviderFailure)
        throw new SignInFailure(
          e.reason,
          e.reason === 'access_denied' ? 'access_denied' : 'server_error',
          e.message,
        );
      throw new SignInFailure('provider_error', 'server_error', e instanceof Error ? e.message : String(e));
    }
  }

  async function personFor(orgId: string, profile: SsoProfile, rc: RequestContext): Promise<PersonRecord> {
    if (!profile.email)
      throw new SignInFailure('no_email', 'access_denied', 'the provider gave no email address');
    if (!profile.emailVerified)
      throw new SignInFailure(
        'unverified_email',
        'access_denied',
        'the provider does not vouch for the email address',
      );
    const handle = deps.directory.normaliseHandle({ type: 'email_address', value: profile.email });
    // Linking needs a verified email on both sides: the provider's (above) and ours. A person holding
    // the address unverified may have been made by someone who does not own it.
    const linked = (person: PersonRecord) => {
      if (person.handles.some((h) => h.type === handle.type && h.value === handle.value && h.verified))
        return person;
      throw new SignInFailure(
        'unverified_handle',
        'access_denied',
        'the person holding this email address has not verified it, so the sign-in is not linked to them',
        person,
      );
    };
    const found = await deps.directory.findByHandle(orgId, handle);
    if (found) return linked(found);
    try {
      return await deps.directory.createWithHandles(orgId, {
        handles: [{ ...handle, verified: true }],
        analytics: rc.analytics,
      });
    } catch (e) {
      // Two first sign-ins of one person raced: the other one created it.
      const again = await deps.directory.findByHandle(orgId, handle);
      if (again) return linked(again);
      throw e;
    }
  }

  /** Publishes AuthenticationFailed_v1 (method oidc) for a failed sign-in. */
  const reportFailure = (orgId: string, f: SignInFailure, rc: RequestContext) =>
    // Source Cloud: no browser_metadata, which the spec gives this event only "when from the SDK".
    events.publish(orgId, 'AuthenticationFailed_v1', {
      analytics_metadata: analyticsMetadata(rc.analytics),
      // person_id, region and authenticated_methods "only if previously authenticated" (spec): together.
      ...(f.person && f.authenticated
        ? { person_id: f.person.personId, region: f.person.region, authenticated_methods: f.authenticated }
        : {}),
      failed_authn_method: 'oidc',
      failure_reason: f.reason,
      failure_detail: f.message,
    });

  /**
   * The callback's common part: burns the state (of a bound sign-in or not, as `bound` says), verifies
   * the provider's answer and finds or creates the person. A failure is reported before it is returned.
   */
  async function complete(
    params: URLSearchParams,
    rc: RequestContext,
    bound: boolean,
    accept?: (binding: string) => Promise<string | undefined>,
  ): Promise<Completed> {
    const state = params.get('state') ?? '';
    const burnt = state ? await store.burn(state, bound) : ({ kind: 'unknown' } as const);
    if (burnt.kind === 'unknown') return { ok: false };
    const { pending } = burnt;
    const orgId = pending.orgId;
    const failed = async (failure: SignInFailure): Promise<Completed> => {
      await reportFailure(orgId, failure, rc);
      return { ok: false, pending, failure };
    };
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
    const refusal = accept && (await accept(pending.binding ?? ''));
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
      const person = await personFor(orgId, profile, rc);
      if (!person.active)
        throw new SignInFailure('person_disabled', 'access_denied', 'this person is disabled', person, [
          'oidc',
        ]);
      return { ok: true, pending, person, profile, provider };
    } catch (e) {
      if (e instanceof SignInFailure) return failed(e);
      return failed(
        new SignInFailure('sign_in_error', 'server_error', e instanceof Error ? e.message : String(e)),
      );
    }
  }

  /** GET /sso/oidc/callback: where the browser goes next (the application's redirect URI), or an error. */
  async function callback(params: URLSearchParams, rc: RequestContext): Promise<string> {
    if (!params.get('state')) throw SsoSignInErrors.INVALID_STATE('query.state: is required');
    const done = await complete(params, rc, false);
    if (!done.pending) throw SsoSignInErrors.INVALID_STATE('state: no sign-in was started with this state');
    const { pending } = done;
    const orgId = pending.orgId;
    const back = (f: SignInFailure) =>
      withFragment(pending.redirectUri, {
        error: f.error,
        error_description: f.message,
        state: pending.appState,
      });
    if (!done.ok) return back(done.failure);
    const { person, profile } = done;
    let issued: IssuedToken;
    try {
      issued = await deps.issuer.issue({
        orgId,
        personId: person.personId,
        methods: ['oidc'],
        issuer: 'authentication',
        authentications: [authenticationOf(profile)],
        request: rc.analytics,
      });
    } catch (e) {
      const blocked = e instanceof ServiceError && e.status === 403;
      const f = new SignInFailure(
        blocked ? 'token_blocked' : 'token_not_issued',
        blocked ? 'access_denied' : 'server_error',
        e instanceof Error ? e.message : 'the token could not be issued',
        person,
        ['oidc'],
      );
      await reportFailure(orgId, f, rc);
      return back(f);
    }
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

  return { begin, start, complete, callback, authenticationOf };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
