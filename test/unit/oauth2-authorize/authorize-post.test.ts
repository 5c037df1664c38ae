import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import * as oauth from 'oauth4webapi';
import { expectStatus } from '../../helpers/expect-status.ts';
import {
  type AuthorizeService,
  authorizationUrl,
  discover,
  type MadeClient,
  opts,
  REDIRECT,
  startAuthorizeService,
  submitLogin,
} from './fixture.ts';

let s: AuthorizeService;
let client: MadeClient;
beforeAll(async () => {
  s = await startAuthorizeService();
  client = await s.createClient();
});
afterAll(() => s.stop());

/**
 * POST /oauth2/authorize as a client application's auto-submitted form sends it (OIDC Core 3.1.2.1):
 * form-encoded, from the application's origin, with no cookie of this service.
 */
async function postAuthorize(body: string, contentType = 'application/x-www-form-urlencoded') {
  const res = await fetch(`${s.url}/oauth2/authorize`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': contentType, origin: 'http://127.0.0.1:9' },
    body,
  });
  return { res, text: await res.text() };
}

/** The parameters oauth4webapi's caller would send, as a form body. */
async function validForm() {
  const { url, verifier, state, nonce } = await authorizationUrl(await discover(s), client.client_id);
  return { form: url.searchParams, verifier, state, nonce };
}

describe('POST /oauth2/authorize (form-serialized, OIDC Core 3.1.2.1)', () => {
  it('answers the sign-in page, whose login gives a code that oauth4webapi exchanges', async () => {
    const as = await discover(s);
    const { form, verifier, state, nonce } = await validForm();
    const { res, text } = await postAuthorize(form.toString());
    await expectStatus({ status: res.status, text }, 200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    expect(cookie).toMatch(/^oauth2_browser=[A-Za-z0-9_-]{43}$/);
    const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(text)?.[1];
    if (!csrfToken) throw new Error(`no csrf_token in the page: ${text.slice(0, 500)}`);

    const person = await s.person();
    const done = await submitLogin(s.url, { cookie, csrfToken }, person.handle.value, person.password);
    await expectStatus(done, 303);
    const c: oauth.Client = { client_id: client.client_id };
    const params = oauth.validateAuthResponse(as, c, new URL(done.headers.get('location')!), state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      c,
      await oauth.authorizationCodeGrantRequest(
        as,
        c,
        oauth.ClientSecretBasic(client.client_secret!),
        params,
        REDIRECT,
        verifier,
        opts,
      ),
      { expectedNonce: nonce, requireIdToken: true },
    );
    expect(oauth.getValidatedIdTokenClaims(tokens)?.sub).toBe(person.personId);
  });

  it('redirects a repeated parameter with invalid_request, the state and iss, as GET does', async () => {
    const { form } = await validForm();
    const { res, text } = await postAuthorize(`${form.toString()}&scope=read`);
    await expectStatus({ status: res.status, text }, 302);
    const location = new URL(res.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/scope must be given once/);
    expect(location.searchParams.get('state')).toBe(form.get('state'));
    expect(location.searchParams.get('iss')).toBe(s.url);
  });

  it('answers an HTML error page, never a redirect, for an unknown client_id', async () => {
    const { form } = await validForm();
    form.set('client_id', 'nope');
    const { res, text } = await postAuthorize(form.toString());
    await expectStatus({ status: res.status, text }, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(text).toMatch(/client_id names no client/);
  });

  it('reads the body, not the query string', async () => {
    const { form } = await validForm();
    const res = await fetch(`${s.url}/oauth2/authorize?${form.toString()}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 400);
    expect(text).toMatch(/client_id is required/);
  });

  it.each([
    ['JSON', 'application/json'],
    ['multipart', 'multipart/form-data; boundary=x'],
    ['plain text (what fetch sends for a string)', ''],
  ])('refuses a %s body with a 400 page naming the form encoding', async (_, contentType) => {
    const { form } = await validForm();
    const res = await fetch(`${s.url}/oauth2/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: contentType ? { 'content-type': contentType } : {},
      body: contentType === 'application/json' ? JSON.stringify(Object.fromEntries(form)) : form.toString(),
    });
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(text).toMatch(/authorization request must be sent as application\/x-www-form-urlencoded/);
  });

  it('refuses a body that cannot be read with a 400 page, not a 500', async () => {
    const broken = new ReadableStream<Uint8Array>({
      pull: (c) => c.error(new Error('the connection dropped')),
    });
    const res = await s.service.fetch(
      new Request(`${s.url}/oauth2/authorize`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: broken,
      }),
    );
    const text = await res.text();
    await expectStatus({ status: res.status, text }, 400);
    // The front door reads the first chunk of a body of undeclared length: the error can meet it there.
    expect(text).toMatch(/could not be read/);
  });

  it('is in the OpenAPI document with its form body', async () => {
    const doc = await s.call('GET', '/openapi.json');
    await expectStatus(doc, 200);
    const post = doc.json.paths['/oauth2/authorize'].post;
    expect(post.operationId).toBe('PostOauth2Authorize');
    const schema = post.requestBody.content['application/x-www-form-urlencoded'].schema;
    // With a pushed request (RFC 9126) client_id and request_uri are all: the rest was pushed.
    expect(schema.required).toEqual(['client_id']);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['redirect_uri', 'response_type', 'scope', 'code_challenge', 'request_uri']),
    );
  });
});
