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
import type { SignInStore } from './store.ts';

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

/** A failed sign-in the application hears of (`error` in the fragment) and the organization's events record. */
class SignInFailure extends Error {
  constructor(
    readonly reason: string,
    readonly error: 'access_denied' | 'server_error' | 'invalid_request',
    message: string,
    readonly person?: PersonRecord,
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

  /** GET /sso/oidc/start: the provider's authorization URL, after recording state, nonce and verifier. */
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
    const { credential, provider, options } = await opened(orgId, q.client_id);
    const server = await client.serverOf(provider, options, clock.now()).catch((e) => {
      throw SsoSignInErrors.PROVIDER_ERROR(e instanceof Error ? e.message : String(e));
    });
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const codeVerifier = provider.pkce ? oauth.generateRandomCodeVerifier() : '';
    await store.put(state, {
      orgId,
      clientId: credential.clientId,
      redirectUri: q.redirect_uri,
      nonce,
      codeVerifier,
      appState: q.state ?? '',
    });
    const url = new URL(server.as.authorization_endpoint ?? '');
    const p = url.searchParams;
    p.set('response_type', 'code');
    p.set('client_id', credential.clientId);
    p.set('redirect_uri', deps.callbackUrl);
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

  async function authenticate(
    orgId: string,
    state: string,
    pending: { clientId: string; nonce: string; codeVerifier: string },
    params: URLSearchParams,
  ) {
    const { credential, provider, options } = await opened(orgId, pending.clientId).catch((e) => {
      throw new SignInFailure('provider_error', 'server_error', e instanceof Error ? e.message : String(e));
    });
    try {
      const server = await client.serverOf(provider, options, clock.now());
      const { context, secret } = await secretOf(provider, credential, options);
      const tokens = await client.exchange(server, {
        clientId: credential.clientId,
        clientSecret: secret,
        callbackUrl: deps.callbackUrl,
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
      return profile;
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

  /** GET /sso/oidc/callback: where the browser goes next (the application's redirect URI), or an error. */
  async function callback(params: URLSearchParams, rc: RequestContext): Promise<string> {
    const state = params.get('state') ?? '';
    const burnt = state ? await store.burn(state) : ({ kind: 'unknown' } as const);
    if (burnt.kind === 'unknown')
      throw SsoSignInErrors.INVALID_STATE('state: no sign-in was started with this state');
    const { pending } = burnt;
    const orgId = pending.orgId;
    const failed = async (f: SignInFailure) => {
      await events.publish(orgId, 'AuthenticationFailed_v1', {
        analytics_metadata: analyticsMetadata(rc.analytics),
        browser_metadata: rc.browser,
        ...(f.person ? { person_id: f.person.personId, region: f.person.region } : {}),
        failed_authn_method: 'oidc',
        failure_reason: f.reason,
        failure_detail: f.message,
      });
      return withFragment(pending.redirectUri, {
        error: f.error,
        error_description: f.message,
        state: pending.appState,
      });
    };
    if (burnt.kind !== 'fresh')
      return failed(
        new SignInFailure(
          `${burnt.kind}_state`,
          'invalid_request',
          `the state was ${burnt.kind === 'replayed' ? 'already used' : 'used too late'}`,
        ),
      );
    let person: PersonRecord;
    let issued: IssuedToken;
    try {
      const profile = await authenticate(orgId, state, pending, params);
      person = await personFor(orgId, profile, rc);
      if (!person.active)
        throw new SignInFailure('person_disabled', 'access_denied', 'this person is disabled', person);
      issued = await deps.issuer
        .issue({
          orgId,
          personId: person.personId,
          methods: ['oidc'],
          issuer: 'authentication',
          authentications: [
            {
              handle: { type: 'email_address', value: profile.email ?? '' },
              method: 'oidc',
              timestamp: new Date(clock.now()).toISOString(),
            },
          ],
          request: rc.analytics,
        })
        .catch((e) => {
          const blocked = e instanceof ServiceError && e.status === 403;
          throw new SignInFailure(
            blocked ? 'token_blocked' : 'token_not_issued',
            blocked ? 'access_denied' : 'server_error',
            e instanceof Error ? e.message : 'the token could not be issued',
            person,
          );
        });
    } catch (e) {
      if (e instanceof SignInFailure) return failed(e);
      return failed(
        new SignInFailure('sign_in_error', 'server_error', e instanceof Error ? e.message : String(e)),
      );
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

  return { start, callback };
}

export type SignInFlow = ReturnType<typeof createSignInFlow>;
