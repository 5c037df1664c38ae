import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { sql } from 'drizzle-orm';
import { decodeJwt } from 'jose';
import { consents } from '../../../plugins/consents/index.ts';
import { roles } from '../../../plugins/roles/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type RecordingIdentityService,
  startRecordingIdentityService,
} from '../../helpers/identity-recorder.ts';
import { seed } from './helpers.ts';

let t: RecordingIdentityService;
beforeAll(async () => {
  t = await startRecordingIdentityService({ extra: [roles(), consents()] });
});
afterAll(() => t.stop());

const SECRET = 'correct horse battery staple';
let seq = 0;

/** A person with a password: its ID and its handle. */
async function person() {
  const handle = { type: 'username', value: `tc-${++seq}` };
  const made = await t.call('POST', '/persons', { body: { handles: [handle] } });
  await expectStatus(made, 201);
  const id: string = made.json.result.person_id;
  await expectStatus(
    await t.call('PUT', `/persons/${id}/credentials/password`, { body: { password: SECRET } }),
    204,
  );
  return { id, handle };
}

async function signInClaims(p: { handle: { type: string; value: string } }) {
  const res = await t.call('POST', '/authenticate/password', {
    key: null,
    body: { handle: p.handle, password: SECRET },
  });
  await expectStatus(res, 200);
  return decodeJwt(res.json.result.token);
}

async function mintClaims(id: string, body: unknown = {}) {
  const res = await t.call('POST', `/persons/${id}/mint-token`, { body });
  await expectStatus(res, 201);
  return decodeJwt(res.json.result);
}

const rolesInTokens = async (on: boolean) =>
  expectStatus(await t.call('PUT', '/organizations/roles-settings', { body: { roles_in_tokens: on } }), 200);

describe('roles in tokens', () => {
  it('carries no roles claim until the organization turns it on, then the roles as they are now', async () => {
    await seed(t, ['tok.read'], 'tok-reader');
    await seed(t, ['tok.write'], 'tok-writer');
    const p = await person();
    await expectStatus(
      await t.call('PUT', `/persons/${p.id}/roles`, { body: { roles: ['tok-writer', 'tok-reader'] } }),
      204,
    );
    expect(await signInClaims(p)).not.toHaveProperty('roles');
    expect(await mintClaims(p.id)).not.toHaveProperty('roles');

    await rolesInTokens(true);
    const claims = await signInClaims(p);
    expect(claims.roles).toEqual(['tok-reader', 'tok-writer']);
    // The token_minted hook sees the claims as they will be signed.
    expect(t.drafts.at(-1)?.claims.roles).toEqual(['tok-reader', 'tok-writer']);
    expect((await mintClaims(p.id)).roles).toEqual(['tok-reader', 'tok-writer']);

    await expectStatus(await t.call('PUT', `/persons/${p.id}/roles`, { body: { roles: [] } }), 204);
    expect((await signInClaims(p)).roles).toEqual([]);
    await rolesInTokens(false);
    expect(await mintClaims(p.id)).not.toHaveProperty('roles');
  });

  it("follows each organization's own setting", async () => {
    await rolesInTokens(true);
    const other = await t.service.ctx.orgs.create('Other');
    const as = { orgId: other.organization.id, key: other.apiKey };
    const made = await t.call('POST', '/persons', {
      ...as,
      body: { handles: [{ type: 'username', value: 'other-1' }] },
    });
    await expectStatus(made, 201);
    const minted = await t.call('POST', `/persons/${made.json.result.person_id}/mint-token`, {
      ...as,
      body: {},
    });
    await expectStatus(minted, 201);
    expect(decodeJwt(minted.json.result)).not.toHaveProperty('roles');
    await rolesInTokens(false);
  });
});

describe('consents in tokens', () => {
  it('carries the consent levels given before the token, and none once they are deleted', async () => {
    const p = await person();
    expect(await signInClaims(p)).not.toHaveProperty('gdpr_consent_level');
    await expectStatus(
      await t.call('PUT', `/persons/${p.id}/consent/gdpr`, {
        body: { consent_levels: ['marketing', 'necessary'] },
      }),
      200,
    );
    expect((await signInClaims(p)).gdpr_consent_level).toEqual(['necessary', 'marketing']);
    expect((await mintClaims(p.id)).gdpr_consent_level).toEqual(['necessary', 'marketing']);
    await expectStatus(await t.call('DELETE', `/persons/${p.id}/consent/gdpr`), 200);
    expect(await mintClaims(p.id)).not.toHaveProperty('gdpr_consent_level');
  });

  it('still refuses roles and gdpr_consent_level as custom claims, and as the groups claim name', async () => {
    const p = await person();
    for (const claim of ['roles', 'gdpr_consent_level']) {
      const res = await t.call('POST', `/persons/${p.id}/mint-token`, {
        body: { custom_claims: { [claim]: ['x'] } },
      });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(claim);
      const named = await t.call('PUT', '/organizations/persons-settings', {
        body: { groups_claim_name: claim },
      });
      await expectStatus(named, 400);
    }
  });
});

describe('deleting a person', () => {
  it("removes the person's roles, additional permissions and consents with it", async () => {
    await seed(t, ['del.read'], 'del-role');
    const p = await person();
    await expectStatus(await t.call('PUT', `/persons/${p.id}/roles`, { body: { roles: ['del-role'] } }), 204);
    await expectStatus(
      await t.call('PUT', `/persons/${p.id}/additional-permissions`, { body: { permissions: ['del.read'] } }),
      204,
    );
    await expectStatus(
      await t.call('PUT', `/persons/${p.id}/consent/gdpr`, { body: { consent_levels: ['analytics'] } }),
      200,
    );
    const count = async () => {
      const [row] = await t.service.ctx.storage.query<{ n: number }>(sql`select
        (select count(*) from roles_person_roles where person_id = ${p.id})
        + (select count(*) from roles_person_permissions where person_id = ${p.id})
        + (select count(*) from consents_gdpr where person_id = ${p.id}) as n`);
      return Number(row?.n);
    };
    expect(await count()).toBe(3);
    await expectStatus(await t.call('DELETE', `/persons/${p.id}`), 204);
    expect(await count()).toBe(0);
    await expectStatus(await t.call('GET', `/persons/${p.id}/roles`), 404);
    await expectStatus(await t.call('GET', `/persons/${p.id}/consent/gdpr`), 404);
  });
});
