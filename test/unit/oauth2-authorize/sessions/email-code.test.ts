// The hosted login's sign-in code by email (otp_via_email): as the first factor ("Email me a sign-in
// code", the code page) and as the second step, through the email-codes plugin's hostedLoginEmailCodes,
// messages read from a real SMTP server on loopback.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { decodeJwt } from 'jose';
import { expectStatus } from '../../../helpers/expect-status.ts';
import { smtpTls, startSmtpServer, type TestSmtpServer } from '../../../helpers/smtp.ts';
import { type AuthorizeService, exchange, type MadeClient, startAuthorizeService } from '../fixture.ts';
import { authorize, CookieJar, callbackOf, csrfOf, postPage, signIn } from './browser-jar.ts';

let smtp: TestSmtpServer;
let s: AuthorizeService;
let client: MadeClient;
let seq = 0;

beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startAuthorizeService({
    env: { SMTP_URL: smtp.url, MAIL_FROM: 'no-reply@ids.test', NODE_EXTRA_CA_CERTS: smtpTls().caFile },
  });
  client = await s.createClient();
});
afterAll(async () => {
  await s.stop();
  await smtp.stop();
});

/** The organization's authentication policy. */
async function setPolicy(policy: {
  first_factors: string[];
  second_factor?: string;
  second_factors?: string[];
}) {
  const res = await s.call('PUT', '/organizations/authentication-policy', {
    body: { second_factor: 'optional', second_factors: ['totp'], ...policy },
  });
  await expectStatus(res, 200);
}

/** A person holding a fresh email address and a password. */
async function emailPerson() {
  const value = `hosted-${process.pid}-${++seq}@example.com`;
  const made = await s.call('POST', '/persons', { body: { handles: [{ type: 'email_address', value }] } });
  await expectStatus(made, 201);
  const personId: string = made.json.result.person_id;
  const password = `correct horse battery ${seq}`;
  await expectStatus(
    await s.call('PUT', `/persons/${personId}/credentials/password`, { body: { password } }),
    204,
  );
  return { personId, handle: { type: 'email_address', value }, password };
}

/** The code of the message sent to `to` (waiting for the `n`-th message to arrive). */
async function codeSentTo(to: string, n: number): Promise<string> {
  const mail = (await smtp.waitFor(n)).find((m) => m.envelopeTo.includes(to));
  const code = /^(\d{6})$/m.exec(mail?.parsed.text ?? '')?.[1];
  if (!code) throw new Error(`no code sent to ${to}: ${smtp.received.map((m) => m.envelopeTo).join(', ')}`);
  return code;
}

const challengeOf = (html: string) => /name="challenge_id" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** The page, then "Email me a sign-in code" for `email`: the code page's answer and its fields. */
async function askCode(jar: CookieJar, email: string) {
  const opened = await authorize(jar, s, client.client_id);
  const page = await opened.res.clone().text();
  await expectStatus(opened.res.clone(), 200);
  const csrf = await csrfOf(opened.res);
  const res = await postPage(jar, s, '/oauth2/authorize/email-code', { csrf_token: csrf, handle: email });
  const html = await res.clone().text();
  return { ...opened, page, csrf, res, html, challengeId: challengeOf(html) };
}

