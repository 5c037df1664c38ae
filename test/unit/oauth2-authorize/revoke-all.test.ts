import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import type * as oauth from 'oauth4webapi';
import { digest } from '../../../plugins/oauth2-authorize/store/digest.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  basic,
  discover,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  postForm,
  startAuthorizeService,
} from './fixture.ts';
import { tokenChecks } from './resource-server.ts';

let s: AuthorizeService;
let check: ReturnType<typeof tokenChecks>;
let as: oauth.AuthorizationServer;
beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
  const resourceServer = await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] });
  check = tokenChecks(s, as, resourceServer);
});
afterAll(() => s.stop());

type Person = Awaited<ReturnType<AuthorizeService['person']>>;

/** A person signed in for the client: the access and refresh tokens of one grant. */
async function grant(client: MadeClient, person: Person) {
  const { code, verifier } = await obtainCode(s, client, { scope: 'openid read' }, person);
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return res.json as { access_token: string; refresh_token: string };
}

const revokeAll = (client: MadeClient, form: Record<string, string>) =>
  postForm(s, '/oauth2/tokens/revoke-all', client, form);

/** Asserts the grant's tokens are revoked: inactive at introspection and userinfo, refused at refresh. */
async function expectRevoked(client: MadeClient, tokens: { access_token: string; refresh_token: string }) {
  expect(await check.introspect(tokens.access_token)).toEqual({ active: false });
  expect(await check.introspect(tokens.refresh_token)).toEqual({ active: false });
  await expectStatus(await check.userinfo(tokens.access_token), 401);
  await expectOAuthError(await check.refresh(client, tokens.refresh_token), 400, 'invalid_grant', /revoked/);
}

async function expectActive(tokens: { access_token: string; refresh_token: string }) {
  expect(await check.introspect(tokens.access_token)).toMatchObject({ active: true });
  expect(await check.introspect(tokens.refresh_token)).toMatchObject({ active: true });
  await expectStatus(await check.userinfo(tokens.access_token), 200);
}

describe('POST /oauth2/tokens/revoke-all', () => {
  it("revokes every grant of the client for the person, and spares another client's and person's", async () => {
    const client = await s.createClient();
    const other = await s.createClient();
    const [person, bystander] = [await s.person(), await s.person()];
    const first = await grant(client, person);
    const second = await grant(client, person);
    const otherClients = await grant(other, person);
    const otherPersons = await grant(client, bystander);

    const res = await revokeAll(client, { person_id: person.personId });
    await expectStatus(res, 200);
    expect(res.text).toBe('');
    expect(res.headers.get('cache-control')).toBe('no-store');

    await expectRevoked(client, first);
    await expectRevoked(client, second);
    await expectActive(otherClients);
    await expectActive(otherPersons);
    // A later sign-in starts a new grant, which works.
    await expectActive(await grant(client, person));
  });

  it('answers no tokens to a refresh racing a revocation, and revokes the access token it signed', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    // The refresh's ID token passes the hook after its refresh token is spent and before the new tokens
    // are recorded: an RFC 7009 revocation landing there revokes the grant before it holds them.
    s.hook.answer = async () => {
      await expectStatus(
        await postForm(s, '/oauth2/tokens/revoke', client, { token: tokens.refresh_token }),
        200,
      );
      return undefined;
    };
    const refreshed = await check.refresh(client, tokens.refresh_token).finally(() => {
      s.hook.answer = () => undefined;
    });
    await expectOAuthError(refreshed, 400, 'invalid_grant', /revoked while its tokens were issued/);

    // What the refresh signed and recorded in the grant is on the deny list, as the grant's first token is.
    const rows = await s.service.ctx.storage.query<{ access_jti: string; denied: boolean }>(
      sql`select r.access_jti, exists (select 1 from oauth2_revoked_tokens v where v.jti::text = r.access_jti) as denied
          from oauth2_authorize_refresh_tokens r
          where r.family_id = (select family_id from oauth2_authorize_refresh_tokens where token_hash = ${await digest(tokens.refresh_token)})`,
    );
    expect(rows.map((r) => r.denied)).toEqual([true, true]);
    await expectRevoked(client, tokens);
  });

  it('answers no tokens to a refresh racing the deletion of its person', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    // Deleting the person deletes its grants: the refresh's new tokens would belong to no grant.
    s.hook.answer = async () => {
      await expectStatus(await s.call('DELETE', `/persons/${person.personId}`), 204);
      return undefined;
    };
    const refreshed = await check.refresh(client, tokens.refresh_token).finally(() => {
      s.hook.answer = () => undefined;
    });
    await expectOAuthError(refreshed, 400, 'invalid_grant', /revoked while its tokens were issued/);
  });

  it('revokes more grants at once than a statement has parameters (65,535)', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    // 66,000 more grants of the client for the person, each with a refresh token whose access token is
    // unexpired: every one is selected, revoked and put on the deny list.
    const storage = s.service.ctx.storage;
    await storage.query(sql`insert into oauth2_authorize_families
        (family_id, org_id, client_id, person_id, scope, methods, auth_time, created_at)
      select gen_random_uuid(), f.org_id, f.client_id, f.person_id, f.scope, f.methods, f.auth_time, f.created_at
      from oauth2_authorize_families f, generate_series(1, 66000)
      where f.family_id = (select family_id from oauth2_authorize_refresh_tokens where token_hash = ${await digest(tokens.refresh_token)})`);
    await storage.query(sql`insert into oauth2_authorize_refresh_tokens
        (token_hash, family_id, issued_at, expires_at, access_jti, access_exp)
      select md5(f.family_id::text), f.family_id, 0, ${Date.now() + 3_600_000}, gen_random_uuid()::text,
        ${Math.floor(Date.now() / 1000) + 3600}
      from oauth2_authorize_families f
      where f.client_id = ${client.client_id} and f.person_id = ${person.personId}
        and not exists (select 1 from oauth2_authorize_refresh_tokens r where r.family_id = f.family_id)`);

    await expectStatus(await revokeAll(client, { person_id: person.personId }), 200);

    const [counts] = await storage.query<{ grants: number; revoked: number; denied: number }>(sql`select
        count(*)::int as grants, count(f.revoked_at)::int as revoked,
        (select count(*)::int from oauth2_revoked_tokens v where v.client_id = ${client.client_id}) as denied
      from oauth2_authorize_families f
      where f.client_id = ${client.client_id} and f.person_id = ${person.personId}`);
    expect(counts).toEqual({ grants: 66_001, revoked: 66_001, denied: 66_001 });
    await expectRevoked(client, tokens);
  }, 120_000);

  it('keeps the grants begun after until, and revokes those begun at or before it', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const early = await grant(client, person);
    await new Promise((r) => setTimeout(r, 20));
    const between = new Date().toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const late = await grant(client, person);

    await expectStatus(await revokeAll(client, { person_id: person.personId, until: between }), 200);
    await expectRevoked(client, early);
    await expectActive(late);
  });

  it('takes an until with an offset, as RFC 3339 allows', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    const res = await revokeAll(client, { person_id: person.personId, until: '2999-01-01T00:00:00+02:00' });
    await expectStatus(res, 200);
    await expectRevoked(client, tokens);
  });

  it('answers 200 and changes nothing for a person of another organization', async () => {
    const client = await s.createClient();
    const person = await s.person();
    const tokens = await grant(client, person);
    const { organization, apiKey } = await s.service.ctx.orgs.create('Other');
    const foreign = await s.createClient({}, { orgId: organization.id, key: apiKey });

    await expectStatus(await revokeAll(foreign, { person_id: person.personId }), 200);
    await expectActive(tokens);
  });

  it('answers 200 for a person the client holds nothing for', async () => {
    const client = await s.createClient();
    await expectStatus(await revokeAll(client, { person_id: crypto.randomUUID() }), 200);
  });
});

