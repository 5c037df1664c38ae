// The hosted login's second step, through the factor contract (core/factors): a plugin that asks every
// person named in `enrolled` for a TOTP code and accepts `good` as it, as a factor plugin would.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { personCredentials } from '../../../../core/factors/credentials.ts';
import { checkSecondFactor } from '../../../../core/factors/second-factor.ts';
import { definePlugin } from '../../../../core/plugin.ts';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { type AuthorizeService, exchange, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

const enrolled = new Set<string>();
const good = '246810';
const checked: string[] = [];

// The real factors plugin (among the identity plugins) asks the second step; this probe is the TOTP
// plugin's part of it: enrolled persons' credentials and the check of their codes.
const secondFactorProbe = definePlugin({
  id: 'second-factor-probe',
  setup: () => ({
    attach: [
      personCredentials.attach({
        run: ({ personId }) =>
          enrolled.has(personId)
            ? [
                {
                  credentialId: `probe-${personId}`,
                  type: 'totp',
                  createdAt: 0,
                  firstFactor: false,
                  secondFactor: true,
                },
              ]
            : [],
      }),
      checkSecondFactor.attach({
        match: (i) => i.method === 'totp',
        run: (i) => {
          checked.push(String(i.input.code));
          return i.input.code === good
            ? {
                ok: true,
                authentication: {
                  handle: { type: '', value: '' },
                  method: 'totp',
                  timestamp: new Date().toISOString(),
                },
              }
            : { ok: false, reason: 'invalid', detail: 'the code does not match' };
        },
      }),
    ],
  }),
});

let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService({ plugins: [secondFactorProbe] });
  client = await s.createClient();
  await setPolicy(['password', 'webauthn']);
});

/** The organization's authentication policy: these first factors, a TOTP asked of the enrolled. */
async function setPolicy(firstFactors: string[]) {
  const res = await s.call('PUT', '/organizations/authentication-policy', {
    body: { first_factors: firstFactors, second_factor: 'optional', second_factors: ['totp'] },
  });
  await expectStatus(res, 200);
}
afterAll(() => s.stop());

describe('the second step of the hosted login', () => {
  test('asks an enrolled person for a code, refuses a wrong one, then signs in with both factors', async () => {
    const who = await s.person();
    enrolled.add(who.personId);
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    await expectStatus(first.res.clone(), 200);
    expect(jar.session()).toBeUndefined();
    const csrf = await csrfOf(first.res);

    const wrong = await postPage(jar, s, '/oauth2/authorize/second-factor', {
      csrf_token: csrf,
      method: 'totp',
      code: '000000',
    });
    await expectStatus(wrong, 401);
    const failed = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed.at(-1)).toMatchObject({ failed_authn_method: 'totp', authenticated_methods: ['password'] });

    const right = await postPage(jar, s, '/oauth2/authorize/second-factor', {
      csrf_token: csrf,
      method: 'totp',
      code: good,
    });
    const params = await callbackOf(right);
    expect(jar.session()).toBeDefined();
    const tokens = await exchange(s, client, params.get('code')!, first.verifier);
    expect(tokens.status, tokens.text).toBe(200);
    const id = decodeJwt(String(tokens.json.id_token));
    expect(id.amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(id.authenticated_methods).toEqual(['password', 'totp']);
    const succeeded = await s.eventsNamed('AuthenticationSucceeded_v1');
    expect(succeeded.at(-1)).toMatchObject({
      success_authn_method: 'totp',
      authenticated_methods: ['password', 'totp'],
    });
    expect(checked).toEqual(['000000', good]);

    const again = await postPage(jar, s, '/oauth2/authorize/second-factor', {
      csrf_token: csrf,
      method: 'totp',
      code: good,
    });
    await expectStatus(again, 400);
  });

  test('a person without a second factor signs in with the first alone', async () => {
    const jar = new CookieJar();
    const { res } = await signIn(jar, s, client.client_id, await s.person());
    expect((await callbackOf(res)).get('code')).toBeTruthy();
  });

  test('the second step answered from another browser is refused', async () => {
    const who = await s.person();
    enrolled.add(who.personId);
    const jar = new CookieJar();
    const first = await signIn(jar, s, client.client_id, who);
    const csrf = await csrfOf(first.res);
    const stranger = new CookieJar();
    const res = await postPage(stranger, s, '/oauth2/authorize/second-factor', {
      csrf_token: csrf,
      method: 'totp',
      code: good,
    });
    await expectStatus(res, 403);
  });

  test('a password is refused, unchecked, when the policy leaves it out of the first factors', async () => {
    await setPolicy(['webauthn']);
    try {
      const jar = new CookieJar();
      const { res } = await signIn(jar, s, client.client_id, await s.person());
      await expectStatus(res.clone(), 403);
      expect(await res.text()).toContain('Signing in with a password is not offered here.');
    } finally {
      await setPolicy(['password', 'webauthn']);
    }
  });
});
