import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { startPersonsService } from './helpers.ts';

let t: TestService;
let other: { orgId: string; key: string };
let otherPerson: string;
// p[1..5] in creation order; see beforeAll for what each holds.
const p: string[] = [];

async function make(body: object, as?: { orgId: string; key: string }) {
  const res = await t.call('POST', '/persons', { body, ...(as ?? {}) });
  await expectStatus(res, 201);
  return res.json.result.person_id as string;
}

beforeAll(async () => {
  t = await startPersonsService();
  const made = await t.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
  p[1] = await make({ handles: [{ type: 'email_address', value: 'a1@example.com' }], groups: ['G1'] });
  p[2] = await make({
    handles: [{ type: 'phone_number', value: '+12019876543' }],
    groups: ['G1', 'G2'],
    region: 'europe-belgium',
  });
  await expectStatus(await t.call('PATCH', `/persons/${p[2]}`, { body: { active: false } }), 200);
  p[3] = await make({ handles: [{ type: 'username', value: 'john_smith' }], region: 'europe-belgium' });
  p[4] = await make({ handles: [{ type: 'email_address', value: 'a4@example.com' }], region: 'asia-japan' });
  p[5] = await make({ handles: [{ type: 'email_address', value: 'a5@example.com' }], groups: ['G2'] });
  // Another organization's person, in G1 and us-iowa with the same username: never in our answers.
  otherPerson = await make({ handles: [{ type: 'username', value: 'john_smith' }], groups: ['G1'] }, other);
});
afterAll(() => t.stop());

async function list(query: string) {
  const res = await t.call('GET', `/persons?${query}`);
  await expectStatus(res, 200);
  return res.json as {
    meta: Record<string, Record<string, unknown>>;
    result: Array<Record<string, unknown>>;
  };
}
const idsOf = async (query: string) => (await list(query)).result.map((r) => r.person_id);
const q = encodeURIComponent;

async function refused(query: string, ...parts: string[]) {
  const res = await t.call('GET', `/persons?${query}`);
  await expectStatus(res, 400);
  for (const part of parts)
    expect({ query, message: res.json.errors[0].message }).toEqual({
      query,
      message: expect.stringContaining(part),
    });
}

describe('GET /persons offset pagination', () => {
  it('answers meta.pagination {limit, offset, total_count} for an offset', async () => {
    const first = await list('limit=2&offset=0');
    expect(first.result.map((r) => r.person_id)).toEqual([p[1], p[2]]);
    expect(first.meta).toEqual({ pagination: { limit: 2, offset: 0, total_count: 5 } });
    expect(await idsOf('limit=2&offset=2')).toEqual([p[3], p[4]]);
    expect(await idsOf('limit=2&offset=4')).toEqual([p[5]]);
    expect((await list('offset=9')).meta.pagination).toEqual({ limit: 100, offset: 9, total_count: 5 });
    expect(await idsOf('offset=9')).toEqual([]);
  });

  it('answers both pagination metas without either, and only the cursor one for a cursor', async () => {
    const page = await list('limit=3');
    expect(page.meta.pagination).toEqual({ limit: 3, offset: 0, total_count: 5 });
    expect(page.meta.cursor_pagination).toEqual({ limit: 3, cursor: expect.any(String), total_count: 5 });
    const next = await list(`limit=3&cursor=${page.meta.cursor_pagination!.cursor}`);
    expect(next.result.map((r) => r.person_id)).toEqual([p[4], p[5]]);
    expect(Object.keys(next.meta)).toEqual(['cursor_pagination']);
  });

  it('refuses a cursor with an offset, and an offset out of range, naming the rule', async () => {
    const { cursor } = (await list('limit=1')).meta.cursor_pagination!;
    await refused(`offset=1&cursor=${cursor}`, 'query.cursor and query.offset: give one of them');
    for (const offset of ['-1', 'abc', '1.5', '1000001'])
      await refused(`offset=${offset}`, 'query.offset: must be an integer from 0 to 1000000');
  });
});

