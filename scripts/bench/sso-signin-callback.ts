/**
 * Sign-in callback latency without the provider's own time: N sign-ins through the generic OIDC
 * provider against oidc-provider on loopback (PGlite in memory); for each, the callback's wall time
 * minus the time the provider spent answering its token, UserInfo and JWKS requests.
 *
 *   bun scripts/bench/sso-signin-callback.ts [N=200]
 */
import { oidcProvider } from '../../plugins/sso/providers/oidc.ts';
import { ssoSignIn } from '../../plugins/sso/signin/index.ts';
import { startRecordingIdentityService } from '../../test/helpers/identity-recorder.ts';
import { browseTo, startOidcOp } from '../../test/helpers/oidc-op.ts';
import { ssoCredentialsStub } from '../../test/helpers/sso-credentials-stub.ts';

const N = Number(process.argv[2] ?? 200);
const CALLBACK = 'https://ids.test/sso/oidc/callback';
const APP = 'https://app.example/signed-in';
const client = {
  clientId: 'bench-app',
  clientSecret: 'bench-secret-of-the-loopback-op',
  redirectUri: CALLBACK,
};
const stub = ssoCredentialsStub([oidcProvider({ id: 'acme', allowLoopbackIssuer: true })]);
const op = await startOidcOp(client);
const t = await startRecordingIdentityService({ extra: [stub.plugin, ssoSignIn()] });
stub.add(t.org.id, {
  provider: 'acme',
  clientId: client.clientId,
  clientSecret: client.clientSecret,
  options: { issuer: op.issuer },
  effectiveScopes: ['openid', 'email'],
});
await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } });

const own: number[] = [];
const total: number[] = [];
for (let i = 0; i < N + 20; i++) {
  // Half the sign-ins are first ones (the person is created), half find the person again.
  op.state.decision = {
    sub: `p${i % 2 ? i : 0}`,
    email: `p${i % 2 ? i : 0}@acme.example`,
    email_verified: true,
  };
  const q = new URLSearchParams({ client_id: client.clientId, redirect_uri: APP });
  const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
  const back = await browseTo(started.headers.get('location') ?? '', CALLBACK);
  const busy = op.timing.busyMs;
  const t0 = performance.now();
  const res = await t.call('GET', `${back.pathname}${back.search}`, { orgId: null, key: null });
  const wall = performance.now() - t0;
  if (!res.headers.get('location')?.includes('token='))
    throw new Error(`sign-in failed: ${res.headers.get('location')}`);
  if (i < 20) continue; // warm-up: discovery, JWKS and JIT
  total.push(wall);
  own.push(wall - (op.timing.busyMs - busy));
}
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)]?.toFixed(2);
console.log(
  `${N} callbacks: own p50 ${pct(own, 0.5)} ms, p99 ${pct(own, 0.99)} ms; with the provider p50 ${pct(total, 0.5)} ms, p99 ${pct(total, 0.99)} ms`,
);
await t.stop();
await op.stop();
