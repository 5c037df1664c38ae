import { afterAll, describe, expect, it } from 'bun:test';
import {
  type AcmeOptions,
  AcmeProfileError,
  createAcmeProvider,
} from '@identity-service-examples/acme-sso-provider';
import type { SsoProfileContext } from 'identity-service/core';
import * as v from 'valibot';

const DOMAIN = 'example.acme-id.com';

/** The accounts Acme ID's userinfo endpoint answers with, by access token. */
const ACCOUNTS: Record<string, unknown> = {
  'tok-confirmed': {
    id: 4815162342,
    email: 'ada@example.com',
    email_verified_at: '2024-03-01T10:00:00Z',
    display_name: 'Ada Lovelace',
    avatar_url: 'https://cdn.acme-id.com/a/4815162342.png',
    plan: 'team',
  },
  'tok-unconfirmed': { id: 'u-77', email: 'bob@example.com', email_verified_at: null, display_name: 'Bob' },
  'tok-no-email': { id: 9, email: null, display_name: null },
  'tok-not-an-account': { hello: 'world' },
};

const seen: Request[] = [];
// A stand-in for Acme ID on loopback; the deployment's origin points the provider at it, with the
// tenant's domain as the first path segment so that the test sees which tenant was asked.
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(req): Response {
    seen.push(req);
    const url = new URL(req.url);
    if (url.pathname === '/elsewhere') return Response.json(ACCOUNTS['tok-confirmed']);
    if (url.pathname !== `/${DOMAIN}/api/v2/me`) return new Response('not found', { status: 404 });
    const token = /^Bearer (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1] ?? '';
    if (token === 'tok-redirect') return Response.redirect(`http://127.0.0.1:${server.port}/elsewhere`, 302);
    if (token === 'tok-not-json') return new Response('<html>maintenance</html>');
    const account = ACCOUNTS[token];
    return account ? Response.json(account) : Response.json({ error: 'invalid_token' }, { status: 401 });
  },
});
afterAll(() => server.stop(true));

const provider = createAcmeProvider({ origin: (domain) => `http://127.0.0.1:${server.port}/${domain}` });
const credential: SsoProfileContext<AcmeOptions> = {
  clientId: 'acme-client',
  clientSecret: 'acme-secret',
  options: v.parse(provider.options, { domain: DOMAIN }),
  now: 1_700_000_000,
  // The runtime's fetch in place of the service's guarded one: this server is plain http on loopback.
  fetch: (url, init) => fetch(url, { ...init, body: undefined }),
};
const profileOf = (accessToken: string) => provider.profile!({ accessToken }, credential);

async function refusal(accessToken: string): Promise<AcmeProfileError> {
  const error = await profileOf(accessToken).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AcmeProfileError)) throw new Error(`expected an AcmeProfileError, got ${error}`);
  return error;
}

describe("the example provider's profile, read from a userinfo endpoint on loopback", () => {
  it("asks the tenant's userinfo endpoint with the access token as a bearer token", async () => {
    seen.length = 0;
    await profileOf('tok-confirmed');
    expect(seen).toHaveLength(1);
    const req = seen[0]!;
    expect(req.method).toBe('GET');
    expect(new URL(req.url).pathname).toBe(`/${DOMAIN}/api/v2/me`);
    expect(req.headers.get('authorization')).toBe('Bearer tok-confirmed');
    expect(req.headers.get('accept')).toBe('application/json');
  });

  it('maps a confirmed account: numeric id as the subject, email verified, name and picture', async () => {
    expect(await profileOf('tok-confirmed')).toEqual({
      subject: '4815162342',
      email: 'ada@example.com',
      emailVerified: true,
      name: 'Ada Lovelace',
      picture: 'https://cdn.acme-id.com/a/4815162342.png',
    });
  });

  it('gives an unconfirmed email as unverified, so it can find or create no person', async () => {
    expect(await profileOf('tok-unconfirmed')).toEqual({
      subject: 'u-77',
      email: 'bob@example.com',
      emailVerified: false,
      name: 'Bob',
    });
  });

  it('gives an account without an email as unverified, with no email', async () => {
    expect(await profileOf('tok-no-email')).toEqual({ subject: '9', emailVerified: false });
  });

  it('fails with ACME_USERINFO_REFUSED, and the status, when the token is refused', async () => {
    const error = await refusal('tok-expired');
    expect(error.code).toBe('ACME_USERINFO_REFUSED');
    expect(error.message).toBe('acme: the userinfo endpoint answered 401');
    expect(error.message).not.toContain('tok-expired');
  });

  it('fails with ACME_USERINFO_UNREADABLE when the answer is not an account, or not JSON', async () => {
    const notAccount = await refusal('tok-not-an-account');
    expect(notAccount.code).toBe('ACME_USERINFO_UNREADABLE');
    expect(notAccount.message).toContain('id');
    expect((await refusal('tok-not-json')).code).toBe('ACME_USERINFO_UNREADABLE');
  });

  it('follows no redirect, so the bearer token goes nowhere else', async () => {
    seen.length = 0;
    expect((await refusal('tok-redirect')).code).toBe('ACME_USERINFO_UNREADABLE');
    expect(seen.map((r) => new URL(r.url).pathname)).toEqual([`/${DOMAIN}/api/v2/me`]);
  });
});