describe('GET /persons ids and fields', () => {
  it('lists the persons named by ids, in creation order, never another organization', async () => {
    expect(await idsOf(`ids=${p[3]},${p[1]}`)).toEqual([p[1], p[3]]);
    expect(await idsOf(`ids=${p[3]},${otherPerson}`)).toEqual([p[3]]);
    expect((await list(`ids=${p[3]},${p[3]!.toUpperCase()}`)).meta.pagination?.total_count).toBe(1);
  });

  it('refuses an ID that is no UUID, and more than 1000, naming the rule', async () => {
    await refused(`ids=${p[1]},nope`, 'query.ids[1]: must be a person ID (a UUID)');
    await refused('ids=', 'query.ids[0]');
    const many = Array.from({ length: 1001 }, () => p[1]).join(',');
    await refused(`ids=${many}`, 'query.ids: must list at most 1000 person IDs (got 1001)');
  });

  it('answers only the optional fields named (handles and groups by default)', async () => {
    const [all] = (await list(`ids=${p[2]}`)).result;
    expect(all).toMatchObject({ handles: [expect.any(Object)], groups: ['G1', 'G2'] });
    const [handles] = (await list(`ids=${p[2]}&fields=handles`)).result;
    expect(Object.keys(handles!)).not.toContain('groups');
    expect(handles!.handles).toEqual([{ type: 'phone_number', value: '+12019876543', verified: false }]);
    const [groups] = (await list(`ids=${p[2]}&fields=groups`)).result;
    expect(Object.keys(groups!)).not.toContain('handles');
    const [bare] = (await list(`ids=${p[2]}&fields=`)).result;
    expect(Object.keys(bare!).sort()).toEqual(['active', 'created_at', 'person_id', 'person_type', 'region']);
  });

  it('refuses attributes and unknown field names with 400', async () => {
    await refused('fields=handles,attributes', 'query.fields: attributes is not available');
    await refused('fields=handles,colour', 'query.fields[1]: must be one of handles, groups');
  });
});

