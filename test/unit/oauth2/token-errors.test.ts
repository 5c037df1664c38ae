import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { expectStatus } from '../../helpers/expect-status.ts';
import { basic, expectOAuthError, type OAuth2TestService, startOAuth2Service } from './fixture.ts';

let t: OAuth2TestService;
let client: { client_id: string; client_secret?: string };
let auth: { authorization: string };
const TOKENS = '/oauth2/tokens';

beforeAll(async () => {
  t = await startOAuth2Service();
  client = await t.createClient({ scopes: ['read', 'write'] });
  auth = { authorization: basic(client.client_id, client.client_secret!) };
});
afterAll(() => t.stop());

const grant = 'grant_type=client_credentials';

describe('the token endpoint reads only forms', () => {
  it.each([
    ['application/json', '{"grant_type":"client_credentials"}', 'got "application/json"'],
    ['text/plain', grant, 'got "text/plain"'],
    ['multipart/form-data; boundary=x', grant, 'got "multipart/form-data"'],
  ])('refuses a %s body with invalid_request', async (type, body, says) => {
    const res = await t.post(TOKENS, body, { ...auth, 'content-type': type });
    expect(await expectOAuthError(res, 400, 'invalid_request')).toContain(says);
  });

  it('refuses a body without Content-Type', async () => {
    const res = await fetch(`${t.url}${TOKENS}`, { method: 'POST', headers: auth, body: new Blob([grant]) });
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe(
      'the request body must be application/x-www-form-urlencoded (no Content-Type was sent)',
    );
  });

  it('takes a charset parameter on the form type', async () => {
    const res = await t.post(TOKENS, grant, {
      ...auth,
      'content-type': 'application/x-www-form-urlencoded; charset=UTF-8',
    });
    await expectStatus(res, 200);
  });

  it.each(['grant_type', 'scope', 'client_id'])('refuses %s given twice, naming it', async (name) => {
    const body =
      name === 'grant_type'
        ? `${grant}&grant_type=client_credentials`
        : name === 'scope'
          ? `${grant}&scope=read&scope=write`
          : `${grant}&client_id=${client.client_id}&client_id=${client.client_id}`;
    const res = await t.post(TOKENS, body, auth);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe(
      `parameter "${name}" is given more than once`,
    );
  });

  it('answers a GET with 405', async () => {
    const res = await fetch(`${t.url}${TOKENS}`, { headers: auth });
    await expectStatus(res, 405);
  });
});

describe('grant_type', () => {
  it('missing is invalid_request', async () => {
    const res = await t.post(TOKENS, 'scope=read', auth);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe('grant_type is required');
  });

  it('given without a value counts as missing (RFC 6749 §3.1)', async () => {
    const res = await t.post(TOKENS, 'grant_type=&scope=read', auth);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe('grant_type is required');
  });

  it('unknown is unsupported_grant_type, naming what is supported', async () => {
    const res = await t.post(TOKENS, 'grant_type=password&username=a&password=b', auth);
    expect(await expectOAuthError(res, 400, 'unsupported_grant_type')).toBe(
      'grant_type "password" is not supported here (supported: client_credentials, urn:ietf:params:oauth:grant-type:token-exchange)',
    );
  });

  it('authorization_code is unsupported while no plugin registers it', async () => {
    const res = await t.post(
      TOKENS,
      'grant_type=authorization_code&code=x&redirect_uri=https://a.example/cb',
      auth,
    );
    await expectOAuthError(res, 400, 'unsupported_grant_type');
  });

  it("outside the client's grant types is unauthorized_client", async () => {
    const other = await t.createClient({
      grant_types: ['authorization_code'],
      redirect_uris: ['https://app.example/cb'],
    });
    const res = await t.post(TOKENS, grant, { authorization: basic(other.client_id, other.client_secret!) });
    expect(await expectOAuthError(res, 400, 'unauthorized_client')).toBe(
      `client ${other.client_id} may not use the client_credentials grant (its grant types: authorization_code)`,
    );
  });
});

