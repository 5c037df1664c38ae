import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import type * as oauth from 'oauth4webapi';
import {
  createOAuth2ConsentStore,
  type OAuth2ConsentStore,
} from '../../../plugins/oauth2-authorize/consent/store.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallOptions } from '../../helpers/service.ts';
import {
  type AuthorizeService,
  discover,
  exchange,
  expectOAuthError,
  type MadeClient,
  obtainCode,
  startAuthorizeService,
} from './fixture.ts';
import { tokenChecks } from './resource-server.ts';

const clock = manualClock(Date.parse('2026-03-01T12:00:00Z'));
let s: AuthorizeService;
let consents: OAuth2ConsentStore;
let check: ReturnType<typeof tokenChecks>;
let as: oauth.AuthorizationServer;
/** Another organization's caller: its own ID and API key. */
let hostile: CallOptions;
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  // The consent page is not what this file tests: consents are given through the store the plugin uses.
  consents = createOAuth2ConsentStore({ storage: s.service.ctx.storage, clock });
  as = await discover(s);
  check = tokenChecks(
    s,
    as,
    await s.createClient({ grant_types: ['client_credentials'], redirect_uris: [] }),
  );
  const other = await s.service.ctx.orgs.create('Other');
  hostile = { orgId: other.organization.id, key: other.apiKey };
});
afterAll(() => s.stop());

type Person = Awaited<ReturnType<AuthorizeService['person']>>;

/** A grant of the client for the person, through the hosted login and the token endpoint. */
async function signIn(client: MadeClient, person: Person) {
  const { code, verifier } = await obtainCode(s, client, { scope: 'openid read' }, person);
  const res = await exchange(s, client, code, verifier);
  await expectStatus(res, 200);
  return res.json as { access_token: string; refresh_token: string };
}

const path = (person: Person | string, clientId?: string) =>
  `/persons/${typeof person === 'string' ? person : person.personId}/oauth2-consents${clientId === undefined ? '' : `/${encodeURIComponent(clientId)}`}`;

async function listed(person: Person, as: CallOptions = {}) {
  const res = await s.call('GET', path(person), as);
  await expectStatus(res, 200);
  return res.json.result as Array<{ client_id: string; client_name: string; scopes: string[] }>;
}

const grant = (person: Person, client: MadeClient, scopes: string[]) =>
  consents.grant(s.org.id, person.personId, client.client_id, scopes);

describe('GET /persons/{person_id}/oauth2-consents', () => {
  it('lists each client the person allowed, with its name, scopes and times', async () => {
    const person = await s.person();
    const calendar = await s.createClient({ client_name: 'Calendar <Beta>' });
    const notes = await s.createClient({ client_name: 'Notes' });
    expect(await listed(person)).toEqual([]);

    const first = clock.now();
    await grant(person, calendar, ['openid', 'read']);
    clock.advance(1000);
    await grant(person, notes, ['openid']);
    clock.advance(1000);
    await grant(person, calendar, ['email']);

    const res = await s.call('GET', path(person));
    await expectStatus(res, 200);
    expect(res.json).toEqual({
      result: [
        {
          client_id: calendar.client_id,
          client_name: 'Calendar <Beta>',
          scopes: ['email', 'openid', 'read'],
          created_at: new Date(first).toISOString(),
          updated_at: new Date(first + 2000).toISOString(),
        },
        {
          client_id: notes.client_id,
          client_name: 'Notes',
          scopes: ['openid'],
          created_at: new Date(first + 1000).toISOString(),
          updated_at: new Date(first + 1000).toISOString(),
        },
      ],
    });
  });

  it('no longer lists a client deleted since', async () => {
    const person = await s.person();
    const gone = await s.createClient({ client_name: 'Gone' });
    await grant(person, gone, ['openid']);
    await expectStatus(await s.call('DELETE', `/oauth2/clients/${gone.client_id}`), 204);
    expect(await listed(person)).toEqual([]);
  });

  it('answers 404 for a person this organization does not have, 400 for an ID that is none', async () => {
    const res = await s.call('GET', path('0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b'));
    await expectStatus(res, 404);
    expect(res.json.errors[0].message).toMatch(/no person .* in this organization/);
    const bad = await s.call('GET', path('not-a-uuid'));
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toMatch(/person_id must be a UUID/);
  });
});