describe('GET /persons filter', () => {
  it("answers each of the reference's forms that this service keeps", async () => {
    const cases: Array<[string, string[]]> = [
      [`person_id eq "${p[2]}"`, [p[2]!]],
      ['handles eq "phone_number:+1 201 987-6543"', [p[2]!]],
      ['handles eq "email_address:A4@Example.com"', [p[4]!]],
      ['handles eq "username:john_smith"', [p[3]!]],
      ['active eq false', [p[2]!]],
      ['active eq true', [p[1]!, p[3]!, p[4]!, p[5]!]],
      ['groups eq "G1"', [p[1]!, p[2]!]],
      ['groups ne "G1"', [p[3]!, p[4]!, p[5]!]],
      ['region eq "europe-belgium"', [p[2]!, p[3]!]],
      ['region ne "us-iowa"', [p[2]!, p[3]!, p[4]!]],
      ['region eq "us-iowa" or region eq "asia-japan"', [p[1]!, p[4]!, p[5]!]],
      ['groups eq "G2" AND active eq true', [p[5]!]],
      // and binds before or.
      ['region eq "asia-japan" or groups eq "G1" and active eq false', [p[2]!, p[4]!]],
    ];
    for (const [filter, expected] of cases)
      expect({ filter, ids: await idsOf(`filter=${q(filter)}`) }).toEqual({ filter, ids: expected });
  });

  it('combines with ids, pagination and the other conditions', async () => {
    const page = await list(`filter=${q('groups eq "G1" or groups eq "G2"')}&limit=1&offset=1`);
    expect(page.result.map((r) => r.person_id)).toEqual([p[2]]);
    expect(page.meta.pagination).toEqual({ limit: 1, offset: 1, total_count: 3 });
    expect(await idsOf(`filter=${q('groups eq "G1"')}&ids=${p[2]},${p[5]}`)).toEqual([p[2]]);
  });

  it('refuses what it does not keep, and what is not a filter, with 400 naming the rule', async () => {
    const cases: Array<[string, string]> = [
      ['roles eq "admin"', 'roles is not supported'],
      ['permissions eq "write"', 'permissions is not supported'],
      ['attributes sw "myprefix"', 'attributes is not supported'],
      ['attribute_buckets[name eq "b" and attributes eq "c"]', 'attribute_buckets is not supported'],
      ['source_authoritative_status eq "primary"', 'source_authoritative_status is not supported'],
      ['region co "us"', 'operator co at 7 is not supported'],
      ['region eq "mars"', 'region must be one of us-iowa'],
      ['person_id eq "nope"', 'person_id must be compared with a UUID'],
      ['active eq "yes"', 'active is compared with true or false'],
      ['handles eq "nocolon"', 'the handles value: must be type:value'],
      ['(region eq "us-iowa")', 'grouping with ( ) or [ ] is not supported'],
      ['region eq "us-iowa" or', 'or at 20 is followed by nothing'],
      ['region eq "us-iowa" region eq "asia-japan"', 'expected and / or at 20'],
      ['colour eq "red"', 'unknown attribute colour'],
      ['groups eq "a,b"', 'groups must be compared with a group name (got "a,b")'],
      ['region', 'has no operator'],
      ['   ', 'is empty'],
    ];
    for (const [filter, part] of cases) await refused(`filter=${q(filter)}`, 'query.filter: ', part);
    await refused(`filter=${q('x'.repeat(2001))}`, 'must be at most 2000 characters');
    const long = Array.from({ length: 21 }, () => 'active eq true').join(' and ');
    await refused(`filter=${q(long)}`, 'must hold at most 20 comparisons');
  });

  it("never matches another organization's persons, groups or handles", async () => {
    expect(await idsOf(`filter=${q('handles eq "username:john_smith"')}`)).toEqual([p[3]]);
    expect(await idsOf(`filter=${q('groups eq "G1"')}&all_person_types=true`)).toEqual([p[1], p[2]]);
    const res = await list(`filter=${q(`person_id eq "${otherPerson}"`)}`);
    expect(res.result).toEqual([]);
    expect(res.meta.pagination?.total_count).toBe(0);
  });
});

describe('GET /persons all_regions', () => {
  it('lists every region by default and only the deployment REGION (us-iowa) with false', async () => {
    expect(await idsOf('all_regions=true')).toEqual([p[1], p[2], p[3], p[4], p[5]]);
    expect(await idsOf('all_regions=false')).toEqual([p[1], p[5]]);
    await refused('all_regions=yes', 'all_regions', 'must be true or false');
  });

  it('documents every parameter of the reference in the OpenAPI document', async () => {
    const doc = await t.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const names = doc.json.paths['/persons'].get.parameters.map((x: { name: string }) => x.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'handle',
        'filter',
        'limit',
        'offset',
        'ids',
        'fields',
        'all_regions',
        'all_person_types',
      ]),
    );
  });
});

describe('GET /persons/{person_id} with fields', () => {
  it('answers the optional members fields names, both by default, and refuses others', async () => {
    const get = (query: string) => t.call('GET', `/persons/${p[1]}${query}`);
    const full = await get('');
    await expectStatus(full, 200);
    expect(full.json.result).toMatchObject({ person_id: p[1], groups: ['G1'] });
    expect(full.json.result.handles).toHaveLength(1);
    const handlesOnly = await get('?fields=handles');
    await expectStatus(handlesOnly, 200);
    expect(Object.keys(handlesOnly.json.result)).toContain('handles');
    expect(Object.keys(handlesOnly.json.result)).not.toContain('groups');
    const neither = await get('?fields=');
    expect(Object.keys(neither.json.result)).not.toContain('handles');
    expect(Object.keys(neither.json.result)).not.toContain('groups');
    const attributes = await get('?fields=attributes');
    await expectStatus(attributes, 400);
    expect(attributes.json.errors[0].message).toContain('query.fields');
    const unknown = await get('?limit=1');
    await expectStatus(unknown, 400);
    expect(unknown.json.errors[0].message).toContain('accepted: fields');
  });
});
