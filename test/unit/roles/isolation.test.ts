import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { newPerson, seed, startRolesService } from './helpers.ts';

let t: TestService;
let other: { orgId: string; key: string };
let personId: string;
beforeAll(async () => {
  t = await startRolesService();
  const made = await t.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
  await seed(t, ['mine.read'], 'mine-role');
  personId = await newPerson(t);
  await expectStatus(
    await t.call('PUT', `/persons/${personId}/roles`, { body: { roles: ['mine-role'] } }),
    204,
  );
  await expectStatus(
    await t.call('PUT', `/persons/${personId}/consent/gdpr`, { body: { consent_levels: ['necessary'] } }),
    200,
  );
});
afterAll(() => t.stop());

const routes = (): Array<[string, string, unknown?]> => [
  ['POST', '/permissions', { name: 'x' }],
  ['GET', '/permissions'],
  ['GET', '/permissions/mine.read'],
  ['PATCH', '/permissions/mine.read', { description: 'x' }],
  ['DELETE', '/permissions/mine.read'],
  ['POST', '/roles', { name: 'x', permissions: [] }],
  ['GET', '/roles'],
  ['GET', '/roles/mine-role'],
  ['PATCH', '/roles/mine-role', { description: 'x' }],
  ['DELETE', '/roles/mine-role'],
  ['GET', `/persons/${personId}/roles`],
  ['PUT', `/persons/${personId}/roles`, { roles: [] }],
  ['GET', `/persons/${personId}/additional-permissions`],
  ['PUT', `/persons/${personId}/additional-permissions`, { permissions: [] }],
  ['GET', `/persons/${personId}/permissions`],
  ['GET', `/persons/${personId}/consent/gdpr`],
  ['PUT', `/persons/${personId}/consent/gdpr`, { consent_levels: [] }],
  ['DELETE', `/persons/${personId}/consent/gdpr`],
  ['GET', '/organizations/roles-settings'],
  ['PUT', '/organizations/roles-settings', { roles_in_tokens: true }],
];

describe('tenant isolation', () => {
  it("refuses another organization's key on every route (403), and no key at all (401)", async () => {
    for (const [method, path, body] of routes()) {
      await expectStatus(await t.call(method, path, { body, key: other.key }), 403);
      await expectStatus(await t.call(method, path, { body, key: null }), 401);
    }
  });

  it("answers 404 for another organization's person, role and permission on every route naming one", async () => {
    const as = { orgId: other.orgId, key: other.key };
    const named = routes().filter(([, p]) => p.includes(personId) || /\/(roles|permissions)\/mine/.test(p));
    expect(named.length).toBe(14);
    for (const [method, path, body] of named)
      await expectStatus(await t.call(method, path, { body, ...as }), 404);
    // Nothing of ours shows or changed.
    expect((await t.call('GET', '/permissions', as)).json.result).toEqual([]);
    expect((await t.call('GET', '/roles', as)).json.result).toEqual([]);
    expect((await t.call('GET', `/persons/${personId}/roles`)).json.result).toEqual(['mine-role']);
    expect((await t.call('GET', `/persons/${personId}/consent/gdpr`)).json.result.consents).toHaveLength(1);
    expect((await t.call('GET', '/roles/mine-role')).json.result.permissions).toEqual(['mine.read']);
  });

  it("keeps names per organization: another's roles are unknown, and its own may share a name", async () => {
    const as = { orgId: other.orgId, key: other.key };
    const theirs = await newPerson(t, as);
    const refused = await t.call('PUT', `/persons/${theirs}/roles`, {
      body: { roles: ['mine-role'] },
      ...as,
    });
    await expectStatus(refused, 400);
    expect(refused.json.errors[0].message).toContain('no role "mine-role"');
    const perms = await t.call('POST', '/roles', { body: { name: 'r', permissions: ['mine.read'] }, ...as });
    await expectStatus(perms, 400);
    await expectStatus(
      await t.call('POST', '/permissions', { body: { name: 'mine.read', description: 'theirs' }, ...as }),
      201,
    );
    await expectStatus(await t.call('DELETE', '/permissions/mine.read', as), 204);
    expect((await t.call('GET', '/permissions/mine.read')).json.result).toEqual({
      name: 'mine.read',
      description: '',
    });
    await expectStatus(
      await t.call('PUT', '/organizations/roles-settings', { body: { roles_in_tokens: true }, ...as }),
      200,
    );
    expect((await t.call('GET', '/organizations/roles-settings')).json.result).toEqual({
      roles_in_tokens: false,
    });
  });
});
