import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { newPerson, startRolesService } from '../roles/helpers.ts';

let t: TestService;
const clock = manualClock(Date.parse('2026-03-01T10:00:00Z'));
beforeAll(async () => {
  t = await startRolesService({ clock });
});
afterAll(() => t.stop());

const path = (id: string) => `/persons/${id}/consent/gdpr`;

describe('GDPR consents', () => {
  it('replaces the levels, keeping the created_at of those held, and deletes them', async () => {
    const id = await newPerson(t);
    const none = await t.call('GET', path(id));
    await expectStatus(none, 200);
    expect(none.json.result).toEqual({ consents: [] });

    const first = await t.call('PUT', path(id), {
      body: { consent_levels: ['analytics', 'necessary', 'analytics'] },
    });
    await expectStatus(first, 200);
    const [necessary, analytics] = first.json.result.consents;
    expect(first.json.result.consents.map((c: { consent_level: string }) => c.consent_level)).toEqual([
      'necessary',
      'analytics',
    ]);
    expect(necessary.created_at).toBe(new Date(clock.now()).toISOString());
    expect(analytics.created_at).toBe(necessary.created_at);

    clock.advance(60_000);
    const second = await t.call('PUT', path(id), {
      body: { consent_levels: ['marketing', 'necessary', 'tracking'] },
    });
    await expectStatus(second, 200);
    const levels = second.json.result.consents;
    expect(levels.map((c: { consent_level: string }) => c.consent_level)).toEqual([
      'necessary',
      'marketing',
      'tracking',
    ]);
    expect(levels[0].created_at).toBe(necessary.created_at);
    expect(levels[1].created_at).toBe(new Date(clock.now()).toISOString());
    expect(levels[1].created_at).not.toBe(necessary.created_at);
    expect((await t.call('GET', path(id))).json.result.consents).toEqual(levels);

    const cleared = await t.call('DELETE', path(id));
    await expectStatus(cleared, 200);
    expect(cleared.json.result).toEqual({ consents: [] });
    expect((await t.call('GET', path(id))).json.result).toEqual({ consents: [] });
    await expectStatus(await t.call('PUT', path(id), { body: { consent_levels: ['none'] } }), 200);
    expect((await t.call('GET', path(id))).json.result.consents[0].consent_level).toBe('none');
  });

  it('refuses unknown levels, "none" with others and malformed bodies with 400 naming the field', async () => {
    const id = await newPerson(t);
    const cases: Array<[unknown, string]> = [
      [
        { consent_levels: ['analytics', 'cookies'] },
        'body.consent_levels[1]: must be one of none, necessary',
      ],
      [{ consent_levels: ['none', 'analytics'] }, 'body.consent_levels: cannot give "none"'],
      [{ consent_levels: 'analytics' }, 'body.consent_levels'],
      [{}, 'body.consent_levels'],
      // A misspelt member is named, not taken as "no levels given" beside the real one.
      [
        { consent_levels: ['analytics'], consent_level: ['marketing'] },
        'body.consent_level: is not a member of this body (accepted: consent_levels)',
      ],
    ];
    for (const [body, text] of cases) {
      const res = await t.call('PUT', path(id), { body });
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(text);
    }
    expect((await t.call('GET', path(id))).json.result).toEqual({ consents: [] });
  });

  it('answers 404 for an unknown person and 400 for an ID that is no UUID', async () => {
    const nobody = '0190a2b4-0000-7000-8000-000000000001';
    await expectStatus(await t.call('GET', path(nobody)), 404);
    await expectStatus(await t.call('PUT', path(nobody), { body: { consent_levels: ['necessary'] } }), 404);
    await expectStatus(await t.call('DELETE', path(nobody)), 404);
    const bad = await t.call('GET', path('nobody'));
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toContain('path parameter person_id must be a UUID');
  });
});
