import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { personDirectory } from '../../../core/capabilities/person-directory.ts';
import { EVENTS_TOPIC } from '../../../core/events/types.ts';
import { ack, type Subscription } from '../../../core/ports/event-bus.ts';
import { waitFor } from '../../contract/event-bus.contract.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { TestService } from '../../helpers/service.ts';
import { email, startPersonsService } from './helpers.ts';

let t: TestService;
let sub: Subscription;
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary event JSON
const received: any[] = [];
beforeAll(async () => {
  t = await startPersonsService();
  sub = t.service.ctx.bus.consume(EVENTS_TOPIC, async (m) => {
    received.push(m.payload);
    return ack();
  });
});
afterAll(async () => {
  await sub.stop();
  await t.stop();
});

const eventFor = async (name: string, personId: string) => {
  await waitFor(
    () => received.some((e) => e.event_metadata.event_name === name && e.person_id === personId),
    10_000,
    name,
  );
  return received.find((e) => e.event_metadata.event_name === name && e.person_id === personId);
};

describe('groups', () => {
  it("sets a person's groups, lists a group's persons and removes one", async () => {
    const a = (await t.call('POST', '/persons', { body: { handles: [email('ga')] } })).json.result;
    const b = (await t.call('POST', '/persons', { body: { handles: [email('gb')], groups: ['staff'] } })).json
      .result;
    const put = await t.call('PUT', `/persons/${a.person_id}/groups`, {
      body: { groups: ['staff', 'admins', 'staff'] },
    });
    await expectStatus(put, 200);
    expect(put.json.result).toEqual(['admins', 'staff']);
    expect((await t.call('GET', `/persons/${a.person_id}/groups`)).json.result).toEqual(['admins', 'staff']);
    const members = await t.call('GET', '/groups/staff/persons');
    await expectStatus(members, 200);
    expect(members.json.result).toEqual([a.person_id, b.person_id]);
    await expectStatus(await t.call('DELETE', `/groups/staff/persons/${b.person_id}`), 200);
    await expectStatus(await t.call('DELETE', `/groups/staff/persons/${b.person_id}`), 404);
    await expectStatus(
      await t.call('POST', '/groups/readers/persons', { body: { persons: [b.person_id] } }),
      201,
    );
    expect((await t.call('GET', '/groups/readers/persons')).json.result).toEqual([b.person_id]);
    await expectStatus(await t.call('PUT', `/persons/${a.person_id}/groups`, { body: { groups: [] } }), 200);
    expect((await t.call('GET', '/groups/admins/persons')).json.result).toEqual([]);
    await expectStatus(await t.call('GET', '/groups/never-named/persons'), 404);
    const bad = await t.call('PUT', `/persons/${a.person_id}/groups`, { body: { groups: ['a b'] } });
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toContain('body.groups[0]');
  });

  it('keeps groups_claim_name per organization, "groups" until set', async () => {
    const directory = t.service.ctx.capability(personDirectory)!;
    expect(await directory.groupsClaimName(t.org.id)).toBe('groups');
    expect((await t.call('GET', '/organizations/persons-settings')).json.result).toEqual({
      groups_claim_name: 'groups',
    });
    const put = await t.call('PUT', '/organizations/persons-settings', {
      body: { groups_claim_name: 'teams' },
    });
    await expectStatus(put, 200);
    expect(await directory.groupsClaimName(t.org.id)).toBe('teams');
    const bad = await t.call('PUT', '/organizations/persons-settings', {
      body: { groups_claim_name: 'sub' },
    });
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toContain('body.groups_claim_name');
  });
});

describe('the person directory', () => {
  it('finds by a handle written any way, and creates anonymous persons', async () => {
    const directory = t.service.ctx.capability(personDirectory)!;
    const p = (
      await t.call('POST', '/persons', {
        body: { handles: [{ type: 'phone_number', value: '+44 7700 900123' }] },
      })
    ).json.result;
    const found = await directory.findByHandle(t.org.id, { type: 'phone_number', value: '+44-7700-900-123' });
    expect(found?.personId).toBe(p.person_id);
    expect(directory.normaliseHandle({ type: 'email_address', value: ' A@B.Co ' })).toEqual({
      type: 'email_address',
      value: 'a@b.co',
    });
    expect(() => directory.normaliseHandle({ type: 'phone_number', value: '12345' })).toThrow('E.164');
    const anon = await directory.createAnonymous(t.org.id, {
      analytics: { clientIpAddress: '203.0.113.9', userAgent: 'test' },
    });
    expect(anon).toMatchObject({ personType: 'anonymous', handles: [], region: 'us-iowa' });
    expect((await directory.get(t.org.id, anon.personId))?.personId).toBe(anon.personId);
    const event = await eventFor('AnonymousPersonCreated_v1', anon.personId);
    expect(event.analytics_metadata.client_ip_address).toBe('203.0.113.9');
    const listed = await t.call('GET', '/persons?limit=1000');
    expect(listed.json.result.some((x: { person_id: string }) => x.person_id === anon.personId)).toBe(false);
    const all = await t.call('GET', '/persons?limit=1000&all_person_types=true');
    expect(all.json.result.some((x: { person_id: string }) => x.person_id === anon.personId)).toBe(true);
  });
});

describe('events', () => {
  it('publishes PersonCreated_v1 and PersonDeleted_v1 with the spec members', async () => {
    const res = await t.call('POST', '/persons', {
      body: { handles: [email('ev'), { type: 'phone_number', value: '+12025550199' }], groups: ['ev-group'] },
      // No trusted proxy: the socket's address counts, never the client's own X-Forwarded-For.
      headers: { 'x-forwarded-for': '203.0.113.66', 'user-agent': 'curl/8' },
      peer: '198.51.100.7',
    });
    await expectStatus(res, 201);
    const id = res.json.result.person_id;
    const created = await eventFor('PersonCreated_v1', id);
    expect(created).toMatchObject({
      person_id: id,
      region: 'us-iowa',
      handles: [
        { type: 2, value: 'pev@example.com' },
        { type: 1, value: '+12025550199' },
      ],
      gdpr_consents: [],
      analytics_metadata: { client_ip_address: '198.51.100.7' },
    });
    expect(created.event_metadata.organization_id).toBe(t.org.id);
    await expectStatus(await t.call('DELETE', `/persons/${id}`), 204);
    const deleted = await eventFor('PersonDeleted_v1', id);
    expect(deleted).toMatchObject({ person_id: id, region: 'us-iowa', groups: ['ev-group'] });
    expect(deleted.handles).toHaveLength(2);
  });

  it('publishes nothing for a create refused with 409', async () => {
    const first = await t.call('POST', '/persons', { body: { handles: [email('once')] } });
    await expectStatus(first, 201);
    await eventFor('PersonCreated_v1', first.json.result.person_id);
    const before = received.filter((e) => e.event_metadata.event_name === 'PersonCreated_v1').length;
    await expectStatus(await t.call('POST', '/persons', { body: { handles: [email('once')] } }), 409);
    await new Promise((r) => setTimeout(r, 300));
    expect(received.filter((e) => e.event_metadata.event_name === 'PersonCreated_v1').length).toBe(before);
  });
});
