import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import type { ServiceEvent } from '../../../core/events/types.ts';
import { oidcProvider, sso, ssoSignIn } from '../../../plugins/sso/index.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { startRecordingIdentityService } from '../../helpers/identity-recorder.ts';
import { browseTo, type OpAccount, startOidcOp } from '../../helpers/oidc-op.ts';

/**
 * SSO links a provider's identity to a person only through an email verified on both sides: the
 * provider vouches for it, and the person holding it here has verified it. A real OpenID provider
 * (oidc-provider) on loopback signs the person in.
 */
const APP = 'https://app.example/signed-in';
const client = {
  clientId: 'acme-app',
  clientSecret: 'a-client-secret-of-the-loopback-op',
  // The retired shared callback: the provider allows the credential's own once it is created.
  redirectUri: 'https://ids.test/sso/oidc/callback',
};
/** The credential's own redirect URI, as its API shows it. */
let CALLBACK = '';
const acme = oidcProvider({ id: 'acme', displayName: 'Acme' });

let t: Awaited<ReturnType<typeof startRecordingIdentityService>>;
let op: Awaited<ReturnType<typeof startOidcOp>>;

beforeAll(async () => {
  op = await startOidcOp(client);
  t = await startRecordingIdentityService({ extra: [sso({ providers: [acme] }), ssoSignIn()] });
  const made = await t.call('POST', '/organizations/sso/oidc/provider-credentials', {
    body: {
      provider: 'acme',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      options: { acme: { issuer: op.issuer, authorize_scopes: ['email'] } },
    },
  });
  await expectStatus(made, 201);
  CALLBACK = made.json.result.redirect_uri;
  op.allowRedirectUri(CALLBACK);
  await expectStatus(
    await t.call('PUT', '/organizations/sso/redirect-uris', { body: { redirect_uris: [APP] } }),
    200,
  );
});
afterAll(async () => {
  await t.stop();
  await op.stop();
});

/** A whole SSO sign-in as the account; the fragment the application receives. */
async function signIn(account: OpAccount) {
  op.state.decision = account;
  const q = new URLSearchParams({ client_id: client.clientId, redirect_uri: APP });
  const started = await t.call('GET', `/sso/oidc/start?${q}`, { key: null });
  await expectStatus(started, 302);
  const back = await browseTo(started.headers.get('location') ?? '', CALLBACK);
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0]!;
  const res = await t.call('GET', `${back.pathname}${back.search}`, {
    orgId: null,
    key: null,
    headers: { cookie },
  });
  await expectStatus(res, 302);
  return new URLSearchParams(new URL(res.headers.get('location') ?? APP).hash.slice(1));
}

describe('SSO and verified emails', () => {
  it('creates a person whose email the provider vouched for as verified', async () => {
    const fragment = await signIn({ sub: 'bob', email: 'Bob@Acme.example', email_verified: true });
    const personId = fragment.get('person_id') ?? '';
    const person = await t.call('GET', `/persons/${personId}`);
    await expectStatus(person, 200);
    expect(person.json.result.handles).toEqual([
      { type: 'email_address', value: 'bob@acme.example', verified: true },
    ]);
  });

  it('does not link to a person holding the address unverified, and links once it is verified', async () => {
    const made = await t.call('POST', '/persons', {
      body: { handles: [{ type: 'email_address', value: 'carol@acme.example' }] },
    });
    await expectStatus(made, 201);
    const personId: string = made.json.result.person_id;
    const carol = { sub: 'carol', email: 'carol@acme.example', email_verified: true };

    const refused = await signIn(carol);
    expect(refused.get('error')).toBe('access_denied');
    expect(refused.get('token')).toBeNull();
    expect(refused.get('error_description')).toContain('has not verified it');
    const deadline = Date.now() + 5000;
    const failure = () =>
      t.events.find(
        (e: ServiceEvent) =>
          e.event_metadata.event_name === 'AuthenticationFailed_v1' &&
          e.failure_reason === 'unverified_handle',
      );
    while (!failure() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(failure()).toBeDefined();
    // Not linked, so nobody was authenticated: the person holding the address is not named.
    expect(failure()?.person_id).toBeUndefined();

    await expectStatus(
      await t.call('PUT', '/persons', {
        body: { handles: [{ type: 'email_address', value: 'carol@acme.example', verified: true }] },
      }),
      200,
    );
    const linked = await signIn(carol);
    expect(linked.get('error')).toBeNull();
    expect(linked.get('person_id')).toBe(personId);
  });
});