describe('scope', () => {
  it("beyond the client's is invalid_scope, naming the scope", async () => {
    const res = await t.post(TOKENS, `${grant}&scope=read%20admin`, auth);
    expect(await expectOAuthError(res, 400, 'invalid_scope')).toBe(
      'scope "admin" is not one this client may be granted',
    );
  });

  it.each([
    ['two spaces', 'read%20%20write'],
    ['a leading space', '%20read'],
    ['a quote', 'read%20%22x%22'],
  ])('with %s is invalid_scope', async (_, scope) => {
    const res = await t.post(TOKENS, `${grant}&scope=${scope}`, auth);
    expect(await expectOAuthError(res, 400, 'invalid_scope')).toStartWith('scope must be scope tokens');
  });

  it('repeated inside the value is granted once', async () => {
    const res = await t.post(TOKENS, `${grant}&scope=read+read+write`, auth);
    await expectStatus(res, 200);
    expect((await res.json()).scope).toBe('read write');
  });
});

describe('client authentication', () => {
  it('by Basic with a wrong secret is invalid_client, 401 with a Basic challenge', async () => {
    const res = await t.post(TOKENS, grant, { authorization: basic(client.client_id, 'ocs_nope') });
    expect(await expectOAuthError(res, 401, 'invalid_client')).toBe(
      'unknown client_id or wrong client secret',
    );
  });

  it('by the form with a wrong secret is invalid_client, 401 too', async () => {
    const res = await t.post(TOKENS, `${grant}&client_id=${client.client_id}&client_secret=ocs_nope`);
    await expectOAuthError(res, 401, 'invalid_client');
  });

  it('of an unknown client_id is invalid_client with the same message', async () => {
    for (const id of ['00000000-0000-7000-8000-000000000000', 'not-a-uuid']) {
      const res = await t.post(TOKENS, grant, { authorization: basic(id, client.client_secret!) });
      expect(await expectOAuthError(res, 401, 'invalid_client')).toBe(
        'unknown client_id or wrong client secret',
      );
    }
  });

  it('missing altogether is invalid_client', async () => {
    const res = await t.post(TOKENS, grant);
    expect(await expectOAuthError(res, 401, 'invalid_client')).toStartWith(
      'client authentication is required',
    );
  });

  it('by Basic and client_secret in the form at once is invalid_request', async () => {
    const res = await t.post(TOKENS, `${grant}&client_secret=${client.client_secret}`, auth);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe(
      'the client authenticates twice: HTTP Basic and client_secret in the form; use one method',
    );
  });

  it('by Basic with client_id in the form too: the same client passes, another is invalid_request', async () => {
    await expectStatus(await t.post(TOKENS, `${grant}&client_id=${client.client_id}`, auth), 200);
    const other = await t.createClient();
    const res = await t.post(TOKENS, `${grant}&client_id=${other.client_id}`, auth);
    await expectOAuthError(res, 400, 'invalid_request');
  });

  it('with client_secret but no client_id in the form is invalid_request', async () => {
    const res = await t.post(TOKENS, `${grant}&client_secret=${client.client_secret}`);
    expect(await expectOAuthError(res, 400, 'invalid_request')).toBe(
      'client_secret is given without client_id',
    );
  });

  it('of a confidential client by client_id alone is invalid_client', async () => {
    const res = await t.post(TOKENS, `${grant}&client_id=${client.client_id}`);
    expect(await expectOAuthError(res, 401, 'invalid_client')).toContain('is confidential');
  });

  it('decodes Basic credentials per RFC 6749 appendix B: every character percent-encoded', async () => {
    const all = (s: string) =>
      [...new TextEncoder().encode(s)]
        .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
        .join('');
    const res = await t.post(TOKENS, grant, {
      authorization: basic(client.client_id, client.client_secret!, all),
    });
    await expectStatus(res, 200);
  });

  it('does not take a percent-encoded secret as the secret itself', async () => {
    // %5F is "_": a server comparing the raw text would refuse the first and accept the second.
    const secret = client.client_secret!;
    const encoded = secret.replaceAll('_', '%5F').replaceAll('-', '%2D');
    const raw = (s: string) => s;
    if (encoded !== secret) {
      await expectStatus(
        await t.post(TOKENS, grant, { authorization: basic(client.client_id, encoded, raw) }),
        200,
      );
    }
    const res = await t.post(TOKENS, grant, {
      authorization: basic(client.client_id, `${secret}%`, raw),
    });
    expect(await expectOAuthError(res, 401, 'invalid_client')).toBe(
      'the client secret in the Authorization header is not form-url-encoded (RFC 6749 appendix B)',
    );
  });

  it.each([
    ['another scheme', 'Bearer abc'],
    ['no colon', `Basic ${btoa('just-an-id')}`],
    ['not base64', 'Basic %%%'],
  ])('refuses an Authorization header with %s as invalid_client', async (_, authorization) => {
    const res = await t.post(TOKENS, grant, { authorization });
    await expectOAuthError(res, 401, 'invalid_client');
  });
});

