import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  type MadeClient,
  openLogin,
  startAuthorizeService,
} from '../oauth2-authorize/fixture.ts';

/**
 * The hosted login with no plugin attached to its SSO buttons (no sso-signin): no button is shown, and
 * hand-made requests to the buttons' routes are answered by the hosted login alone, as before the
 * buttons moved into plugins/sso/hosted-login.
 */
let s: AuthorizeService;
let as: oauth.AuthorizationServer;
let client: MadeClient;

beforeAll(async () => {
  s = await startAuthorizeService();
  as = await discover(s);
  client = await s.createClient();
});
afterAll(async () => {
  await s?.stop();
});

const messageOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe('the hosted login without SSO sign-in', () => {
  it('shows no SSO button', async () => {
    const opened = await openLogin((await authorizationUrl(as, client.client_id)).url);
    expect(opened.html).not.toContain('class="sso"');
  });

  it('answers a hand-made button with the page, saying the provider is not offered', async () => {
    const opened = await openLogin((await authorizationUrl(as, client.client_id)).url);
    const res = await fetch(`${s.url}/oauth2/authorize/sso`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: opened.cookie, origin: s.url },
      body: new URLSearchParams({ csrf_token: opened.csrfToken, credential: 'acme-app' }).toString(),
    });
    const html = await res.clone().text();
    await expectStatus(res, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(messageOf(html)).toBe('This sign-in provider is not offered here.');
    expect(html).toContain('name="csrf_token"');
  });

  it('answers a provider callback with an error page', async () => {
    const res = await fetch(`${s.url}/oauth2/authorize/sso/callback/some-callback?state=x&code=y`, {
      redirect: 'manual',
    });
    const html = await res.clone().text();
    await expectStatus(res, 400);
    expect(html).toContain('single sign-on is not offered here');
  });
});
