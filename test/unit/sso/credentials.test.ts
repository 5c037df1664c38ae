import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { PATH, startSsoService } from './fixture.ts';

let t: Awaited<ReturnType<typeof startSsoService>>;
beforeAll(async () => {
  t = await startSsoService();
});
afterAll(() => t.stop());

const create = (body: Record<string, unknown>) => t.call('POST', PATH, { body });
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const OWN_CALLBACK = new RegExp(`^https://ids\\.test/sso/oidc/callback/${UUID}$`);
const OWN_HOSTED_CALLBACK = new RegExp(`^https://ids\\.test/oauth2/authorize/sso/callback/${UUID}$`);

describe('SSO provider credentials', () => {
  it('creates with 201, reads back every field and the effective scopes, never the secret', async () => {
    const res = await create({
      client_id: 'crud-google',
      client_secret: 'crud-google-secret',
      provider: 'google',
      label: 'Staff',
      external_cred_id: 'ext-1',
      enable_in_service_oidc_authz_server: true,
      options: { google: { authorize_scopes: ['https://www.googleapis.com/auth/calendar.readonly'] } },
    });
    await expectStatus(res, 201);
    const expected = {
      client_id: 'crud-google',
      provider: 'google',
      label: 'Staff',
      external_cred_id: 'ext-1',
      enable_in_service_oidc_authz_server: true,
      options: { google: { authorize_scopes: ['https://www.googleapis.com/auth/calendar.readonly'] } },
      effective_scopes: ['https://www.googleapis.com/auth/calendar.readonly', 'openid', 'email', 'profile'],
      redirect_uri: expect.stringMatching(OWN_CALLBACK),
      hosted_login_redirect_uri: expect.stringMatching(OWN_HOSTED_CALLBACK),
    };
    expect(res.json.result).toEqual(expected);
    const id = (uri: string) => uri.split('/').at(-1);
    expect(id(res.json.result.hosted_login_redirect_uri)).toBe(id(res.json.result.redirect_uri));
    const got = await t.call('GET', `${PATH}/crud-google`);
    await expectStatus(got, 200);
    expect(got.json.result).toEqual(expected);
    expect(got.text).not.toContain('crud-google-secret');
  });

  it('gives each credential redirect URIs of its own: stable, and not shared by a same client ID elsewhere', async () => {
    const body = { client_id: 'same-everywhere', client_secret: 's', provider: 'bitbucket' };
    const mine = await create(body);
    await expectStatus(mine, 201);
    const theirs = await t.call('POST', PATH, { body, orgId: t.other.orgId, key: t.other.key });
    await expectStatus(theirs, 201);
    const other = await create({ ...body, client_id: 'another-one' });
    await expectStatus(other, 201);
    const uris = [mine, theirs, other].map((r) => r.json.result.redirect_uri);
    expect(new Set(uris).size).toBe(3);
    const changed = await t.call('PATCH', `${PATH}/same-everywhere`, { body: { label: 'renamed' } });
    await expectStatus(changed, 200);
    expect(changed.json.result.redirect_uri).toBe(uris[0]);
    const listed = await t.call('GET', PATH);
    await expectStatus(listed, 200);
    expect(
      listed.json.result.find((c: { client_id: string }) => c.client_id === 'same-everywhere').redirect_uri,
    ).toBe(uris[0]);
    const gone = await t.call('DELETE', `${PATH}/same-everywhere`, {
      orgId: t.other.orgId,
      key: t.other.key,
    });
    await expectStatus(gone, 200);
  });

  it('shows the defaults united with the always-requested scopes when none are configured', async () => {
    const res = await create({ client_id: 'crud-github', client_secret: 's', provider: 'github' });
    await expectStatus(res, 201);
    expect(res.json.result).toMatchObject({
      label: '',
      external_cred_id: '',
      enable_in_service_oidc_authz_server: false,
    });
    expect(res.json.result.effective_scopes).toEqual(['read:user', 'user:email']);
    const more = await t.call('PATCH', `${PATH}/crud-github`, {
      body: { options: { github: { authorize_scopes: ['repo', 'user:email'] } } },
    });
    await expectStatus(more, 200);
    expect(more.json.result.effective_scopes).toEqual(['repo', 'user:email', 'read:user']);
  });

  it('lists the organization credentials, filtered by ?oauth_provider=', async () => {
    await expectStatus(
      await create({ client_id: 'list-gitlab', client_secret: 's', provider: 'gitlab' }),
      201,
    );
    const all = await t.call('GET', PATH);
    await expectStatus(all, 200);
    expect(all.json.result.map((c: { client_id: string }) => c.client_id)).toContain('list-gitlab');
    const only = await t.call('GET', `${PATH}?oauth_provider=gitlab`);
    await expectStatus(only, 200);
    expect(only.json.result.map((c: { client_id: string }) => c.client_id)).toEqual(['list-gitlab']);
    const unknown = await t.call('GET', `${PATH}?oauth_provider=myspace`);
    await expectStatus(unknown, 400);
    expect(unknown.text).toContain('query.oauth_provider');
  });

  it('modifies label, external_cred_id, the flag and the secret, keeping what is left out', async () => {
    await expectStatus(
      await create({ client_id: 'patch-fb', client_secret: 'old', provider: 'facebook', label: 'a' }),
      201,
    );
    const res = await t.call('PATCH', `${PATH}/patch-fb`, {
      body: { client_secret: 'new', external_cred_id: 'x', enable_in_service_oidc_authz_server: true },
    });
    await expectStatus(res, 200);
    expect(res.json.result).toMatchObject({
      label: 'a',
      external_cred_id: 'x',
      enable_in_service_oidc_authz_server: true,
    });
    const { ssoCredentials } = await import('../../../core/capabilities/sso-credentials.ts');
    const opened = await t.service.ctx.capability(ssoCredentials)?.open(t.org.id, 'patch-fb');
    expect(opened?.clientSecret).toBe('new');
  });

  it('deletes with a 200 envelope, then the credential is 404', async () => {
    await expectStatus(await create({ client_id: 'del-line', client_secret: 's', provider: 'line' }), 201);
    const del = await t.call('DELETE', `${PATH}/del-line`);
    await expectStatus(del, 200);
    expect(del.json).toEqual({});
    await expectStatus(await t.call('GET', `${PATH}/del-line`), 404);
    await expectStatus(await t.call('DELETE', `${PATH}/del-line`), 404);
  });

  it('refuses an unknown provider, naming the field and the accepted list', async () => {
    const res = await create({ client_id: 'x', client_secret: 's', provider: 'myspace' });
    await expectStatus(res, 400);
    expect(res.text).toContain('body.provider');
    expect(res.text).toContain('google, github, bitbucket, gitlab, facebook, line, azuread, okta, apple');
  });

  it('refuses a duplicate client ID with 409, and of concurrent creates exactly one is 201', async () => {
    await expectStatus(await create({ client_id: 'dup', client_secret: 's', provider: 'google' }), 201);
    const again = await create({ client_id: 'dup', client_secret: 's', provider: 'google' });
    await expectStatus(again, 409);
    expect(again.text).toContain('body.client_id');
    const racing = await Promise.all(
      Array.from({ length: 8 }, () =>
        create({ client_id: 'race', client_secret: 's', provider: 'bitbucket' }),
      ),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409, 409, 409]);
  });

  it('accepts the consistency headers on writes and refuses a bad one', async () => {
    const c = t.names.consistency;
    const ok = await t.call('POST', PATH, {
      body: { client_id: 'cons', client_secret: 's', provider: 'google' },
      headers: { [c]: 'all_regions' },
    });
    await expectStatus(ok, 201);
    const bad = await t.call('PATCH', `${PATH}/cons`, {
      body: { label: 'x' },
      headers: { [c]: 'everywhere' },
    });
    await expectStatus(bad, 400);
  });

  it("never shows nor touches another organization's credential: 404 on every route", async () => {
    await expectStatus(await create({ client_id: 'mine', client_secret: 's', provider: 'google' }), 201);
    const as = { orgId: t.other.orgId, key: t.other.key };
    await expectStatus(await t.call('GET', `${PATH}/mine`, as), 404);
    await expectStatus(await t.call('PATCH', `${PATH}/mine`, { ...as, body: { label: 'stolen' } }), 404);
    await expectStatus(await t.call('DELETE', `${PATH}/mine`, as), 404);
    const list = await t.call('GET', PATH, as);
    await expectStatus(list, 200);
    expect(list.json.result).toEqual([]);
    // The other organization may use the same client ID for its own credential.
    await expectStatus(
      await t.call('POST', PATH, {
        ...as,
        body: { client_id: 'mine', client_secret: 't', provider: 'google' },
      }),
      201,
    );
    const still = await t.call('GET', `${PATH}/mine`);
    await expectStatus(still, 200);
    expect(still.json.result.label).toBe('');
    // Another organization's API key for this organization: refused.
    await expectStatus(await t.call('GET', `${PATH}/mine`, { key: t.other.key }), 403);
  });
});