describe('DELETE /persons/{person_id}/oauth2-consents/{client_id}', () => {
  it("revokes the consent and the person's grants to that client, sparing the rest", async () => {
    const [person, bystander] = [await s.person(), await s.person()];
    const app = await s.createClient({ client_name: 'Third-party App' });
    const other = await s.createClient({ client_name: 'Other App' });
    await grant(person, app, ['openid', 'read']);
    await grant(person, other, ['openid', 'read']);
    await grant(bystander, app, ['openid', 'read']);
    const [tokens, otherTokens, bystanders] = [
      await signIn(app, person),
      await signIn(other, person),
      await signIn(app, bystander),
    ];

    const res = await s.call('DELETE', path(person, app.client_id));
    await expectStatus(res, 204);
    expect(res.text).toBe('');

    expect((await listed(person)).map((c) => c.client_id)).toEqual([other.client_id]);
    expect(await consents.covers(s.org.id, person.personId, app.client_id, ['openid'])).toBe(false);
    // The app loses its refresh token and its access token with the consent.
    await expectOAuthError(await check.refresh(app, tokens.refresh_token), 400, 'invalid_grant', /revoked/);
    expect(await check.introspect(tokens.access_token)).toEqual({ active: false });
    // Another client of the person, and another person of the app, keep theirs.
    await expectStatus(await check.refresh(other, otherTokens.refresh_token), 200);
    await expectStatus(await check.refresh(app, bystanders.refresh_token), 200);

    // Gone already: 404, as for a client the person never allowed.
    const again = await s.call('DELETE', path(person, app.client_id));
    await expectStatus(again, 404);
    expect(again.json.errors[0].message).toMatch(/no consent for the client/);
    await expectStatus(await s.call('DELETE', path(person, 'never-allowed')), 404);
  });

  it('answers 404 for a person this organization does not have, and 400 for a client_id too long', async () => {
    await expectStatus(await s.call('DELETE', path('0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b', 'app')), 404);
    const person = await s.person();
    const long = await s.call('DELETE', path(person, 'x'.repeat(257)));
    await expectStatus(long, 400);
    expect(long.json.errors[0].message).toMatch(/client_id must be 1 to 256 characters/);
  });
});

describe('DELETE /persons/{person_id}/oauth2-consents', () => {
  it("revokes every consent and the grants to those clients, not a first-party client's", async () => {
    const person = await s.person();
    const [a, b, firstParty] = [await s.createClient(), await s.createClient(), await s.createClient()];
    await grant(person, a, ['openid', 'read']);
    await grant(person, b, ['openid', 'read']);
    const [ta, tb, tf] = [await signIn(a, person), await signIn(b, person), await signIn(firstParty, person)];

    await expectStatus(await s.call('DELETE', path(person)), 204);
    expect(await listed(person)).toEqual([]);
    await expectOAuthError(await check.refresh(a, ta.refresh_token), 400, 'invalid_grant', /revoked/);
    await expectOAuthError(await check.refresh(b, tb.refresh_token), 400, 'invalid_grant', /revoked/);
    // A client the person gave no consent to (first party) keeps its grant.
    await expectStatus(await check.refresh(firstParty, tf.refresh_token), 200);
    // Nothing left to revoke is no error.
    await expectStatus(await s.call('DELETE', path(person)), 204);
  });

  it('answers 404 for a person this organization does not have', async () => {
    await expectStatus(await s.call('DELETE', path('0190a5b4-7c6d-7e8f-9a0b-1c2d3e4f5a6b')), 404);
  });
});

describe("another organization's API key", () => {
  it("neither reads nor revokes this organization's consents or grants", async () => {
    const person = await s.person();
    const app = await s.createClient();
    await grant(person, app, ['openid', 'read']);
    const tokens = await signIn(app, person);

    // Its own organization has no such person: 404, never the data, nothing revoked.
    await expectStatus(await s.call('GET', path(person), hostile), 404);
    await expectStatus(await s.call('DELETE', path(person, app.client_id), hostile), 404);
    await expectStatus(await s.call('DELETE', path(person), hostile), 404);
    // Naming this organization with that key is refused before anything is read.
    const named = { orgId: s.org.id, key: hostile.key ?? null };
    await expectStatus(await s.call('GET', path(person), named), [401, 403]);
    await expectStatus(await s.call('DELETE', path(person), named), [401, 403]);

    expect((await listed(person)).map((c) => c.client_id)).toEqual([app.client_id]);
    await expectStatus(await check.refresh(app, tokens.refresh_token), 200);
  });
});

describe("a person's deletion", () => {
  it('deletes their consents in the same transaction', async () => {
    const person = await s.person();
    const app = await s.createClient();
    await grant(person, app, ['openid']);
    await expectStatus(await s.call('DELETE', `/persons/${person.personId}`), 204);
    const rows = await s.service.ctx.storage.query<{ n: number }>(
      sql`select count(*)::int as n from oauth2_authorize_consents where person_id = ${person.personId}`,
    );
    expect(rows[0]?.n).toBe(0);
  });
});
