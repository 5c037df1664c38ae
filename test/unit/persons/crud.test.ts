import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { email, startPersonsService } from './helpers.ts';

let t: TestService;
beforeAll(async () => {
  t = await startPersonsService();
});
afterAll(() => t.stop());

describe('persons', () => {
  it('creates a person with normalised handles, then gets, patches and deletes it', async () => {
    const created = await t.call('POST', '/persons', {
      body: {
        handles: [
          { type: 'email_address', value: '  Ann.Smith@Example.COM ' },
          { type: 'phone_number', value: '+1 (202) 555-0142' },
          { type: 'username', value: 'Ann_Smith' },
        ],
        region: 'europe-belgium',
      },
    });
    await expectStatus(created, 201);
    const p = created.json.result;
    expect(p).toMatchObject({ person_type: 'regular', active: true, region: 'europe-belgium', groups: [] });
    expect(p.handles).toEqual([
      { type: 'email_address', value: 'ann.smith@example.com', verified: false },
      { type: 'phone_number', value: '+12025550142', verified: false },
      { type: 'username', value: 'ann_smith', verified: false },
    ]);
    const got = await t.call('GET', `/persons/${p.person_id}`);
    await expectStatus(got, 200);
    expect(got.json.result).toEqual(p);
    const patched = await t.call('PATCH', `/persons/${p.person_id}`, { body: { active: false } });
    await expectStatus(patched, 200);
    expect(patched.json.result.active).toBe(false);
    await expectStatus(await t.call('DELETE', `/persons/${p.person_id}`), 204);
    await expectStatus(await t.call('GET', `/persons/${p.person_id}`), 404);
    await expectStatus(await t.call('DELETE', `/persons/${p.person_id}`), 404);
  });

  it('uses the default region when none is given', async () => {
    const res = await t.call('POST', '/persons', { body: { handles: [email('region')] } });
    await expectStatus(res, 201);
    expect(res.json.result.region).toBe('us-iowa');
  });

  it('lists in pages with a cursor and filters by handle', async () => {
    for (let i = 0; i < 5; i++)
      await expectStatus(await t.call('POST', '/persons', { body: { handles: [email(`list${i}`)] } }), 201);
    const seen: string[] = [];
    let cursor = '';
    let total = 0;
    do {
      const res = await t.call('GET', `/persons?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      await expectStatus(res, 200);
      expect(res.json.result.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.result.map((p: { person_id: string }) => p.person_id));
      ({ cursor, total_count: total } = res.json.meta.cursor_pagination);
    } while (cursor);
    expect(seen.length).toBe(total);
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
    const one = await t.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address: PList3@Example.com')}`,
    );
    await expectStatus(one, 200);
    expect(one.json.result.map((p: { handles: unknown }) => p.handles)).toEqual([
      [{ ...email('list3'), verified: false }],
    ]);
    expect(one.json.meta.cursor_pagination).toEqual({ limit: 100, cursor: '', total_count: 1 });
  });

  it('refuses bad input with 400s naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ handles: [] }, 'body.handles'],
      [{ handles: [{ type: 'fax', value: '1' }] }, 'body.handles[0].type'],
      [{ handles: [{ type: 'email_address', value: 'no-at-sign' }] }, 'body.handles[0].value'],
      [{ handles: [{ type: 'phone_number', value: '+12' }] }, 'body.handles[0].value'],
      [{ handles: [{ type: 'username', value: 'a b' }] }, 'body.handles[0].value'],
      [{ handles: [email('bad')], region: 'mars' }, 'body.region'],
      [{ handles: [email('bad')], groups: ['-x'] }, 'body.groups[0]'],
      [{ handles: [email('bad')], attributes: { a: {} } }, 'body.attributes'],
      [{ handles: [email('bad'), { type: 'email_address', value: 'PBAD@example.com' }] }, 'body.handles[1]'],
      // A misspelt member used to pass as "not given": a person made active, or without roles.
      [{ handles: [email('bad')], actvie: false }, 'body.actvie: is not a member of this body'],
      [{ handles: [email('bad')], roles: ['admin'] }, 'body.roles: is not a member of this body'],
      [{ handles: [{ ...email('bad'), verifed: true }] }, 'body.handles[0].verifed: is not a member'],
    ];
    for (const [body, field] of cases) {
      const res = await t.call('POST', '/persons', { body });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(field);
    }
    const made = await t.call('POST', '/persons', { body: { handles: [email('strict')] } });
    await expectStatus(made, 201);
    const patch = await t.call('PATCH', `/persons/${made.json.result.person_id}`, {
      body: { active: false, region: 'eu-central-1' },
    });
    await expectStatus(patch, 400);
    expect(patch.json.errors[0].message).toContain(
      'body.region: is not a member of this body (accepted: active)',
    );
    for (const [path, field] of [
      ['/persons?limit=0', 'query.limit'],
      ['/persons?cursor=zzz', 'query.cursor'],
      ['/persons?handle=nocolon', 'query.handle'],
      ['/persons?colour=red', 'colour'],
      ['/persons/not-a-uuid', 'person_id'],
    ]) {
      const res = await t.call('GET', path!);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(field!);
    }
  });

  it('answers 409 for a taken handle, also when two creates race', async () => {
    await expectStatus(await t.call('POST', '/persons', { body: { handles: [email('dup')] } }), 201);
    const again = await t.call('POST', '/persons', {
      body: { handles: [{ type: 'email_address', value: 'PDUP@Example.com' }] },
    });
    await expectStatus(again, 409);
    expect(again.json.errors[0].message).toContain('pdup@example.com');
    const racing = await Promise.all(
      Array.from({ length: 6 }, () => t.call('POST', '/persons', { body: { handles: [email('race')] } })),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
  });

  it('bulk-creates all or nothing with PUT and an array', async () => {
    const ok = await t.call('PUT', '/persons', {
      body: [{ handles: [email('bulk1')] }, { handles: [email('bulk2')], groups: ['staff'] }],
    });
    await expectStatus(ok, 201);
    expect(ok.json.result.map((p: { groups: string[] }) => p.groups)).toEqual([[], ['staff']]);
    const refused = await t.call('PUT', '/persons', {
      body: [{ handles: [email('bulk3')] }, { handles: [email('bulk1')] }],
    });
    await expectStatus(refused, 409);
    expect(refused.json.errors[0].message).toContain('body[1].handles');
    const none = await t.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address:pbulk3@example.com')}`,
    );
    expect(none.json.result).toEqual([]);
    const tooMany = await t.call('PUT', '/persons', {
      body: Array.from({ length: 101 }, (_, i) => ({ handles: [email(`many${i}`)] })),
    });
    await expectStatus(tooMany, 400);
    expect(tooMany.json.errors[0].message).toContain('at most 100');
  });

  it('creates or updates one person with PUT and an object', async () => {
    const made = await t.call('PUT', '/persons', { body: { handles: [email('upsert')] } });
    await expectStatus(made, 201);
    const updated = await t.call('PUT', '/persons', {
      body: {
        handles: [email('upsert'), { type: 'username', value: 'upsert' }],
        active: false,
        groups: ['g1'],
      },
    });
    await expectStatus(updated, 200);
    expect(updated.json.result).toMatchObject({
      person_id: made.json.result.person_id,
      active: false,
      groups: ['g1'],
    });
    expect(updated.json.result.handles).toHaveLength(2);
  });
});
