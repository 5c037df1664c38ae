import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { ServiceError } from '../../../core/errors.ts';
import { handleOf } from '../../../plugins/oauth2-authorize/login/login.ts';
import { manualClock } from '../../helpers/clock.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  type MadeClient,
  openLogin,
  REDIRECT,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';

const clock = manualClock(Date.now());
let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService({ clock, env: { PASSWORD_HANDLE_RATE_LIMIT: '1/4' } });
  client = await s.createClient();
});
afterAll(() => s.stop());

async function opened(extra: Record<string, string> = {}, cookie?: string) {
  const { url, state } = await authorizationUrl(await discover(s), client.client_id, extra);
  return { ...(await openLogin(url, cookie)), state };
}

const text = async (res: Response) => ({ status: res.status, text: await res.text(), headers: res.headers });

describe('the handle field', () => {
  it('reads an @ as an email address, a leading + as a phone number, anything else as a username', () => {
    expect(handleOf(' Ada@Example.com ')).toEqual({ type: 'email_address', value: 'Ada@Example.com' });
    expect(handleOf('+1 (202) 555-0142')).toEqual({ type: 'phone_number', value: '+1 (202) 555-0142' });
    expect(handleOf('12345678')).toEqual({ type: 'username', value: '12345678' });
    expect(handleOf('ada.l')).toEqual({ type: 'username', value: 'ada.l' });
  });

  it('signs in a person by the phone number typed as people write it', async () => {
    const made = await s.call('POST', '/persons', {
      body: { handles: [{ type: 'phone_number', value: '+12025550142' }] },
    });
    await expectStatus(made, 201);
    const password = 'correct horse battery staple';
    await expectStatus(
      await s.call('PUT', `/persons/${made.json.result.person_id}/credentials/password`, {
        body: { password },
      }),
      204,
    );
    const login = await opened();
    await expectStatus(await submitLogin(s.url, login, '+1 (202) 555-0142', password), 303);
  });
});

describe('the hosted form', () => {
  it('answers the page again with 401 for a wrong password, and the same login still completes', async () => {
    const person = await s.person();
    const login = await opened();
    const wrong = await text(await submitLogin(s.url, login, person.handle.value, 'not the password'));
    await expectStatus(wrong, 401);
    expect(wrong.text).toContain('The handle and password do not match.');
    expect(wrong.text).toContain(`value="${login.csrfToken}"`);
    expect(wrong.text).toContain(`value="${person.handle.value}"`);
    const failed = (await s.eventsNamed('AuthenticationFailed_v1')).filter(
      (e) => (e.handle as { value?: string } | undefined)?.value === person.handle.value,
    );
    expect(failed[0]).toMatchObject({
      failure_reason: 'invalid_credentials',
      failed_authn_method: 'password',
    });
    // Nobody had authenticated, so the person is not named (spec: "only if previously authenticated").
    expect(failed[0]).not.toHaveProperty('person_id');
    const ok = await submitLogin(s.url, login, person.handle.value, person.password);
    await expectStatus(ok, 303);
    const location = new URL(ok.headers.get('location')!);
    expect(location.searchParams.get('state')).toBe(login.state);
    expect(location.searchParams.get('code')).toBeTruthy();
  });

  it('refuses a form without the cookie, with another browser cookie, or from another origin (403)', async () => {
    const person = await s.person();
    const login = await opened();
    const other = await opened();
    for (const attempt of [
      { ...login, cookie: '' },
      { ...login, cookie: other.cookie },
    ]) {
      const res = await text(await submitLogin(s.url, attempt, person.handle.value, person.password));
      await expectStatus(res, 403);
      expect(res.text).toContain('not sent by the browser that opened this sign-in');
    }
    const foreign = await text(
      await submitLogin(s.url, login, person.handle.value, person.password, {
        origin: 'https://evil.example',
      }),
    );
    await expectStatus(foreign, 403);
    expect(foreign.text).toContain('posted from another origin');
    // None of it spent the login.
    await expectStatus(await submitLogin(s.url, login, person.handle.value, person.password), 303);
  });

  it('keeps two tabs of one browser apart: each login completes with its own state', async () => {
    const person = await s.person();
    const first = await opened();
    const second = await opened({}, first.cookie);
    expect(second.page.headers.get('set-cookie')!.split(';')[0]).toBe(first.cookie);
    for (const login of [second, first]) {
      const res = await submitLogin(s.url, login, person.handle.value, person.password);
      await expectStatus(res, 303);
      expect(new URL(res.headers.get('location')!).searchParams.get('state')).toBe(login.state);
    }
  });

  it('finishes a login once: a second submission is a 400 page', async () => {
    const person = await s.person();
    const login = await opened();
    await expectStatus(await submitLogin(s.url, login, person.handle.value, person.password), 303);
    const again = await text(await submitLogin(s.url, login, person.handle.value, person.password));
    await expectStatus(again, 400);
    expect(again.text).toContain('already been completed');
  });

  it('expires a login after OAUTH2_LOGIN_TTL_SECONDS (600 by default)', async () => {
    const person = await s.person();
    const login = await opened();
    clock.advance(601_000);
    const late = await text(await submitLogin(s.url, login, person.handle.value, person.password));
    await expectStatus(late, 400);
    expect(late.text).toContain('expired');
  });

  it('refuses a form that is not form-encoded or lacks a field (400)', async () => {
    const login = await opened();
    const json = await fetch(`${s.url}/oauth2/authorize/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: login.cookie },
      body: JSON.stringify({ csrf_token: login.csrfToken }),
    });
    await expectStatus(json, 400);
    const missing = await text(await submitLogin(s.url, login, '', 'x'));
    await expectStatus(missing, 400);
    expect(missing.text).toContain('handle must be given once');
  });

  it('answers 429 with Retry-After past the password limits', async () => {
    const person = await s.person();
    const login = await opened();
    for (let i = 0; i < 4; i++)
      await expectStatus(await submitLogin(s.url, login, person.handle.value, 'wrong'), 401);
    const limited = await submitLogin(s.url, login, person.handle.value, person.password);
    await expectStatus(limited, 429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('sends access_denied to the client when the token_minted hook refuses the login', async () => {
    const person = await s.person();
    const login = await opened();
    s.hook.answer = () => {
      throw new ServiceError(403, 'HOOK_BLOCKED', 'not this person');
    };
    try {
      const res = await submitLogin(s.url, login, person.handle.value, person.password);
      await expectStatus(res, 303);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
      expect(location.searchParams.get('error')).toBe('access_denied');
      expect(location.searchParams.get('state')).toBe(login.state);
      expect(location.searchParams.get('code')).toBeNull();
    } finally {
      s.hook.answer = () => undefined;
    }
    const failed = (await s.eventsNamed('AuthenticationFailed_v1')).filter(
      (e) => e.person_id === person.personId && e.failure_reason === 'token_blocked',
    );
    expect(failed).toHaveLength(1);
    expect(failed[0]?.authenticated_methods).toEqual(['password']);
  });
});
