import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { createPgliteStorage } from '../../../adapters/pglite/index.ts';
import { oauth2Server } from '../../../core/capabilities/oauth2-server.ts';
import { migrate } from '../../../core/db/migrate.ts';
import { migrations } from '../../../plugins/oauth2/migrations/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import { CLIENTS, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
let other: CallOptions;
beforeAll(async () => {
  t = await startOAuth2Service();
  const { organization, apiKey } = await t.service.ctx.orgs.create('Other');
  other = { orgId: organization.id, key: apiKey };
});
afterAll(() => t.stop());

/** The client as the token and authorization endpoints see it (the capability, through its cache). */
const seen = async (clientId: string) => (await t.service.ctx.capability(oauth2Server)!.client(clientId))!;

const LOGOUT = {
  post_logout_redirect_uris: [
    'https://app.example/bye',
    'http://127.0.0.1:8080/bye',
    'https://app.example/bye',
  ],
  backchannel_logout_uri: 'https://app.example/backchannel?tenant=1',
  backchannel_logout_session_required: true,
  first_party: false,
};

describe("a client's sign-in session and logout members", () => {
  it('are taken on create and answered by create, GET and list, duplicates dropped', async () => {
    const made = await t.createClient(LOGOUT);
    const expected = {
      post_logout_redirect_uris: ['https://app.example/bye', 'http://127.0.0.1:8080/bye'],
      backchannel_logout_uri: 'https://app.example/backchannel?tenant=1',
      backchannel_logout_session_required: true,
      first_party: false,
    };
    expect(made).toMatchObject(expected);
    const got = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    await expectStatus(got, 200);
    expect(got.json.result).toMatchObject(expected);
    const list = await t.call('GET', CLIENTS);
    await expectStatus(list, 200);
    expect(list.json.result.find((c: { client_id: string }) => c.client_id === made.client_id)).toMatchObject(
      expected,
    );
    expect(await seen(made.client_id)).toMatchObject({
      postLogoutRedirectUris: expected.post_logout_redirect_uris,
      backchannelLogoutUri: expected.backchannel_logout_uri,
      backchannelLogoutSessionRequired: true,
      firstParty: false,
    });
  });

  it('default to no post-logout URIs, no back-channel URI, no sid required, a first-party app', async () => {
    const made = await t.createClient({ backchannel_logout_uri: null });
    expect(made).toMatchObject({
      post_logout_redirect_uris: [],
      backchannel_logout_session_required: false,
      first_party: true,
    });
    expect(made).not.toHaveProperty('backchannel_logout_uri');
    const client = await seen(made.client_id);
    expect(client).toMatchObject({
      postLogoutRedirectUris: [],
      backchannelLogoutSessionRequired: false,
      firstParty: true,
    });
    expect(client).not.toHaveProperty('backchannelLogoutUri');
  });

  const tooMany = Array.from({ length: 21 }, (_, i) => `https://app.example/bye/${i}`);
  it.each([
    [
      { post_logout_redirect_uris: ['https://app.example/ok', 'http://app.example/bye'] },
      'body.post_logout_redirect_uris[1]: must use https (http only on a loopback host',
    ],
    [
      { post_logout_redirect_uris: ['https://app.example/bye#x'] },
      'body.post_logout_redirect_uris[0]: must not contain a fragment',
    ],
    [{ post_logout_redirect_uris: ['/bye'] }, 'body.post_logout_redirect_uris[0]: must be an absolute URL'],
    [
      { post_logout_redirect_uris: ['myapp://bye'] },
      'body.post_logout_redirect_uris[0]: must use https (got the scheme myapp)',
    ],
    [
      { post_logout_redirect_uris: ['https://u:p@app.example/bye'] },
      'body.post_logout_redirect_uris[0]: must not carry a user name or password',
    ],
    [
      { post_logout_redirect_uris: ['https://a.example\\@evil.example/bye'] },
      'body.post_logout_redirect_uris[0]: must not contain a backslash',
    ],
    [{ post_logout_redirect_uris: [5] }, 'body.post_logout_redirect_uris[0]: must be a string'],
    [
      { post_logout_redirect_uris: 'https://app.example/bye' },
      'body.post_logout_redirect_uris: must be an array of URLs',
    ],
    [
      { post_logout_redirect_uris: tooMany },
      'body.post_logout_redirect_uris: must list at most 20 post-logout redirect URIs',
    ],
    [
      { backchannel_logout_uri: 'https://app.example/logout#frag' },
      'body.backchannel_logout_uri: must not contain a fragment',
    ],
    [
      { backchannel_logout_uri: 'http://app.example/logout' },
      'body.backchannel_logout_uri: must use https (http only on a loopback host',
    ],
    [{ backchannel_logout_uri: 'logout' }, 'body.backchannel_logout_uri: must be an absolute URL'],
    [
      { backchannel_logout_uri: ['https://app.example/logout'] },
      'body.backchannel_logout_uri: must be a string',
    ],
    [
      { backchannel_logout_uri: `https://app.example/${'a'.repeat(2000)}` },
      'body.backchannel_logout_uri: must be at most 2000 characters',
    ],
    [
      { backchannel_logout_session_required: 'yes' },
      'body.backchannel_logout_session_required: must be true or false',
    ],
    [{ first_party: 0 }, 'body.first_party: must be true or false'],
  ])('refuses %j on create and on PATCH with 400 naming the field and the rule', async (change, message) => {
    const res = await t.call('POST', CLIENTS, {
      body: { client_name: 'x', scopes: [], grant_types: ['client_credentials'], ...change },
    });
    await expectStatus(res, 400);
    expect(res.json.errors[0].message).toStartWith(message);
    const made = await t.createClient(LOGOUT);
    const patched = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, { body: change });
    await expectStatus(patched, 400);
    expect(patched.json.errors[0].message).toStartWith(message);
    const kept = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    expect(kept.json.result).toMatchObject({
      backchannel_logout_uri: LOGOUT.backchannel_logout_uri,
      first_party: false,
    });
  });

  it('takes http on a loopback host, as redirect URIs do', async () => {
    const made = await t.createClient({
      post_logout_redirect_uris: ['http://localhost:3000/bye', 'http://[::1]/bye'],
      backchannel_logout_uri: 'http://127.0.0.1:9000/logout',
    });
    expect(made).toMatchObject({
      post_logout_redirect_uris: ['http://localhost:3000/bye', 'http://[::1]/bye'],
      backchannel_logout_uri: 'http://127.0.0.1:9000/logout',
    });
  });

  it('are set by PATCH, kept when left out, the back-channel URI removed with null, seen at once', async () => {
    const made = await t.createClient();
    await seen(made.client_id); // cached now: the PATCH must drop it
    const set = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, { body: LOGOUT });
    await expectStatus(set, 200);
    expect(set.json.result).toMatchObject({
      post_logout_redirect_uris: ['https://app.example/bye', 'http://127.0.0.1:8080/bye'],
      backchannel_logout_uri: LOGOUT.backchannel_logout_uri,
      backchannel_logout_session_required: true,
      first_party: false,
    });
    expect(await seen(made.client_id)).toMatchObject({
      backchannelLogoutUri: LOGOUT.backchannel_logout_uri,
      firstParty: false,
    });

    const renamed = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, {
      body: { client_name: 'Renamed' },
    });
    await expectStatus(renamed, 200);
    expect(renamed.json.result).toMatchObject({ ...set.json.result, client_name: 'Renamed' });

    const cleared = await t.call('PATCH', `${CLIENTS}/${made.client_id}`, {
      body: {
        backchannel_logout_uri: null,
        post_logout_redirect_uris: [],
        backchannel_logout_session_required: false,
        first_party: true,
      },
    });
    await expectStatus(cleared, 200);
    expect(cleared.json.result).toMatchObject({
      post_logout_redirect_uris: [],
      backchannel_logout_session_required: false,
      first_party: true,
    });
    expect(cleared.json.result).not.toHaveProperty('backchannel_logout_uri');
    const got = await t.call('GET', `${CLIENTS}/${made.client_id}`);
    expect(got.json.result).not.toHaveProperty('backchannel_logout_uri');
    const client = await seen(made.client_id);
    expect(client).not.toHaveProperty('backchannelLogoutUri');
    expect(client).toMatchObject({ postLogoutRedirectUris: [], firstParty: true });
  });

  it("cannot be changed by another organization's API key", async () => {
    const mine = await t.createClient(LOGOUT);
    const path = `${CLIENTS}/${mine.client_id}`;
    const hostile = {
      post_logout_redirect_uris: ['https://evil.example/phish'],
      backchannel_logout_uri: null,
      backchannel_logout_session_required: false,
      first_party: true,
    };
    const res = await t.call('PATCH', path, { ...other, body: hostile });
    await expectStatus(res, 404);
    expect(res.text).not.toContain('app.example');
    const got = await t.call('GET', path);
    await expectStatus(got, 200);
    expect(got.json.result).toMatchObject({
      post_logout_redirect_uris: ['https://app.example/bye', 'http://127.0.0.1:8080/bye'],
      backchannel_logout_uri: LOGOUT.backchannel_logout_uri,
      backchannel_logout_session_required: true,
      first_party: false,
    });
    expect(await seen(mine.client_id)).toMatchObject({ firstParty: false });
  });
});

