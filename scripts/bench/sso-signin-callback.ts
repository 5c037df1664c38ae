/**
 * Sign-in callback latency without the provider's own time: N sign-ins through the generic OIDC
 * provider against oidc-provider on loopback over https, through the address guard (PGlite in memory); for each, the callback's wall time
 * minus the time the provider spent answering its token, UserInfo and JWKS requests.
 *
 * Part of `npm run bench -- sso`.
 */
import { oidcProvider, sso, ssoSignIn } from '../../plugins/sso/index.ts';
import { startRecordingIdentityService } from '../../test/helpers/identity-recorder.ts';
import { browseTo, startOidcOp } from '../../test/helpers/oidc-op.ts';

const APP = 'https://app.example/signed-in';
const client = {
  clientId: 'bench-app',
  clientSecret: 'bench-secret-of-the-loopback-op',
  // The retired shared callback: the provider allows the credential's own once it is created.
  redirectUri: 'https://ids.test/sso/oidc/callback',
};
/** Wall times of `n` callbacks (ms): the service's own, and with the provider's time included. */
export async function measureCallbacks(n: number): Promise<{ own: number[]; total: number[] }> {
  const op = await startOidcOp(client);
  const acme = oidcProvider({ id: 'acme' });
  const t = await startRecordingIdentityService({ extra: [sso({ providers: [acme] }), ssoSignIn()] });
  const credential = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
    body: {
      provider: 'acme',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      options: { acme: { issuer: op.issuer, authorize_scopes: ['email'] } },
    },
  });
  if (credential.status !== 201) throw new Error(`credential create failed: ${credential.text}`);
  const callback: string = credential.json.result.redirect_uri;
  op.allowRedirectUri(callback);
  await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } });

  const own: number[] = [];
  const total: number[] = [];
  for (let i = 0; i < n + 20; i++) {
    // Half the sign-ins are first ones (the person is created), half find the person again.
    op.state.decision = {
      sub: `p${i % 2 ? i : 0}`,
      email: `p${i % 2 ? i : 0}@acme.example`,
      email_verified: true,
    };
    const q = new URLSearchParams({ client_id: client.clientId, redirect_uri: APP });
    const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
    const back = await browseTo(started.headers.get('location') ?? '', callback);
    const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
    const busy = op.timing.busyMs;
    const t0 = performance.now();
    const res = await t.call('GET', `${back.pathname}${back.search}`, {
      orgId: null,
      key: null,
      headers: { cookie },
    });
    const wall = performance.now() - t0;
    if (!res.headers.get('location')?.includes('token='))
      throw new Error(`sign-in failed: ${res.headers.get('location')}`);
    if (i < 20) continue; // warm-up: discovery, JWKS and JIT
    total.push(wall);
    own.push(wall - (op.timing.busyMs - busy));
  }
  await t.stop();
  await op.stop();
  return { own, total };
}