describe('a sign-in code by email on the hosted login', () => {
  test('the code signs in, after a wrong one is refused; the ID token has amr ["otp"]', async () => {
    await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    const who = await emailPerson();
    const jar = new CookieJar();
    const before = smtp.received.length;
    const asked = await askCode(jar, who.handle.value);
    expect(asked.page).toContain('Email me a sign-in code');
    await expectStatus(asked.res, 200);
    expect(asked.html).toContain('Check your email');
    const code = await codeSentTo(who.handle.value, before + 1);

    const wrong = await postPage(jar, s, '/oauth2/authorize/email-code/verify', {
      csrf_token: asked.csrf,
      challenge_id: asked.challengeId,
      code: code === '000000' ? '111111' : '000000',
      handle: who.handle.value,
    });
    await expectStatus(wrong.clone(), 401);
    expect(await wrong.text()).toContain('That code is not right');
    const failed = await s.eventsNamed('AuthenticationFailed_v1');
    expect(failed.at(-1)).toMatchObject({
      failed_authn_method: 'otp_via_email',
      failure_reason: 'invalid_code',
    });

    const right = await postPage(jar, s, '/oauth2/authorize/email-code/verify', {
      csrf_token: asked.csrf,
      challenge_id: asked.challengeId,
      code,
      handle: who.handle.value,
    });
    const params = await callbackOf(right);
    expect(jar.session()).toBeDefined();
    const tokens = await exchange(s, client, params.get('code')!, asked.verifier);
    expect(tokens.status, tokens.text).toBe(200);
    const id = decodeJwt(String(tokens.json.id_token));
    expect(id.amr).toEqual(['otp']);
    expect(id.authenticated_methods).toEqual(['otp_via_email']);
    expect(id.sub).toBe(who.personId);
    const succeeded = await s.eventsNamed('AuthenticationSucceeded_v1');
    expect(succeeded.at(-1)).toMatchObject({
      person_id: who.personId,
      success_authn_method: 'otp_via_email',
    });

    // The code is used: the login is finished and the code signs nobody in again.
    const again = await postPage(jar, s, '/oauth2/authorize/email-code/verify', {
      csrf_token: asked.csrf,
      challenge_id: asked.challengeId,
      code,
    });
    await expectStatus(again, 400);
  });

  test('an address that names nobody gets the same page, and no message', async () => {
    await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    const who = await emailPerson();
    const nobody = `nobody-${process.pid}-${++seq}@example.com`;
    const before = smtp.received.length;
    const unknown = await askCode(new CookieJar(), nobody);
    const known = await askCode(new CookieJar(), who.handle.value);
    await expectStatus(unknown.res, 200);
    await expectStatus(known.res, 200);
    const shape = (a: { html: string; csrf: string; challengeId: string }, address: string) =>
      a.html.replaceAll(a.csrf, 'CSRF').replaceAll(a.challengeId, 'CHALLENGE').replaceAll(address, 'ADDRESS');
    expect(unknown.challengeId).not.toBe('');
    expect(shape(unknown, nobody)).toBe(shape(known, who.handle.value));
    await codeSentTo(who.handle.value, before + 1);
    expect(smtp.received.some((m) => m.envelopeTo.includes(nobody))).toBe(false);
  });

  test("past the plugin's limit per address typed, the page says when to retry (429, Retry-After)", async () => {
    await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    const nobody = `limited-${process.pid}-${++seq}@example.com`;
    const jar = new CookieJar();
    const opened = await authorize(jar, s, client.client_id);
    const csrf = await csrfOf(opened.res);
    let last: Response | undefined;
    for (let i = 0; i < 6; i++)
      last = await postPage(jar, s, '/oauth2/authorize/email-code', { csrf_token: csrf, handle: nobody });
    await expectStatus(last!.clone(), 429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await last!.text()).toContain('Too many codes asked for. Try again in');
  });

  test('a policy without otp_via_email shows no button and refuses the route', async () => {
    await setPolicy({ first_factors: ['password'] });
    try {
      const who = await emailPerson();
      const before = smtp.received.length;
      const jar = new CookieJar();
      const asked = await askCode(jar, who.handle.value);
      expect(asked.page).not.toContain('Email me a sign-in code');
      await expectStatus(asked.res, 403);
      expect(asked.html).toContain('Signing in with a code by email is not offered here.');
      // The code route too, in the browser of the login (another browser's would be refused anyway).
      const refused = await postPage(jar, s, '/oauth2/authorize/email-code/verify', {
        csrf_token: asked.csrf,
        challenge_id: '00000000-0000-4000-8000-000000000000',
        code: '123456',
      });
      await expectStatus(refused.clone(), 403);
      expect(await refused.text()).toContain('Signing in with a code by email is not offered here.');
      expect(smtp.received.length).toBe(before);
    } finally {
      await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    }
  });

  test('a code by email as the second step after a password, when the policy requires one', async () => {
    await setPolicy({
      first_factors: ['password', 'otp_via_email'],
      second_factor: 'required',
      second_factors: ['otp_via_email'],
    });
    try {
      const who = await emailPerson();
      const jar = new CookieJar();
      const first = await signIn(jar, s, client.client_id, who);
      const page = await first.res.clone().text();
      await expectStatus(first.res.clone(), 200);
      expect(page).toContain('Email me a code');
      expect(jar.session()).toBeUndefined();
      const csrf = await csrfOf(first.res);

      const before = smtp.received.length;
      const sent = await postPage(jar, s, '/oauth2/authorize/second-factor/email', { csrf_token: csrf });
      const html = await sent.clone().text();
      await expectStatus(sent, 200);
      const challengeId = challengeOf(html);
      expect(challengeId).not.toBe('');
      const code = await codeSentTo(who.handle.value, before + 1);

      const wrong = await postPage(jar, s, '/oauth2/authorize/second-factor', {
        csrf_token: csrf,
        method: 'otp_via_email',
        challenge_id: challengeId,
        code: code === '000000' ? '111111' : '000000',
      });
      await expectStatus(wrong.clone(), 401);
      // The page keeps the code field of the challenge sent.
      expect(challengeOf(await wrong.text())).toBe(challengeId);

      const right = await postPage(jar, s, '/oauth2/authorize/second-factor', {
        csrf_token: csrf,
        method: 'otp_via_email',
        challenge_id: challengeId,
        code,
      });
      const params = await callbackOf(right);
      const tokens = await exchange(s, client, params.get('code')!, first.verifier);
      expect(tokens.status, tokens.text).toBe(200);
      const id = decodeJwt(String(tokens.json.id_token));
      expect(id.amr).toEqual(['pwd', 'otp', 'mfa']);
      expect(id.authenticated_methods).toEqual(['password', 'otp_via_email']);
    } finally {
      await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    }
  });

  test('another browser cannot send the second step a code', async () => {
    await setPolicy({
      first_factors: ['password', 'otp_via_email'],
      second_factor: 'required',
      second_factors: ['otp_via_email'],
    });
    try {
      const who = await emailPerson();
      const jar = new CookieJar();
      const first = await signIn(jar, s, client.client_id, who);
      const csrf = await csrfOf(first.res);
      const before = smtp.received.length;
      const stranger = await postPage(new CookieJar(), s, '/oauth2/authorize/second-factor/email', {
        csrf_token: csrf,
      });
      await expectStatus(stranger, 403);
      expect(smtp.received.length).toBe(before);
    } finally {
      await setPolicy({ first_factors: ['password', 'otp_via_email'] });
    }
  });
});
