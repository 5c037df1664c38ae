import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { expectStatus } from '../../helpers/expect-status.ts';
import { appleOptions, PATH, pkcs8Pem, startSsoService } from './fixture.ts';

let t: Awaited<ReturnType<typeof startSsoService>>;
beforeAll(async () => {
  t = await startSsoService();
});
afterAll(() => t.stop());

let n = 0;
const create = (provider: string, options?: unknown) =>
  t.call('POST', PATH, {
    body: {
      client_id: `c${++n}`,
      client_secret: 's',
      provider,
      ...(options !== undefined ? { options } : {}),
    },
  });

/** The request is a 400 whose message names every fragment. */
async function refused(res: Awaited<ReturnType<typeof create>>, ...fragments: string[]) {
  await expectStatus(res, 400);
  for (const f of fragments) expect(res.json.errors[0].message).toContain(f);
}

describe('SSO provider options', () => {
  it("refuses options of another provider than the credential's, naming the option", async () => {
    await refused(
      await create('google', { okta: { organization_url: 'https://a.okta.com' } }),
      'options.okta',
      'google',
    );
    await refused(await create('google', { myspace: {} }), 'options.myspace');
    await refused(await create('google', { google: { tenant: 'common' } }), 'options.google.tenant');
  });

  it('checks authorize_scopes', async () => {
    await refused(
      await create('github', { github: { authorize_scopes: 'repo' } }),
      'options.github.authorize_scopes',
    );
    await refused(
      await create('github', { github: { authorize_scopes: ['a b'] } }),
      'options.github.authorize_scopes',
    );
  });

  it('azuread.tenant: a GUID, a domain, common, organizations, consumers, and consumer as the spec spells it', async () => {
    for (const tenant of [
      '9188040d-6c67-4c5b-b112-36a304b66dad',
      'contoso.onmicrosoft.com',
      'common',
      'organizations',
      'consumers',
    ]) {
      const res = await create('azuread', { azuread: { tenant } });
      await expectStatus(res, 201);
      expect(res.json.result.options.azuread.tenant).toBe(tenant);
    }
    const consumer = await create('azuread', { azuread: { tenant: 'consumer' } });
    await expectStatus(consumer, 201);
    expect(consumer.json.result.options.azuread.tenant).toBe('consumers');
    const unset = await create('azuread');
    await expectStatus(unset, 201);
    expect(unset.json.result.options.azuread.tenant).toBe('common');
    await refused(
      await create('azuread', { azuread: { tenant: 'not a tenant' } }),
      'options.azuread.tenant',
      'GUID',
    );
  });

  it('okta.organization_url: required, an https URL', async () => {
    await refused(await create('okta'), 'options.okta.organization_url', 'required');
    await refused(
      await create('okta', { okta: { organization_url: 'http://a.okta.com' } }),
      'options.okta.organization_url',
      'https',
    );
    const res = await create('okta', { okta: { organization_url: 'https://acme.okta.com/' } });
    await expectStatus(res, 201);
    expect(res.json.result.options.okta.organization_url).toBe('https://acme.okta.com');
  });

  it('apple: private_key must be PKCS8 P-256, team_id and key_id 10 characters, secret_lifetime 300 s to 15,777,000 s', async () => {
    const { options } = await appleOptions();
    const bad = async (extra: Record<string, unknown>, ...fragments: string[]) =>
      refused(await create('apple', { apple: { ...options, ...extra } }), ...fragments);
    await bad({ private_key: (await pkcs8Pem('P-384')).pem }, 'options.apple.private_key', 'P-256');
    await bad({ private_key: (await pkcs8Pem('RSA')).pem }, 'options.apple.private_key');
    await bad({ private_key: 'not a key' }, 'options.apple.private_key');
    await bad({ team_id: 'SHORT' }, 'options.apple.team_id', '10-character');
    await bad({ key_id: 'ELEVENCHARS' }, 'options.apple.key_id', '10-character');
    await bad({ secret_lifetime: '4m' }, 'options.apple.secret_lifetime', '300 seconds');
    await bad({ secret_lifetime: '4383h' }, 'options.apple.secret_lifetime', '15,777,000');
    await bad({ secret_lifetime: '30d' }, 'options.apple.secret_lifetime', 'duration');
    await refused(await create('apple'), 'options.apple.private_key', 'options.apple.team_id');
    for (const lifetime of ['5m', '24h', '4382h', '1h30m']) {
      await expectStatus(await create('apple', { apple: { ...options, secret_lifetime: lifetime } }), 201);
    }
    const res = await create('apple', { apple: options });
    await expectStatus(res, 201);
    expect(res.json.result.options.apple).toEqual({
      team_id: 'TEAM012345',
      key_id: 'KEY0123456',
      secret_lifetime: '720h',
    });
    expect(res.json.result.effective_scopes).toEqual(['openid', 'email', 'name']);
  });

  it('keeps the stored private key when a PATCH of apple options leaves it out', async () => {
    const { options, pem } = await appleOptions();
    await expectStatus(
      await t.call('POST', PATH, {
        body: { client_id: 'keep', client_secret: 's', provider: 'apple', options: { apple: options } },
      }),
      201,
    );
    const res = await t.call('PATCH', `${PATH}/keep`, {
      body: { options: { apple: { team_id: 'TEAM999999', key_id: 'KEY0123456' } } },
    });
    await expectStatus(res, 200);
    expect(res.json.result.options.apple.team_id).toBe('TEAM999999');
    expect(res.text).not.toContain('PRIVATE KEY');
    const { ssoCredentials } = await import('../../../core/capabilities/sso-credentials.ts');
    const opened = await t.service.ctx.capability(ssoCredentials)?.open(t.org.id, 'keep');
    expect(opened?.options).toMatchObject({ private_key: pem, team_id: 'TEAM999999' });
  });

  it('stores no client secret nor private key in plaintext in any column', async () => {
    const { options, pem } = await appleOptions();
    const secret = 'plain-client-secret-0123456789';
    await expectStatus(
      await t.call('POST', PATH, {
        body: { client_id: 'sealed', client_secret: secret, provider: 'apple', options: { apple: options } },
      }),
      201,
    );
    const rows = await t.service.ctx.storage.query<Record<string, unknown>>(
      sql`select * from sso_credentials`,
    );
    const dump = JSON.stringify(rows);
    expect(dump).toContain('sealed');
    expect(dump).not.toContain(secret);
    expect(dump).not.toContain('PRIVATE KEY');
    // No 40-character run of the key's base64 body either.
    const body = pem.split('\n').find((line) => line.length === 64)!;
    expect(dump).not.toContain(body.slice(0, 40));
  });
});
