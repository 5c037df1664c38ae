import * as oauth from 'oauth4webapi';
import * as v from 'valibot';
import type { OpenedSsoCredential, SsoCredentials } from '../../../core/capabilities/sso-credentials.ts';
import type { Clock } from '../../../core/ports/clock.ts';
import type { SsoProfile, SsoProvider } from '../../../core/sso/define-provider.ts';
import { SsoSignInErrors } from './errors.ts';
import { SignInFailure } from './failure.ts';
import { type ProviderClient, ProviderFailure } from './provider-client.ts';
import type { PendingSignIn, SignInStore } from './store.ts';

/** What the provider's side of a sign-in uses. */
export interface ProviderSignInDeps {
  credentials: SsoCredentials;
  store: SignInStore;
  client: ProviderClient;
  clock: Clock;
}

/** What a sign-in records at its start, and the redirect URI of the credential it sends the provider. */
export type BeginRecord = Pick<PendingSignIn, 'redirectUri' | 'appState' | 'binding' | 'browserHash'> & {
  /** The credential's own callback for this kind of sign-in, from its callback ID. */
  callbackUrl: (callbackId: string) => string;
};

const profileFromClaims = (c: Record<string, unknown>): SsoProfile => ({
  subject: String(c.sub),
  ...(typeof c.email === 'string' ? { email: c.email } : {}),
  emailVerified: c.email_verified === true || c.email_verified === 'true',
  ...(typeof c.name === 'string' ? { name: c.name } : {}),
});

/**
 * The provider's side of a sign-in with a stored SSO credential: its authorization URL (begin), and
 * the profile from its answer (authenticate).
 */
export function createProviderSignIn(deps: ProviderSignInDeps) {
  const { credentials, store, client, clock } = deps;

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

  async function makeClientSecret<O>(p: SsoProvider<string, O>, c: OpenedSsoCredential, options: O) {
    const context = {
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      options,
      now: Math.floor(clock.now() / 1000),
    };
    return { context, secret: p.clientSecret ? await p.clientSecret(context) : c.clientSecret };
  }

  /** The provider's authorization URL, after recording state, nonce and verifier with `record`. */
  async function begin(orgId: string, clientId: string, record: BeginRecord) {
    const { credential, provider, options } = await opened(orgId, clientId);
    const server = await client.discoverServer(provider, options, clock.now()).catch((e) => {
      throw SsoSignInErrors.PROVIDER_ERROR(e instanceof Error ? e.message : String(e));
    });
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const codeVerifier = provider.pkce ? oauth.generateRandomCodeVerifier() : '';
    const callbackUrl = record.callbackUrl(credential.callbackId);
    await store.put(state, {
      orgId,
      clientId: credential.clientId,
      nonce,
      codeVerifier,
      redirectUri: record.redirectUri,
      appState: record.appState,
      callbackUrl,
      ...(record.binding !== undefined ? { binding: record.binding } : {}),
      ...(record.browserHash !== undefined ? { browserHash: record.browserHash } : {}),
    });
    const url = new URL(server.as.authorization_endpoint ?? '');
    const p = url.searchParams;
    p.set('response_type', 'code');
    p.set('client_id', credential.clientId);
    p.set('redirect_uri', callbackUrl);
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
    // A state made before per-credential callbacks names no redirect URI: its answer is not redeemed.
    const callbackUrl = pending.callbackUrl;
    if (!callbackUrl)
      throw new SignInFailure(
        'wrong_callback',
        'invalid_request',
        "this sign-in was started before the credential's own redirect URI; start it again",
      );
    try {
      const server = await client.discoverServer(provider, options, clock.now());
      const { context, secret } = await makeClientSecret(provider, credential, options);
      const tokens = await client.exchange(server, {
        clientId: credential.clientId,
        clientSecret: secret,
        callbackUrl,
        params,
        state,
        nonce: pending.nonce,
        codeVerifier: pending.codeVerifier,
      });
      const profile = provider.profile
        ? await provider.profile(tokens, { ...context, fetch: client.fetch })
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

  return { begin, authenticate };
}
