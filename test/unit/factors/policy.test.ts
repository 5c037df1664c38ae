import { afterEach, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type FactorsService, factorsService } from './fixture.ts';

let svc: FactorsService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const PATH = '/organizations/authentication-policy';
const REQUIRED = {
  first_factors: ['password', 'webauthn'],
  second_factor: 'required',
  second_factors: ['totp'],
};

describe('GET, PUT /organizations/authentication-policy', () => {
  it('answers the default policy of an organization that never set one', async () => {
    svc = await factorsService();
    const res = await svc.call('GET', PATH);
    await expectStatus(res, 200);
    expect(res.json.result).toEqual({
      first_factors: ['password', 'webauthn', 'otp_via_email', 'email_link', 'oidc'],
      second_factor: 'off',
      second_factors: ['totp', 'webauthn', 'otp_via_email'],
      webauthn: { rp_id: 'ids.test', rp_name: 'ids.test', origins: ['https://ids.test'] },
    });
  });

  it('stores the policy set and answers it, with the defaults of the members left out', async () => {
    svc = await factorsService();
    const set = await svc.setPolicy({ first_factors: ['password'], second_factor: 'optional' });
    expect(set).toMatchObject({
      first_factors: ['password'],
      second_factor: 'optional',
      second_factors: ['totp', 'webauthn', 'otp_via_email'],
    });
    const webauthn = { rp_id: 'example.com', rp_name: 'Example', origins: ['https://login.example.com'] };
    await svc.setPolicy({ ...REQUIRED, webauthn });
    const read = await svc.call('GET', PATH);
    await expectStatus(read, 200);
    expect(read.json.result).toEqual({ ...REQUIRED, webauthn });
    // The capability other plugins read says the same.
    expect(
      await svc.service.ctx
        .capability((await import('../../../core/factors/policy.ts')).authenticationPolicies)
        ?.get(svc.org.id),
    ).toEqual({
      firstFactors: ['password', 'webauthn'],
      secondFactor: 'required',
      secondFactors: ['totp'],
      webauthn: { rpId: 'example.com', rpName: 'Example', origins: ['https://login.example.com'] },
    });
  });

  it('refuses invalid bodies with a 400 naming the member and its rule, and keeps the policy', async () => {
    svc = await factorsService();
    const cases: Array<[unknown, string]> = [
      [
        { first_factors: [], second_factor: 'off' },
        'body.first_factors: must name at least one first factor',
      ],
      [{ first_factors: ['sms'], second_factor: 'off' }, 'body.first_factors[0]: must be one of password'],
      [
        { first_factors: ['password', 'password'], second_factor: 'off' },
        'body.first_factors: must not name a factor twice',
      ],
      [
        { first_factors: ['password'], second_factor: 'always' },
        'body.second_factor: must be one of off, optional, required',
      ],
      [{ first_factors: ['password'] }, 'body.second_factor: is required'],
      [
        { ...REQUIRED, second_factors: [] },
        'body.second_factors: must name at least one second factor when second_factor is required',
      ],
      [
        { ...REQUIRED, second_factors: ['password'] },
        'body.second_factors[0]: must be one of totp, webauthn, otp_via_email',
      ],
      [{ ...REQUIRED, second_factor_mode: 'on' }, 'body.second_factor_mode: is not a member of this body'],
      [
        {
          ...REQUIRED,
          webauthn: { rp_id: 'example.com:443', rp_name: 'x', origins: ['https://example.com'] },
        },
        'body.webauthn.rp_id: must be a lower-case domain name',
      ],
      [
        {
          ...REQUIRED,
          webauthn: { rp_id: 'example.com', rp_name: 'x', origins: ['https://example.com/login'] },
        },
        'body.webauthn.origins[0]: must be an origin',
      ],
      [
        { ...REQUIRED, webauthn: { rp_id: 'example.com', rp_name: 'x', origins: ['http://example.com'] } },
        'body.webauthn.origins[0]: must be an origin',
      ],
      [
        {
          ...REQUIRED,
          webauthn: {
            rp_id: 'example.com',
            rp_name: 'x',
            origins: ['https://example.com', 'https://evil.test'],
          },
        },
        'body.webauthn.origins[1]: the host evil.test must be rp_id (example.com) or a name under it',
      ],
      [
        { ...REQUIRED, webauthn: { rp_id: 'example.com', rp_name: '', origins: ['https://example.com'] } },
        'body.webauthn.rp_name: must not be empty',
      ],
      [[REQUIRED], 'array'],
    ];
    for (const [body, message] of cases) {
      const res = await svc.call('PUT', PATH, { body });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
    expect((await svc.call('GET', PATH)).json.result.second_factor).toBe('off');
  });

  it("keeps each organization's policy its own and refuses another organization's key", async () => {
    svc = await factorsService();
    const hostile = await svc.otherOrg();
    await svc.setPolicy(REQUIRED);
    // The hostile organization sets its own policy with its key: ours stays as it was.
    await svc.setPolicy({ first_factors: ['oidc'], second_factor: 'off' }, hostile);
    expect((await svc.call('GET', PATH)).json.result).toMatchObject(REQUIRED);
    expect((await svc.call('GET', PATH, hostile)).json.result.first_factors).toEqual(['oidc']);
    // Its key, naming our organization, reads and writes nothing of ours.
    const read = await svc.call('GET', PATH, { key: hostile.key });
    await expectStatus(read, 403);
    const write = await svc.call('PUT', PATH, {
      key: hostile.key,
      body: { first_factors: ['oidc'], second_factor: 'off' },
    });
    await expectStatus(write, 403);
    await expectStatus(await svc.call('GET', PATH, { key: null }), 401);
    expect((await svc.call('GET', PATH)).json.result).toMatchObject(REQUIRED);
  });
});
