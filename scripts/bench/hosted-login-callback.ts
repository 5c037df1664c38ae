/**
 * The hosted login's own time at its last step, SSO beside password: N sign-ins through an SSO button
 * against oidc-provider on loopback, timing GET /oauth2/authorize/sso/callback/{callback_id} less the time the
 * provider spent answering its token and JWKS requests, and N password logins timing POST
 * /oauth2/authorize/login (argon2id at the deployment's default cost). Both end in a code redirect; PGlite
 * in memory, over a loopback port.
 *
 * Part of `npm run bench -- oauth2-code`.
 */

import type { Env } from '../../core/config.ts';
import { openLogin, submitLogin } from '../../test/unit/oauth2-authorize/fixture.ts';
import { startSsoLogin } from '../../test/unit/oauth2-authorize/sso-fixture.ts';

const WARM_UP = 10;

/** Wall times (ms) of `n` SSO callbacks (own and with the provider) and of `n` password form posts. */
export async function measureHostedLogin(n: number, o: { env?: Env; sso?: boolean } = {}) {
  const f = await startSsoLogin({
    env: {
      PASSWORD_HANDLE_RATE_LIMIT: '1000000/1000000',
      PASSWORD_ADDRESS_RATE_LIMIT: '1000000/1000000',
      // One address opens every page here: the per-address limit is not what this measures.
      OAUTH2_AUTHORIZE_RATE_LIMIT: '1000000/1000000',
      ...o.env,
    },
  });
  const ssoOwn: number[] = [];
  const ssoTotal: number[] = [];
  const password: number[] = [];
  try {
    for (let i = 0; i < (o.sso === false ? 0 : n + WARM_UP); i++) {
      // Half the sign-ins are first ones (the person is created), half find the person again.
      const who = i % 2 ? `p${i}` : 'p0';
      f.op.state.decision = { sub: who, email: `${who}@acme.example`, email_verified: true };
      const opened = await openLogin((await f.begin()).url);
      const pressed = await f.pressButton(opened);
      const back = await f.atProvider(pressed.headers.get('location') ?? '');
      const busy = f.op.timing.busyMs;
      const t0 = performance.now();
      const res = await f.callBack(back, opened.cookie);
      await res.arrayBuffer();
      const wall = performance.now() - t0;
      if (res.status !== 303 || !res.headers.get('location')?.includes('code='))
        throw new Error(`the SSO callback answered ${res.status} ${res.headers.get('location')}`);
      if (i < WARM_UP) continue; // discovery, JWKS and JIT
      ssoTotal.push(wall);
      ssoOwn.push(wall - (f.op.timing.busyMs - busy));
    }
    const person = await f.s.person();
    for (let i = 0; i < n + WARM_UP; i++) {
      const opened = await openLogin((await f.begin()).url);
      const t0 = performance.now();
      const res = await submitLogin(f.s.url, opened, person.handle.value, person.password);
      await res.arrayBuffer();
      const wall = performance.now() - t0;
      if (res.status !== 303) throw new Error(`the password form answered ${res.status}`);
      if (i >= WARM_UP) password.push(wall);
    }
  } finally {
    await f.stop();
  }
  return { ssoOwn, ssoTotal, password };
}
