import { afterEach, describe, expect, it } from 'bun:test';
import { decodeJwt } from 'jose';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import type { CallResult } from '../../helpers/service.ts';
import { type EmailTestService, emailService } from './fixture.ts';

let svc: EmailTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const page = (t: EmailTestService, token: string, headers: Record<string, string> = {}) =>
  t.call('GET', `/email/sign-in?token=${token}`, { key: null, orgId: null, headers });

/** The page's form: its CSRF field and the cookie that pairs with it. */
function formOf(res: CallResult) {
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(res.text)?.[1];
  const cookie = res.headers.get('set-cookie')?.split(';')[0];
  if (!csrf || !cookie) throw new Error(`no form on the page: ${res.status} ${res.text}`);
  return { csrf, cookie };
}

const press = (
  t: EmailTestService,
  token: string,
  form: { csrf: string; cookie?: string },
  origin = 'https://ids.test',
) =>
  t.call('POST', '/email/sign-in', {
    key: null,
    orgId: null,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin,
      'x-forwarded-for': '198.51.100.20',
      ...(form.cookie ? { cookie: form.cookie } : {}),
    },
    raw: new URLSearchParams({ csrf_token: form.csrf, token }).toString(),
  });

describe('signing in with a link sent by email (email_link)', () => {
  it('signs the asking caller in once the button of the link page is pressed, not when the link is opened', async () => {
    svc = await emailService();
    const personId = await svc.addPerson('ada@example.com');
    const started = await svc.start('ada@example.com', 'email_link', '203.0.113.7', {
      headers: { 'user-agent': 'AcmeApp/1.0' },
    });
    await expectStatus(started, 202);
    const { challenge_id } = started.json.result;
    const { link, token } = await svc.link(1);
    expect(link.startsWith('https://ids.test/email/sign-in?token=')).toBe(true);
    expect((await svc.mail(1)).parsed.subject).toBe('Sign in to Acme');

    const pending = await svc.verify({ challenge_id });
    await expectStatus(pending, 202);
    expect(pending.json.result).toMatchObject({ challenge_id, status: 'pending' });

    // A mail scanner follows the link (twice): the page shows, nothing is confirmed.
    const opened = await page(svc, token);
    await expectStatus(opened, 200);
    await expectStatus(await page(svc, token), 200);
    expect(opened.text).toContain('Sign me in');
    expect(opened.text).toContain('ada@example.com');
    expect(opened.text).toContain('203.0.113.7');
    expect(opened.text).toContain('AcmeApp/1.0');
    expect(opened.headers.get('content-security-policy')).toContain("default-src 'none'");
    await expectStatus(await svc.verify({ challenge_id }), 202);

    const confirmed = await press(svc, token, formOf(opened));
    await expectStatus(confirmed, 200);
    expect(confirmed.text).toContain('Sign-in confirmed');

    const done = await svc.verify({ challenge_id });
    await expectStatus(done, 200);
    expect(done.json.result.person_id).toBe(personId);
    expect(decodeJwt(done.json.result.token)).toMatchObject({ authenticated_methods: ['email_link'] });
    const [event] = await svc.named('AuthenticationSucceeded_v1', 1);
    expect(event).toMatchObject({ person_id: personId, success_authn_method: 'email_link' });

    const twice = await svc.verify({ challenge_id });
    await expectStatus(twice, 401);
    expect(twice.json.errors[0].message).toContain('used already');
    const reopened = await page(svc, token);
    await expectStatus(reopened, 400);
    expect(reopened.text).toContain('used already');
  });

  it('refuses a button press without the page cookie or from another origin', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'email_link')).json.result;
    const { token } = await svc.link(1);
    const form = formOf(await page(svc, token));
    await expectStatus(await press(svc, token, { csrf: form.csrf }), 403);
    await expectStatus(await press(svc, token, form, 'https://evil.test'), 403);
    await expectStatus(await svc.verify({ challenge_id }), 202);
    // A forged token in a genuine form confirms nothing either.
    const forged = await press(svc, 'A'.repeat(43), form);
    await expectStatus(forged, 400);
    expect(forged.text).toContain('unknown');
  });

  it('takes no code for a link, and gives another organization nothing', async () => {
    svc = await emailService();
    await svc.addPerson('ada@example.com');
    const { challenge_id } = (await svc.start('ada@example.com', 'email_link')).json.result;
    const withCode = await svc.verify({ challenge_id, code: '123456' });
    await expectStatus(withCode, 400);
    expect(withCode.json.errors[0].message).toContain('code: an email_link challenge takes no code');
    const { token } = await svc.link(1);
    await expectStatus(await press(svc, token, formOf(await page(svc, token))), 200);
    const hostile = await svc.service.ctx.orgs.create('Hostile');
    const there = await svc.verify({ challenge_id }, '203.0.113.66', { orgId: hostile.organization.id });
    await expectStatus(there, 401);
    await expectStatus(await svc.verify({ challenge_id }), 200);
  });

  it('keeps an unknown handle pending like a known one until it expires', async () => {
    const clock = manualClock(Date.now());
    svc = await emailService({ clock });
    await svc.addPerson('ada@example.com');
    const known = (await svc.start('ada@example.com', 'email_link')).json.result.challenge_id;
    const unknown = (await svc.start('nobody@example.com', 'email_link')).json.result.challenge_id;
    await svc.link(1);
    const a = await svc.verify({ challenge_id: known });
    const b = await svc.verify({ challenge_id: unknown });
    await expectStatus(a, 202);
    await expectStatus(b, 202);
    expect(Object.keys(a.json.result)).toEqual(Object.keys(b.json.result));
    clock.advance(10 * 60_000 + 1);
    const { token } = await svc.link(1);
    const late = await page(svc, token);
    await expectStatus(late, 400);
    expect(late.text).toContain('expired');
    const x = await svc.verify({ challenge_id: known });
    const y = await svc.verify({ challenge_id: unknown });
    await expectStatus(x, 401);
    await expectStatus(y, 401);
    expect(x.json).toEqual(y.json);
  });

  it('limits how often one challenge is polled, with Retry-After', async () => {
    svc = await emailService({ options: { linkPollRateLimit: { perMinute: 1, burst: 2 } } });
    const { challenge_id } = (await svc.start('ada@example.com', 'email_link')).json.result;
    await expectStatus(await svc.verify({ challenge_id }), 202);
    await expectStatus(await svc.verify({ challenge_id }), 202);
    const third = await svc.verify({ challenge_id });
    await expectStatus(third, 429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