describe('POST /oauth2/tokens/revoke-all refusals', () => {
  let client: MadeClient;
  beforeAll(async () => {
    client = await s.createClient();
  });

  it('refuses a missing person_id', async () => {
    await expectOAuthError(await revokeAll(client, {}), 400, 'invalid_request', /person_id is required/);
  });

  it('refuses a person_id that is not a UUID', async () => {
    const res = await revokeAll(client, { person_id: 'bob' });
    await expectOAuthError(res, 400, 'invalid_request', /person_id must be a UUID/);
  });

  it('refuses an until that is not an RFC 3339 date-time', async () => {
    for (const until of ['yesterday', '2024-02-30T00:00:00Z', '2024-05-01 12:00:00Z', '1714564800']) {
      const res = await revokeAll(client, { person_id: crypto.randomUUID(), until });
      await expectOAuthError(res, 400, 'invalid_request', /until must be an RFC 3339 date-time/);
    }
  });

  it('refuses a parameter given twice, naming it', async () => {
    const id = crypto.randomUUID();
    const res = await fetch(`${s.url}/oauth2/tokens/revoke-all`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: basic(client.client_id, client.client_secret!),
      },
      body: `person_id=${id}&person_id=${id}`,
    });
    const text = await res.text();
    await expectOAuthError(
      { status: res.status, json: JSON.parse(text), text },
      400,
      'invalid_request',
      /"person_id" is given more than once/,
    );
  });

  it('refuses a wrong secret with 401 and the Basic challenge', async () => {
    const res = await revokeAll({ ...client, client_secret: 'wrong' }, { person_id: crypto.randomUUID() });
    await expectOAuthError(res, 401, 'invalid_client');
    expect(res.headers.get('www-authenticate')).toStartWith('Basic ');
  });

  it('takes the credentials in the form, as the revocation endpoint does', async () => {
    const res = await fetch(`${s.url}/oauth2/tokens/revoke-all`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: client.client_id,
        client_secret: client.client_secret!,
        person_id: crypto.randomUUID(),
      }).toString(),
    });
    await expectStatus(res, 200);
  });

  it('refuses a public client, which anybody could impersonate by its client_id', async () => {
    const pub = await s.createClient({ public: true });
    const res = await revokeAll(pub, { person_id: crypto.randomUUID() });
    await expectOAuthError(res, 401, 'invalid_client', /public/);
  });
});
