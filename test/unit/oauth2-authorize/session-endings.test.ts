import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { endExpiredSessions } from '../../../plugins/oauth2-authorize/sessions/sweeper.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { bothTestCas, startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';
import { type AuthorizeService, startAuthorizeService } from './fixture.ts';
import { LIFETIMES, sessionMaker } from './session-fixture.ts';

/** PersonLoggedOut_v1 events of the person, waiting up to 5 s for `count`. */
async function loggedOut(s: AuthorizeService, personId: string, count: number) {
  const pick = () =>
    s.events.filter((e) => e.event_metadata.event_name === 'PersonLoggedOut_v1' && e.person_id === personId);
  const deadline = Date.now() + 5000;
  while (pick().length < count && Date.now() < deadline) await Bun.sleep(20);
  return pick();
}

describe('what ends sign-in sessions', () => {
  const clock = manualClock(Date.parse('2026-03-01T10:00:00Z'));
  let s: AuthorizeService;
  let sessions: ReturnType<typeof sessionMaker>;
  beforeAll(async () => {
    s = await startAuthorizeService({ clock });
    sessions = sessionMaker(s, clock);
  });
  afterAll(() => s.stop());

  it("disabling a person ends the person's sessions, each reported", async () => {
    const p = await s.person();
    const q = await s.person();
    const a = await sessions.start(p.personId);
    const b = await sessions.start(p.personId);
    const kept = await sessions.start(q.personId);
    const res = await s.call('PATCH', `/persons/${p.personId}`, { body: { active: false } });
    await expectStatus(res, 200);
    expect(await sessions.store.find(s.org.id, a.secret)).toBeUndefined();
    expect(await sessions.store.find(s.org.id, b.secret)).toBeUndefined();
    expect(await sessions.store.find(s.org.id, kept.secret)).toBeDefined();
    const events = await loggedOut(s, p.personId, 2);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ person_id: p.personId, region: expect.any(String) });
    expect(await loggedOut(s, q.personId, 0)).toHaveLength(0);
  });

  it('disabling through PUT /persons ends them too; enabling ends none', async () => {
    const p = await s.person();
    const first = await sessions.start(p.personId);
    const put = (active: boolean) => s.call('PUT', '/persons', { body: { handles: [p.handle], active } });
    await expectStatus(await put(true), 200);
    expect(await sessions.store.find(s.org.id, first.secret)).toBeDefined();
    await expectStatus(await put(false), 200);
    expect(await sessions.store.find(s.org.id, first.secret)).toBeUndefined();
    expect(await loggedOut(s, p.personId, 1)).toHaveLength(1);
  });

  it('deleting a person ends its sessions in the deletion, reported with its region', async () => {
    const p = await s.person();
    const a = await sessions.start(p.personId);
    const region = (await s.call('GET', `/persons/${p.personId}`)).json.result.region;
    await expectStatus(await s.call('DELETE', `/persons/${p.personId}`), 204);
    expect(await sessions.store.get(s.org.id, a.session.sessionId)).toBeUndefined();
    const events = await loggedOut(s, p.personId, 1);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ person_id: p.personId, region });
  });

  const sweep = () =>
    endExpiredSessions({ storage: s.service.ctx.storage, sessions: sessions.store, finish: sessions.finish });

  it('the sweeper ends sessions past their idle or absolute lifetime, each reported', async () => {
    const idle = await s.person();
    const used = await s.person();
    const idleSession = await sessions.start(idle.personId);
    const usedSession = await sessions.start(used.personId);
    // Used every two days: never idle for three, but past its 14 days in the end.
    for (let day = 2; day <= 12; day += 2) {
      clock.advance(2 * 86_400_000);
      await sessions.store.served(usedSession.session.sessionId, 'some-client');
      if (day === 4) {
        expect(await sweep()).toBeGreaterThanOrEqual(1);
      }
    }
    expect(await sessions.store.get(s.org.id, idleSession.session.sessionId)).toBeUndefined();
    expect(await loggedOut(s, idle.personId, 1)).toHaveLength(1);
    expect(await sessions.store.get(s.org.id, usedSession.session.sessionId)).toBeDefined();
    clock.advance(LIFETIMES.absoluteMs - 12 * 86_400_000 + 1);
    expect(await sweep()).toBe(1);
    expect(await loggedOut(s, used.personId, 1)).toHaveLength(1);
    // Ended once: another sweep finds nothing.
    expect(await sweep()).toBe(0);
  });
});

describe('a password reset', () => {
  let s: AuthorizeService;
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    s = await startAuthorizeService({
      env: { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@ids.test', NODE_EXTRA_CA_CERTS: bothTestCas() },
    });
  });
  afterAll(async () => {
    await s.stop();
    await smtp.stop();
  });

  it("ends the person's sessions in the reset, each reported", async () => {
    const sessions = sessionMaker(s, s.service.ctx.clock);
    const made = await s.call('POST', '/persons', {
      body: { handles: [{ type: 'email_address', value: 'ada@example.com' }] },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    const a = await sessions.start(personId);
    const b = await sessions.start(personId);
    const asked = await s.call('POST', '/authenticate/password/reset', {
      key: null,
      body: { handle: { type: 'email_address', value: 'ada@example.com' } },
    });
    await expectStatus(asked, 202);
    const mail = (await smtp.waitFor(1))[0]!;
    const token = /[?&]token=([A-Za-z0-9_-]{43})/.exec(mail.parsed.text ?? '')?.[1];
    if (!token) throw new Error(`the message holds no reset link: ${mail.parsed.text}`);
    // Not yet: asking for a reset ends nothing, only confirming it does.
    expect(await sessions.store.find(s.org.id, a.secret)).toBeDefined();
    await expectStatus(
      await s.call('POST', '/authenticate/password/reset/confirm', {
        key: null,
        body: { token, password: 'a new and much better passphrase' },
      }),
      204,
    );
    expect(await sessions.store.find(s.org.id, a.secret)).toBeUndefined();
    expect(await sessions.store.find(s.org.id, b.secret)).toBeUndefined();
    expect(await loggedOut(s, personId, 2)).toHaveLength(2);
  });
});
