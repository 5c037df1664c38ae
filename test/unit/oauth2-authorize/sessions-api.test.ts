import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type AuthorizeService, startAuthorizeService } from './fixture.ts';
import { LIFETIMES, sessionMaker } from './session-fixture.ts';

const clock = manualClock(Date.parse('2026-03-01T10:00:00Z'));
let s: AuthorizeService;
let sessions: ReturnType<typeof sessionMaker>;
let other: { orgId: string; key: string };
beforeAll(async () => {
  s = await startAuthorizeService({ clock });
  sessions = sessionMaker(s, clock);
  const made = await s.service.ctx.orgs.create('Other');
  other = { orgId: made.organization.id, key: made.apiKey };
});
afterAll(() => s.stop());

const loggedOutOf = (personId: string) =>
  s.events.filter((e) => e.event_metadata.event_name === 'PersonLoggedOut_v1' && e.person_id === personId);

describe("a person's sessions", () => {
  it('lists the live sessions, newest first, with their times, methods and clients', async () => {
    const p = await s.person();
    const { client_id } = await s.createClient();
    const first = await sessions.start(p.personId, { clients: [client_id] });
    clock.advance(60_000);
    const second = await sessions.start(p.personId, { userAgent: 'Other browser' });
    clock.advance(60_000);
    const res = await s.call('GET', `/persons/${p.personId}/sessions`);
    await expectStatus(res, 200);
    expect(res.json.result.map((x: { session_id: string }) => x.session_id)).toEqual([
      second.session.sessionId,
      first.session.sessionId,
    ]);
    const created = first.session.createdAt;
    expect(res.json.result[1]).toEqual({
      session_id: first.session.sessionId,
      created_at: new Date(created).toISOString(),
      last_active_at: new Date(created).toISOString(),
      // Unused since: the idle end comes before the absolute one.
      expires_at: new Date(created + LIFETIMES.idleMs).toISOString(),
      auth_time: new Date(Math.floor(created / 1000) * 1000).toISOString(),
      authenticated_methods: ['password'],
      clients: [client_id],
      user_agent: 'Mozilla/5.0 (test)',
      ip_address: '192.0.2.7',
    });
  });

  it('answers the absolute end when it comes before the idle one', async () => {
    const p = await s.person();
    const { session } = await sessions.start(p.personId);
    // Used just before the absolute end: the idle end would be later.
    clock.advance(LIFETIMES.absoluteMs - 60_000);
    await sessions.store.served(session.sessionId, 'some-client');
    const res = await s.call('GET', `/persons/${p.personId}/sessions`);
    await expectStatus(res, 200);
    expect(res.json.result[0].expires_at).toBe(new Date(session.expiresAt).toISOString());
  });

  it('leaves out sessions past their lifetime, before any sweep', async () => {
    const p = await s.person();
    await sessions.start(p.personId);
    clock.advance(LIFETIMES.idleMs + 1);
    const res = await s.call('GET', `/persons/${p.personId}/sessions`);
    await expectStatus(res, 200);
    expect(res.json.result).toEqual([]);
  });

  it('ends one session: gone from the list, and PersonLoggedOut_v1 reports it', async () => {
    const p = await s.person();
    const kept = await sessions.start(p.personId);
    const ended = await sessions.start(p.personId);
    const res = await s.call('DELETE', `/persons/${p.personId}/sessions/${ended.session.sessionId}`);
    await expectStatus(res, 204);
    const list = await s.call('GET', `/persons/${p.personId}/sessions`);
    expect(list.json.result.map((x: { session_id: string }) => x.session_id)).toEqual([
      kept.session.sessionId,
    ]);
    expect(await sessions.store.find(s.org.id, ended.secret)).toBeUndefined();
    await s.eventsNamed('PersonLoggedOut_v1');
    const events = loggedOutOf(p.personId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      person_id: p.personId,
      region: expect.any(String),
      browser_metadata: { user_agent: 'Mozilla/5.0 (test)', window_location: '', service_sdk_version: '' },
      analytics_metadata: { analytics_correlation_id: expect.any(String), client_ip_address: '0.0.0.0' },
    });
    // Ended already: a second DELETE finds nothing.
    await expectStatus(
      await s.call('DELETE', `/persons/${p.personId}/sessions/${ended.session.sessionId}`),
      404,
    );
  });

  it('ends all of them, with an event each, and answers 204 when there is none left', async () => {
    const p = await s.person();
    await sessions.start(p.personId);
    await sessions.start(p.personId);
    await expectStatus(await s.call('DELETE', `/persons/${p.personId}/sessions`), 204);
    expect((await s.call('GET', `/persons/${p.personId}/sessions`)).json.result).toEqual([]);
    await s.eventsNamed('PersonLoggedOut_v1');
    const deadline = Date.now() + 5000;
    while (loggedOutOf(p.personId).length < 2 && Date.now() < deadline) await Bun.sleep(20);
    expect(loggedOutOf(p.personId)).toHaveLength(2);
    await expectStatus(await s.call('DELETE', `/persons/${p.personId}/sessions`), 204);
    expect(loggedOutOf(p.personId)).toHaveLength(2);
  });

  it("answers 404 for another person's session, an unknown one, or an unknown person", async () => {
    const p = await s.person();
    const q = await s.person();
    const theirs = await sessions.start(q.personId);
    const wrong = await s.call('DELETE', `/persons/${p.personId}/sessions/${theirs.session.sessionId}`);
    await expectStatus(wrong, 404);
    expect(wrong.json.errors[0].message).toMatch(/session_id/);
    await expectStatus(await s.call('DELETE', `/persons/${p.personId}/sessions/${crypto.randomUUID()}`), 404);
    const nobody = crypto.randomUUID();
    for (const [method, path] of [
      ['GET', `/persons/${nobody}/sessions`],
      ['DELETE', `/persons/${nobody}/sessions`],
      ['DELETE', `/persons/${nobody}/sessions/${theirs.session.sessionId}`],
    ] as const) {
      const res = await s.call(method, path);
      await expectStatus(res, 404);
      expect(res.json.errors[0].message).toMatch(/person_id/);
    }
    expect(await sessions.store.get(s.org.id, theirs.session.sessionId)).toBeDefined();
  });

  it('refuses a person_id or session_id that is not a UUID with 400 naming it', async () => {
    const p = await s.person();
    const bad = await s.call('GET', '/persons/not-a-uuid/sessions');
    await expectStatus(bad, 400);
    expect(bad.json.errors[0].message).toMatch(/person_id must be a UUID/);
    const badSession = await s.call('DELETE', `/persons/${p.personId}/sessions/nope`);
    await expectStatus(badSession, 400);
    expect(badSession.json.errors[0].message).toMatch(/session_id must be a UUID/);
  });

  it("gives another organization's API key none of them", async () => {
    const p = await s.person();
    const mine = await sessions.start(p.personId);
    const as = { orgId: other.orgId, key: other.key };
    for (const [method, path] of [
      ['GET', `/persons/${p.personId}/sessions`],
      ['DELETE', `/persons/${p.personId}/sessions`],
      ['DELETE', `/persons/${p.personId}/sessions/${mine.session.sessionId}`],
    ] as const) {
      await expectStatus(await s.call(method, path, as), 404);
      // Its key with this organization's ID is no key of this organization.
      await expectStatus(await s.call(method, path, { key: other.key }), [401, 403]);
    }
    expect(await sessions.store.get(s.org.id, mine.session.sessionId)).toBeDefined();
    expect(loggedOutOf(p.personId)).toHaveLength(0);
  });
});