describe('public clients', () => {
  it('may not have client_credentials, nor authenticate with a secret', async () => {
    const pub = await t.createClient({
      public: true,
      grant_types: ['authorization_code'],
      redirect_uris: ['http://127.0.0.1:8080/cb'],
    });
    expect(pub.client_secret).toBeUndefined();
    const withSecret = await t.post(TOKENS, grant, { authorization: basic(pub.client_id, 'anything') });
    expect(await expectOAuthError(withSecret, 401, 'invalid_client')).toContain('is public');
    // Identified by client_id alone, it reaches the grant check.
    const alone = await t.post(TOKENS, `${grant}&client_id=${pub.client_id}`);
    await expectOAuthError(alone, 400, 'unauthorized_client');
  });
});

describe('browser apps', () => {
  it('may call the token and revocation endpoints from any origin (CORS), introspection not', async () => {
    for (const path of ['/oauth2/tokens', '/oauth2/tokens/revoke']) {
      const preflight = await fetch(`${t.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://spa.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      await expectStatus(preflight, 204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      expect(preflight.headers.get('access-control-allow-methods')).toBe('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toContain('content-type');
    }
    const res = await t.post(TOKENS, grant, { ...auth, origin: 'https://spa.example' });
    await expectStatus(res, 200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const refused = await t.post(TOKENS, grant, { origin: 'https://spa.example' });
    await expectOAuthError(refused, 401, 'invalid_client');
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    const introspection = await fetch(`${t.url}/oauth2/tokens/introspect`, { method: 'OPTIONS' });
    await expectStatus(introspection, 405);
  });
});

describe('the token endpoint behind the front door and behind the app', () => {
  /** The same form sent with a declared length (the front door's direct route) and as a stream (the app's route). */
  async function both(form: string, headers: Record<string, string> = auth) {
    const init = { 'content-type': 'application/x-www-form-urlencoded', ...headers };
    const declared = await t.service.fetch(
      new Request(`${t.url}${TOKENS}`, { method: 'POST', headers: init, body: form }),
    );
    const streamed = await t.service.fetch(
      new Request(`${t.url}${TOKENS}`, {
        method: 'POST',
        headers: init,
        body: new Blob([form]).stream(),
        duplex: 'half',
      } as RequestInit),
    );
    return [declared, streamed] as const;
  }

  it('grants alike, each answer with its own request id and no-store', async () => {
    for (const res of await both(`${grant}&scope=read`)) {
      await expectStatus(res, 200);
      expect((await res.json()).scope).toBe('read');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('x-request-id')).toBeTruthy();
    }
  });

  it('refuses alike: a parameter twice, an unknown grant, a wrong secret', async () => {
    const cases: Array<[string, Record<string, string>, number, string]> = [
      [`${grant}&scope=read&scope=read`, auth, 400, 'invalid_request'],
      ['grant_type=password', auth, 400, 'unsupported_grant_type'],
      [grant, { authorization: basic(client.client_id, 'ocs_wrong') }, 401, 'invalid_client'],
    ];
    for (const [form, headers, status, error] of cases) {
      const [declared, streamed] = await both(form, headers);
      const a = await expectOAuthError(declared, status, error);
      const b = await expectOAuthError(streamed, status, error);
      expect(a).toBe(b);
      expect(declared.headers.get('www-authenticate')).toBe(streamed.headers.get('www-authenticate'));
    }
  });
});
