import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { type ResetTestService, resetService } from './fixture.ts';

/**
 * The hosted reset page over a real socket, as a browser without script would use it: the headers that
 * keep it self-contained, the double-submit check, and the answers to a bad form. The browser test
 * drives the same page in Chromium.
 */
let svc: ResetTestService;
let sent = 0;
beforeAll(async () => {
  svc = await resetService({ env: { PASSWORD_RESET_HANDLE_RATE_LIMIT: '100/100' } });
  await svc.addPerson('ada@example.com', 'correct horse battery staple');
});
afterAll(() => svc.stop());

/** A fresh reset link for ada (a newer one voids the older). */
async function freshToken(): Promise<string> {
  await expectStatus(
    await svc.requestReset({ type: 'email_address', value: 'ada@example.com' }, `192.0.2.${++sent}`),
    202,
  );
  return (await svc.message(sent)).token;
}

const page = (token: string) => fetch(`${svc.baseUrl}/password/reset?token=${token}`);

/** The page's form as a browser would post it back, with the cookie the page set. */
async function opened(token: string) {
  const res = await page(token);
  await expectStatus(res, 200);
  const html = await res.text();
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { res, html, csrf, cookie };
}

function post(fields: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${svc.baseUrl}/password/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
    redirect: 'manual',
  });
}

describe('the hosted reset page', () => {
  it('is self-contained: no script, the stylesheet by hash, not framable, no referrer elsewhere, not cached', async () => {
    const { res, html, cookie } = await opened(await freshToken());
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(html).not.toMatch(/<script|src=|href="http/i);
    expect(html).toContain('For the Acme account of <strong>ada@example.com</strong>.');
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    expect(cookie).toMatch(/^password_reset_form=[A-Za-z0-9_-]{43}$/);
  });

  it('refuses a post without the cookie of the page, or from another origin, with 403', async () => {
    const token = await freshToken();
    const { csrf, cookie } = await opened(token);
    const fields = {
      csrf_token: csrf,
      token,
      password: 'a brand new passphrase',
      password_confirm: 'a brand new passphrase',
    };
    const noCookie = await post(fields);
    await expectStatus(noCookie, 403);
    expect(await noCookie.text()).toContain('did not come from the page this browser opened');
    const wrong = await post(fields, { cookie: `password_reset_form=${'x'.repeat(43)}` });
    await expectStatus(wrong, 403);
    const elsewhere = await post(fields, { cookie, origin: 'https://evil.example' });
    await expectStatus(elsewhere, 403);
    expect(await elsewhere.text()).toContain('posted from another origin (https://evil.example)');
    // Nothing changed: the token still opens the form.
    await expectStatus(await page(token), 200);
  });

  it('answers the form again for two passwords that differ or one the policy refuses', async () => {
    const token = await freshToken();
    const { csrf, cookie } = await opened(token);
    const differ = await post(
      {
        csrf_token: csrf,
        token,
        password: 'a brand new passphrase',
        password_confirm: 'another one entirely',
      },
      { cookie },
    );
    await expectStatus(differ, 400);
    expect(await differ.text()).toContain('The two passwords differ.');
    const common = await post(
      { csrf_token: csrf, token, password: 'iloveyou1', password_confirm: 'iloveyou1' },
      { cookie },
    );
    await expectStatus(common, 400);
    const html = await common.text();
    expect(html).toContain('The password is one of the most common passwords; choose another.');
    expect(html).toContain(`name="token" value="${token}"`);
  });

  it('sets the password once, then says the link is used', async () => {
    const token = await freshToken();
    const { csrf, cookie } = await opened(token);
    const fields = {
      csrf_token: csrf,
      token,
      password: 'a brand new passphrase',
      password_confirm: 'a brand new passphrase',
    };
    const done = await post(fields, { cookie, origin: new URL(svc.baseUrl).origin });
    await expectStatus(done, 200);
    expect(await done.text()).toContain('Your password has been changed');
    await expectStatus(await svc.signIn('ada@example.com', 'a brand new passphrase'), 200);
    const again = await page(token);
    await expectStatus(again, 400);
    expect(await again.text()).toContain(
      'Already used; ask for a new reset if the password must change again.',
    );
    const unknown = await page('nonsense');
    await expectStatus(unknown, 400);
    expect(await unknown.text()).toContain('Unknown; no reset was asked for with this token');
  });
});
