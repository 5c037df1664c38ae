// The hosted login's SSO buttons follow the organization's authentication policy (`oidc` among its
// first factors): none on the page, and every SSO route of the hosted login refused, when it is left out.
import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { openLogin } from './fixture.ts';
import { opClient, type SsoLogin, startSsoLogin } from './sso-fixture.ts';

let f: SsoLogin;
beforeAll(async () => {
  f = await startSsoLogin();
});
afterAll(() => f.stop());

async function setPolicy(firstFactors: string[]) {
  const res = await f.s.call('PUT', '/organizations/authentication-policy', {
    body: { first_factors: firstFactors, second_factor: 'optional', second_factors: ['totp'] },
  });
  await expectStatus(res, 200);
}

const BUTTON = `name="credential" value="${opClient.clientId}"`;
/** The provider signs in a verified account of this name. */
const account = (name: string) => ({
  sub: `${name}-at-acme`,
  email: `${name}@acme.example`,
  email_verified: true,
});

describe('SSO on the hosted login under the authentication policy', () => {
  it('offers the button and signs in while the policy allows oidc', async () => {
    await setPolicy(['password', 'oidc']);
    f.op.state.decision = account('erin');
    const a = await f.begin();
    const opened = await openLogin(a.url);
    expect(opened.html).toContain(BUTTON);
    const { res } = await f.signIn(a);
    await expectStatus(res, 303);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('code'), location.href).toBeTruthy();
  });

  it('without oidc: no button, the button and idp refused, nothing sent to the provider', async () => {
    await setPolicy(['password']);
    try {
      const a = await f.begin();
      const opened = await openLogin(a.url);
      expect(opened.html).not.toContain(BUTTON);
      expect(opened.html).toContain('name="password"');
      const pressed = await f.pressButton(opened);
      await expectStatus(pressed.clone(), 400);
      expect(pressed.headers.get('location')).toBeNull();
      expect(await pressed.text()).toContain('This sign-in provider is not offered here.');

      const direct = await fetch((await f.begin({ idp: opClient.clientId })).url, { redirect: 'manual' });
      await expectStatus(direct.clone(), 400);
      expect(await direct.text()).toContain('is not available');
    } finally {
      await setPolicy(['password', 'oidc']);
    }
  });

  it("refuses the provider's answer when the policy left oidc out meanwhile", async () => {
    await setPolicy(['password', 'oidc']);
    f.op.state.decision = account('fred');
    try {
      const a = await f.begin();
      const opened = await openLogin(a.url);
      const pressed = await f.pressButton(opened);
      await expectStatus(pressed, 303);
      const back = await f.atProvider(pressed.headers.get('location')!);
      await setPolicy(['password']);
      const res = await f.callBack(back, opened.cookie);
      expect(res.headers.get('location')).toBeNull();
      await expectStatus(res.clone(), 400);
      expect(await res.text()).toContain('single sign-on is not offered by this organization');
    } finally {
      await setPolicy(['password', 'oidc']);
    }
  });
});
