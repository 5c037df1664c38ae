import * as oauth from 'oauth4webapi';
import type { Env } from '../../../core/config.ts';
import type { ServiceDefinition } from '../../../core/plugin.ts';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { browseTo, startOidcOp } from '../../helpers/oidc-op.ts';
import { discover, openLogin, opts, startAuthorizeService } from './fixture.ts';

export const CREDENTIALS = '/organizations/sso/oidc/provider-credentials';
/** The loopback provider's client: the organization's generic OIDC credential. */
export const opClient = { clientId: 'acme-app', clientSecret: 'a-client-secret-of-the-loopback-op' };
const acme = oidcProvider({ id: 'acme', displayName: 'Acme ID' });

/**
 * The hosted login with SSO: the authorization service with sso and ssoSignIn, a real OpenID provider
 * (oidc-provider) on loopback registered as the credential `acme-app` (label "Acme Staff", enabled for
 * the authorization server), an OAuth client, and the application's real loopback callback.
 */
export async function startSsoLogin(
  o: { env?: Env; plugins?: ServiceDefinition['plugins']; recordEvents?: boolean } = {},
) {
  const landed: URL[] = [];
  const app = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      landed.push(new URL(request.url));
      return new Response('<!doctype html><title>App</title><p>signed in</p>', {
        headers: { 'content-type': 'text/html' },
      });
    },
  });
  const redirectUri = `http://127.0.0.1:${app.port}/callback`;
  const s = await startAuthorizeService({
    plugins: [sso({ providers: [acme] }), ssoSignIn(), ...(o.plugins ?? [])],
    ...(o.env ? { env: o.env } : {}),
    ...(o.recordEvents !== undefined ? { recordEvents: o.recordEvents } : {}),
  });
  // The retired shared callback: the provider allows the credential's own once it is created.
  const op = await startOidcOp(
    { ...opClient, redirectUri: `${s.url}/oauth2/authorize/sso/callback` },
    { record: true },
  );
  const client = await s.createClient({ redirect_uris: [redirectUri] });
  const made = await s.call('POST', CREDENTIALS, {
    body: {
      provider: 'acme',
      client_id: opClient.clientId,
      client_secret: opClient.clientSecret,
      label: 'Acme Staff',
      enable_in_service_oidc_authz_server: true,
      options: { acme: { issuer: op.issuer, authorize_scopes: ['email'] } },
    },
  });
  await expectStatus(made, 201);
  /** The credential's own redirect URI in the hosted login, as its API shows it. */
  const callbackUrl: string = made.json.result.hosted_login_redirect_uri;
  /** The same credential's redirect URI for SSO sign-in (GET /sso/oidc/start). */
  const signInCallbackUrl: string = made.json.result.redirect_uri;
  op.allowRedirectUri(callbackUrl);

  /** The application's authorization request, as oauth4webapi's caller builds it. */
  async function begin(extra: Record<string, string> = {}) {
    const as = await discover(s);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: client.client_id,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'openid email read',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    }).toString();
    return { as, url, verifier, state, nonce };
  }

  /** The application's callback: validates the response and exchanges the code with oauth4webapi. */
  async function redeem(a: Awaited<ReturnType<typeof begin>>, callback: URL) {
    const c = { client_id: client.client_id };
    const params = oauth.validateAuthResponse(a.as, c, callback, a.state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      a.as,
      c,
      await oauth.authorizationCodeGrantRequest(
        a.as,
        c,
        oauth.ClientSecretBasic(client.client_secret!),
        params,
        redirectUri,
        a.verifier,
        opts,
      ),
      { expectedNonce: a.nonce, requireIdToken: true },
    );
    return { tokens, claims: oauth.getValidatedIdTokenClaims(tokens)! };
  }

  /** Posts an SSO button of the page as the browser does (its cookie, its Origin). */
  const pressButton = (opened: { cookie: string; csrfToken: string }, credential = opClient.clientId) =>
    fetch(`${s.url}/oauth2/authorize/sso`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        cookie: opened.cookie,
        origin: s.url,
      },
      body: new URLSearchParams({ csrf_token: opened.csrfToken, credential }).toString(),
    });

  /** Through the provider to the service's callback URL (not yet called). */
  const atProvider = (location: string) => browseTo(location, callbackUrl);

  /** Calls the service's callback as the browser does, with its cookie. */
  const callBack = (back: URL, cookie: string) =>
    fetch(back, { redirect: 'manual', headers: cookie ? { cookie } : {} });

  /**
   * The whole login by HTTP: the page, the button, the provider, the callback; the callback's answer,
   * the provider's redirect back and the browser's cookie.
   */
  async function signIn(a: Awaited<ReturnType<typeof begin>>, credential = opClient.clientId) {
    const opened = await openLogin(a.url);
    const pressed = await pressButton(opened, credential);
    await expectStatus(pressed, 303);
    const back = await atProvider(pressed.headers.get('location')!);
    const res = await callBack(back, opened.cookie);
    return { res, back, cookie: opened.cookie, html: await res.clone().text() };
  }

  return {
    s,
    op,
    client,
    redirectUri,
    callbackUrl,
    signInCallbackUrl,
    landed,
    begin,
    redeem,
    pressButton,
    atProvider,
    callBack,
    signIn,
    async stop() {
      await s.stop();
      await op.stop();
      app.stop(true);
    },
  };
}

export type SsoLogin = Awaited<ReturnType<typeof startSsoLogin>>;
