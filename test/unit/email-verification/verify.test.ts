import { afterEach, describe, expect, it } from 'bun:test';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type ResetTestService, resetService } from '../password-reset/fixture.ts';

let svc: ResetTestService | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const email = (value: string, verified?: boolean) => ({
  type: 'email_address',
  value,
  ...(verified === undefined ? {} : { verified }),
});
const LINK = /(https?:\/\/[^\s"<>]+\/email\/verify\?token=([A-Za-z0-9_-]{43}))/;

/** POST /persons/{id}/handles/verify with the API key. */
const askToVerify = (s: ResetTestService, personId: string, handle: unknown, o = {}) =>
  s.call('POST', `/persons/${personId}/handles/verify`, { ...o, body: { handle } });

/** The link of the `n`-th message. */
async function linkOf(s: ResetTestService, n: number) {
  const mail = (await s.smtp.waitFor(n))[n - 1]!;
  const found = LINK.exec(mail.parsed.text ?? '');
  if (!found) throw new Error(`message ${n} holds no verification link: ${mail.parsed.text}`);
  return { mail, link: found[1]!, token: found[2]! };
}

/** Opens the page of a link and presses its button, with the cookie the page set. */
async function follow(link: string) {
  const page = await fetch(link);
  const html = await page.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const token = /name="token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0]!;
  const pressed = () =>
    fetch(new URL('/email/verify', link), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf_token: csrf, token }).toString(),
    });
  return { page, html, pressed };
}

const handlesOf = async (s: ResetTestService, personId: string) =>
  (await s.call('GET', `/persons/${personId}`)).json.result.handles;

describe('verified email addresses', () => {
  it('are false by default, true when the organization creates them so, and never on a username', async () => {
    svc = await resetService();
    const made = await svc.call('POST', '/persons', {
      body: {
        handles: [email('a@example.com'), email('b@example.com', true), { type: 'username', value: 'ab' }],
      },
    });
    await expectStatus(made, 201);
    expect(made.json.result.handles).toEqual([
      { type: 'email_address', value: 'a@example.com', verified: false },
      { type: 'email_address', value: 'b@example.com', verified: true },
      { type: 'username', value: 'ab', verified: false },
    ]);
    const refused = await svc.call('POST', '/persons', {
      body: { handles: [{ type: 'username', value: 'cd', verified: true }] },
    });
    await expectStatus(refused, 400);
    expect(refused.json.errors[0].message).toBe(
      'body.handles[0].verified: a username reaches nobody and cannot be verified',
    );
    // PUT /persons with verified: true marks a handle the person already holds.
    const put = await svc.call('PUT', '/persons', { body: { handles: [email('a@example.com', true)] } });
    await expectStatus(put, 200);
    expect(put.json.result.handles[0]).toEqual({
      type: 'email_address',
      value: 'a@example.com',
      verified: true,
    });
  });

  it('become true through the emailed link and its button, not by opening the link alone', async () => {
    svc = await resetService();
    const personId = await svc.addPerson('ada@example.com');
    const sent = await askToVerify(svc, personId, email('Ada@Example.com'));
    await expectStatus(sent, 202);
    expect(sent.json.result.handle).toEqual({ type: 'email_address', value: 'ada@example.com' });
    expect(Date.parse(sent.json.result.expires_at) - Date.now()).toBeGreaterThan(23 * 3_600_000);

    const { mail, link } = await linkOf(svc, 1);
    expect(mail.envelopeTo).toEqual(['ada@example.com']);
    expect(mail.parsed.subject).toBe('Confirm your email address for Acme');
    expect(link.startsWith(`${svc.baseUrl}/email/verify?token=`)).toBe(true);

    const { page, html, pressed } = await follow(link);
    await expectStatus(page, 200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(html).toContain('Confirm that <strong>ada@example.com</strong> is your email address for Acme.');
    expect((await handlesOf(svc, personId))[0].verified).toBe(false);

    const done = await pressed();
    await expectStatus(done, 200);
    expect(await done.text()).toContain('ada@example.com is confirmed.');
    expect((await handlesOf(svc, personId))[0]).toEqual({
      type: 'email_address',
      value: 'ada@example.com',
      verified: true,
    });
    const again = await pressed();
    await expectStatus(again, 400);
    expect(await again.text()).toContain('This link has been used already.');
    const resent = await askToVerify(svc, personId, email('ada@example.com'));
    await expectStatus(resent, 409);
    expect(resent.json.errors[0].message).toBe(
      'body.handle: "ada@example.com" is verified already; no link was sent',
    );
  });

  it('refuses a press without the page cookie, and a link past its lifetime', async () => {
    const clock = manualClock(Date.now());
    svc = await resetService({ clock });
    const personId = await svc.addPerson('ada@example.com');
    await expectStatus(await askToVerify(svc, personId, email('ada@example.com')), 202);
    const { link, token } = await linkOf(svc, 1);
    const noCookie = await fetch(new URL('/email/verify', link), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf_token: 'x'.repeat(43), token }).toString(),
    });
    await expectStatus(noCookie, 403);
    clock.advance(24 * 3_600_000 + 1);
    const late = await fetch(link);
    await expectStatus(late, 400);
    expect(await late.text()).toContain('This link has expired.');
    expect((await handlesOf(svc, personId))[0].verified).toBe(false);
  });

  it('refuses a handle the person does not hold, a username, a phone number, and another organization', async () => {
    svc = await resetService();
    const made = await svc.call('POST', '/persons', {
      body: {
        handles: [
          email('ada@example.com'),
          { type: 'username', value: 'ada' },
          { type: 'phone_number', value: '+12025550142' },
        ],
      },
    });
    const personId: string = made.json.result.person_id;
    const cases: Array<[unknown, string]> = [
      [email('bob@example.com'), 'body.handle: "bob@example.com" is not a handle of person'],
      [{ type: 'username', value: 'ada' }, 'body.handle: a username reaches nobody'],
      [
        { type: 'phone_number', value: '+12025550142' },
        'phone numbers cannot be verified yet (no SMS transport)',
      ],
      [email('not an address'), 'body.handle.value: must be an email address'],
    ];
    for (const [handle, message] of cases) {
      const res = await askToVerify(svc, personId, handle);
      await expectStatus(res, 400);
      expect(res.json.errors[0].message).toContain(message);
    }
    const other = await svc.service.ctx.orgs.create('Other');
    const elsewhere = await askToVerify(svc, personId, email('ada@example.com'), {
      orgId: other.organization.id,
      key: other.apiKey,
    });
    await expectStatus(elsewhere, 404);
    expect(svc.smtp.received).toHaveLength(0);
  });

  it('limits links per person with 429 and Retry-After', async () => {
    svc = await resetService({ env: { EMAIL_VERIFICATION_RATE_LIMIT: '1/2' } });
    const personId = await svc.addPerson('ada@example.com');
    await expectStatus(await askToVerify(svc, personId, email('ada@example.com')), 202);
    await expectStatus(await askToVerify(svc, personId, email('ada@example.com')), 202);
    const third = await askToVerify(svc, personId, email('ada@example.com'));
    await expectStatus(third, 429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
