import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { email, startPersonsService } from './helpers.ts';

let t: TestService;
let other: { orgId: string; key: string };
let personId: string;
beforeAll(async () => {
  t = await startPersonsService();
  const made = await t.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
  const res = await t.call('POST', '/persons', { body: { handles: [email('mine')], groups: ['mine'] } });
  personId = res.json.result.person_id;
});
afterAll(() => t.stop());

const routes = (): Array<[string, string, unknown?]> => [
  ['POST', '/persons', { handles: [email('x')] }],
  ['PUT', '/persons', { handles: [email('mine')] }],
  ['GET', '/persons'],
  ['GET', `/persons/${personId}`],
  ['PATCH', `/persons/${personId}`, { active: false }],
  ['DELETE', `/persons/${personId}`],
  ['GET', `/persons/${personId}/groups`],
  ['PUT', `/persons/${personId}/groups`, { groups: ['x'] }],
  ['GET', '/groups/mine/persons'],
  ['POST', '/groups/mine/persons', { persons: [personId] }],
  ['DELETE', `/groups/mine/persons/${personId}`],
  ['GET', '/organizations/persons-settings'],
  ['PUT', '/organizations/persons-settings', { groups_claim_name: 'x' }],
];

describe('tenant isolation', () => {
  it("refuses another organization's key on every route (403)", async () => {
    for (const [method, path, body] of routes())
      await expectStatus(await t.call(method, path, { body, key: other.key }), 403);
  });

  it("answers 404 for another organization's person on every person route", async () => {
    const as = { orgId: other.orgId, key: other.key };
    for (const [method, path, body] of routes().filter(([, p]) => p.includes(personId)))
      await expectStatus(await t.call(method, path, { body, ...as }), 404);
    const list = await t.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address:pmine@example.com')}`,
      as,
    );
    expect(list.json.result).toEqual([]);
    // The same handle is free in another organization, and the upsert there creates its own person.
    const upsert = await t.call('PUT', '/persons', { body: { handles: [email('mine')] }, ...as });
    await expectStatus(upsert, 201);
    expect(upsert.json.result.person_id).not.toBe(personId);
    const mine = await t.call('GET', `/persons/${personId}`);
    await expectStatus(mine, 200);
    expect(mine.json.result).toMatchObject({ active: true, groups: ['mine'] });
  });
});