describe('a client made before these members', () => {
  it('has no post-logout URIs, no back-channel URI, no sid required, and is first-party', async () => {
    const storage = await createPgliteStorage();
    // The oauth2 tables as they were before migration 0004, and one client in them.
    await migrate(storage, [
      { name: migrations.name, migrations: migrations.migrations.filter((m) => m.id < '0004') },
    ]);
    const clientId = '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a01';
    await storage.db.execute(
      sql`INSERT INTO oauth2_clients (client_id, org_id, name, public, grant_types, redirect_uris, scopes, secret_digest, created_at, updated_at)
          VALUES (${clientId}, '0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b', 'Old', false, '["client_credentials"]', '[]', '["read"]', NULL, 0, 0)`,
    );
    const old = await startOAuth2Service({ storage });
    try {
      await old.service.ctx.storage.db.execute(
        sql`UPDATE oauth2_clients SET org_id = ${old.org.id} WHERE client_id = ${clientId}`,
      );
      const got = await old.call('GET', `${CLIENTS}/${clientId}`);
      await expectStatus(got, 200);
      expect(got.json.result).toMatchObject({
        client_name: 'Old',
        post_logout_redirect_uris: [],
        backchannel_logout_session_required: false,
        first_party: true,
      });
      expect(got.json.result).not.toHaveProperty('backchannel_logout_uri');
      const client = await old.service.ctx.capability(oauth2Server)!.client(clientId);
      expect(client).toMatchObject({
        postLogoutRedirectUris: [],
        backchannelLogoutSessionRequired: false,
        firstParty: true,
      });
      expect(client).not.toHaveProperty('backchannelLogoutUri');
    } finally {
      await old.stop();
    }
  });
});
