// An authorization request by POST from another site (OpenID Connect Core 3.1.2.1): the browser sends
// no SameSite=Lax cookie with it, so the service has the browser post the same form again from its own
// origin, where the session cookie comes along.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { expectStatus } from '../../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  type MadeClient,
  startAuthorizeService,
} from '../fixture.ts';
import { CookieJar, callbackOf, signIn } from './browser-jar.ts';

let s: AuthorizeService;
let client: MadeClient;
let who: Awaited<ReturnType<AuthorizeService['person']>>;

beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
  who = await s.person();
});
afterAll(() => s.stop());

/** A POST of the request's parameters, as a browser sends a form navigation (what Sec-Fetch-Site says). */
async function posted(
  jar: CookieJar,
  site: string,
  cookies: boolean,
  extra: Record<string, string> = {},
  dest = 'document',
) {
  const request = await authorizationUrl(await discover(s), client.client_id, extra);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    'sec-fetch-site': site,
    'sec-fetch-dest': dest,
  };
  if (cookies && jar.cookies.size) headers.cookie = jar.header();
  const res = await fetch(`${s.url}/oauth2/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers,
    body: request.url.searchParams.toString(),
  });
  return { res, params: request.url.searchParams, ...request };
}

describe('POST /oauth2/authorize from another site', () => {
  test('answers a page that posts the same form to the endpoint, its one script allowed by hash', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    // Cross-site: the browser left the Lax session cookie out.
    const { res, params } = await posted(jar, 'cross-site', false, { prompt: 'none' });
    await expectStatus(res.clone(), 200);
    const html = await res.text();
    expect(html).toContain(`<form method="post" action="${s.url}/oauth2/authorize">`);
    for (const [name, value] of params) expect(html).toContain(`name="${name}" value="${value}"`);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toMatch(/script-src 'sha256-[^']+'/);
    // The re-posted request's answer redirects to the client: form-action allows its origin.
    expect(csp).toContain("form-action 'self' http://127.0.0.1:9;");
    expect(res.headers.get('set-cookie')).toBeNull();

    // Posted again from the service's own page, with the cookie: the session answers.
    const again = await fetch(`${s.url}/oauth2/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'sec-fetch-site': 'same-origin',
        cookie: jar.header(),
      },
      body: params.toString(),
    });
    expect((await callbackOf(again)).get('code')).toBeTruthy();
  });

  test('from the same site, or the browser itself (none), it is answered at once', async () => {
    const jar = new CookieJar();
    await signIn(jar, s, client.client_id, who);
    for (const site of ['same-site', 'same-origin', 'none']) {
      const { res } = await posted(jar, site, true, { prompt: 'none' });
      expect((await callbackOf(res)).get('code')).toBeTruthy();
    }
  });

  test("in another site's frame it is answered at once (the cookie stays out there anyway)", async () => {
    const { res } = await posted(new CookieJar(), 'cross-site', false, { prompt: 'none' }, 'iframe');
    expect((await callbackOf(res)).get('error')).toBe('login_required');
  });

  test('a request that fails its checks is refused at once, never posted on', async () => {
    const { res } = await posted(new CookieJar(), 'cross-site', false, { response_type: 'token' });
    expect((await callbackOf(res)).get('error')).toBe('unsupported_response_type');
  });
});
