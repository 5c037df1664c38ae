import { afterAll, beforeAll, describe, expect, it } from 'bun:test';
import { eq } from 'drizzle-orm';
import { ServiceError } from '../../../core/errors.ts';
import type { ServiceEvent } from '../../../core/events/types.ts';
import { oauth2AuthorizeLogins } from '../../../plugins/oauth2-authorize/schema.ts';
import { digest } from '../../../plugins/oauth2-authorize/store/digest.ts';
import { expectStatus } from '../../helpers/expect-status.ts';
import { exchange, openLogin } from './fixture.ts';
import { CREDENTIALS, opClient, type SsoLogin, startSsoLogin } from './sso-fixture.ts';

/**
 * SSO inside the hosted login by HTTP, as a browser would go: which buttons the page offers, the
 * refused starts, and every way the provider's answer can fail, against a real OpenID provider
 * (oidc-provider on loopback) and the application's side in oauth4webapi.
 */
let f: SsoLogin;
let other: { orgId: string; key: string };
/** The hosted login's redirect URIs of acme-off (this organization's) and acme-other (another's). */
const hosted = { off: '', elsewhere: '' };

beforeAll(async () => {
  f = await startSsoLogin();
  const off = await f.s.call('POST', CREDENTIALS, {
    body: {
      provider: 'acme',
      client_id: 'acme-off',
      client_secret: 'another-secret',
      label: 'Acme Off',
      options: { acme: { issuer: f.op.issuer } },
    },
  });
  await expectStatus(off, 201);
  expect(off.json.result.enable_in_service_oidc_authz_server).toBe(false);
  hosted.off = off.json.result.hosted_login_redirect_uri;
  const { organization, apiKey } = await f.s.service.ctx.orgs.create('Other');
  other = { orgId: organization.id, key: apiKey };
  const elsewhere = await f.s.call('POST', CREDENTIALS, {
    orgId: other.orgId,
    key: other.key,
    body: {
      provider: 'acme',
      client_id: 'acme-other',
      client_secret: 'a-third-secret',
      label: 'Other Org',
      enable_in_service_oidc_authz_server: true,
      options: { acme: { issuer: f.op.issuer } },
    },
  });
  await expectStatus(elsewhere, 201);
  hosted.elsewhere = elsewhere.json.result.hosted_login_redirect_uri;
});
afterAll(async () => {
  await f?.stop();
});

const verified = (name: string) => ({
  sub: `${name}-at-acme`,
  email: `${name}@acme.example`,
  email_verified: true,
});

/** The events of this name (waiting up to 5 s for one that `match` accepts). */
async function eventWhere(name: string, match: (e: ServiceEvent) => boolean) {
  const deadline = Date.now() + 5000;
  for (;;) {
    const found = (await f.s.eventsNamed(name)).find(match);
    if (found || Date.now() > deadline) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
}
const failedWith = (reason: string) =>
  eventWhere(
    'AuthenticationFailed_v1',
    (e) => e.failure_reason === reason && e.failed_authn_method === 'oidc',
  );

const buttons = (html: string) =>
  [...html.matchAll(/<button type="submit">Sign in with ([^<]+)<\/button>/g)].map((m) => m[1]);
const messageOf = (html: string) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html)?.[1];

describe('which SSO buttons the hosted login offers', () => {
  it("shows one button per credential of the client's organization enabled for the authorization server", async () => {
    const opened = await openLogin((await f.begin()).url);
    expect(buttons(opened.html)).toEqual(['Acme Staff']);
    // The button posts to the service, with the login's CSRF token.
    expect(opened.html).toContain(`action="${f.s.url}/oauth2/authorize/sso"`);
    expect(opened.page.headers.get('content-security-policy')).toContain(`form-action 'self'`);
    expect(opened.page.headers.get('content-security-policy')).toContain(f.op.issuer);
  });

  it('draws the buttons and the CSP form-action from public fields, opening no secret', async () => {
    // Every unsealing goes through the service's one SecretBox: count the SSO credentials' openings.
    const box = f.s.service.ctx.secrets;
    const open = box.open.bind(box);
    const opened: string[] = [];
    box.open = (sealed, context) => {
      if (context.startsWith('sso-credential:')) opened.push(context);
      return open(sealed, context);
    };
    try {
      const { organization, apiKey } = await f.s.service.ctx.orgs.create('Third');
      const as = { orgId: organization.id, key: apiKey };
      const made = await f.s.call('POST', CREDENTIALS, {
        ...as,
        body: {
          provider: 'acme',
          client_id: 'acme-third',
          client_secret: 'never-opened-for-a-page',
          label: 'Third Staff',
          enable_in_service_oidc_authz_server: true,
          options: { acme: { issuer: f.op.issuer } },
        },
      });
      await expectStatus(made, 201);
      const client = await f.s.createClient({ redirect_uris: [f.redirectUri] }, as);
      const a = await f.begin({ client_id: client.client_id });
      const page = await openLogin(a.url);
      expect(buttons(page.html)).toEqual(['Third Staff']);
      const csp = page.page.headers.get('content-security-policy') ?? '';
      const formAction = /form-action ([^;]+)/.exec(csp)?.[1]?.split(' ');
      expect(formAction).toEqual(["'self'", new URL(f.redirectUri).origin, new URL(f.op.issuer).origin]);
      expect(opened).toEqual([]);
      // Pressing the button is what opens the credential: the count sees real unsealing.
      await expectStatus(await f.pressButton(page, 'acme-third'), 303);
      expect(opened.some((c) => c.endsWith(':client_secret'))).toBe(true);
    } finally {
      box.open = open;
    }
  });

  it('refuses a hand-made start of a credential with the flag off or of another organization', async () => {
    for (const credential of ['acme-off', 'acme-other', 'no-such-credential']) {
      const opened = await openLogin((await f.begin()).url);
      const res = await f.pressButton(opened, credential);
      const html = await res.clone().text();
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      expect(messageOf(html)).toBe('This sign-in provider is not offered here.');
    }
  });

  it('removes the button at once when the flag is turned off, and refuses its start', async () => {
    const path = `${CREDENTIALS}/${opClient.clientId}`;
    const opened = await openLogin((await f.begin()).url);
    await expectStatus(
      await f.s.call('PATCH', path, { body: { enable_in_service_oidc_authz_server: false } }),
      200,
    );
    try {
      expect(buttons((await openLogin((await f.begin()).url)).html)).toEqual([]);
      // The page opened before the change still shows the button: pressing it is refused.
      const res = await f.pressButton(opened);
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      const direct = await fetch((await f.begin({ idp: opClient.clientId })).url, { redirect: 'manual' });
      await expectStatus(direct, 400);
      expect(messageOf(await direct.text())).toContain('named by idp is not available');
    } finally {
      await expectStatus(
        await f.s.call('PATCH', path, { body: { enable_in_service_oidc_authz_server: true } }),
        200,
      );
    }
  });

  it('refuses the provider answer of a credential whose flag was turned off meanwhile', async () => {
    const path = `${CREDENTIALS}/${opClient.clientId}`;
    f.op.state.decision = verified('jo');
    const opened = await openLogin((await f.begin()).url);
    const pressed = await f.pressButton(opened);
    await expectStatus(pressed, 303);
    const back = await f.atProvider(pressed.headers.get('location')!);
    await expectStatus(
      await f.s.call('PATCH', path, { body: { enable_in_service_oidc_authz_server: false } }),
      200,
    );
    try {
      const res = await f.callBack(back, opened.cookie);
      const html = await res.text();
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      expect(messageOf(html)).toBe('This sign-in provider is no longer offered here.');
      expect(await failedWith('not_enabled')).toBeDefined();
    } finally {
      await expectStatus(
        await f.s.call('PATCH', path, { body: { enable_in_service_oidc_authz_server: true } }),
        200,
      );
    }
  }, 60_000);

  it('answers the page with a message, never a redirect, for idp naming a credential not offered', async () => {
    for (const idp of ['acme-off', 'acme-other']) {
      const res = await fetch((await f.begin({ idp })).url, { redirect: 'manual' });
      const html = await res.text();
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      expect(messageOf(html)).toBe(
        `The sign-in provider &quot;${idp}&quot; named by idp is not available for Acme App.`,
      );
      expect(buttons(html)).toEqual(['Acme Staff']);
    }
  });

  it('goes straight to the provider for idp naming an offered credential', async () => {
    const res = await fetch((await f.begin({ idp: opClient.clientId })).url, { redirect: 'manual' });
    await expectStatus(res, 303);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin).toBe(f.op.issuer);
    expect(location.searchParams.get('redirect_uri')).toBe(f.callbackUrl);
    expect(location.searchParams.get('code_challenge_method')).toBe('S256');
    expect(res.headers.get('set-cookie')).toContain('oauth2_browser=');
  });
});

describe('the provider round trip in the hosted login', () => {
  it('creates the person on the first sign-in and reuses it on the second, with the events', async () => {
    f.op.state.decision = verified('cleo');
    const subs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const a = await f.begin();
      const { res } = await f.signIn(a);
      await expectStatus(res, 303);
      const { claims } = await f.redeem(a, new URL(res.headers.get('location')!));
      subs.push(claims.sub);
    }
    expect(subs[1]).toBe(subs[0]!);
    const created = (await f.s.eventsNamed('PersonCreated_v1')).filter((e) => e.person_id === subs[0]);
    expect(created).toHaveLength(1);
    const succeeded = await eventWhere('AuthenticationSucceeded_v1', (e) => e.person_id === subs[0]);
    expect(succeeded).toMatchObject({ success_authn_method: 'oidc', authenticated_methods: ['oidc'] });
    expect(succeeded).not.toHaveProperty('handle');
    const minted = await eventWhere('TokenMinted_v1', (e) => e.person_id === subs[0]);
    expect(minted).toBeDefined();
  }, 60_000);

  it('keeps the client state, nonce, PKCE, scopes and redirect_uri across the provider', async () => {
    f.op.state.decision = verified('dora');
    const a = await f.begin({ scope: 'openid read' });
    const { res } = await f.signIn(a);
    await expectStatus(res, 303);
    const callback = new URL(res.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(f.redirectUri);
    expect(callback.searchParams.get('state')).toBe(a.state);
    const { tokens, claims } = await f.redeem(a, callback);
    expect(tokens.scope).toBe('openid read');
    expect(claims.nonce).toBe(a.nonce);
  }, 60_000);

  it('sends access_denied to the client when the person refuses at the provider', async () => {
    f.op.state.decision = 'deny';
    const a = await f.begin();
    const { res } = await f.signIn(a);
    await expectStatus(res, 303);
    const callback = new URL(res.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(f.redirectUri);
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(callback.searchParams.get('state')).toBe(a.state);
    expect(callback.searchParams.get('code')).toBeNull();
    expect(await failedWith('access_denied')).toBeDefined();
  }, 60_000);

  it('shows the page again for a replayed provider callback, and that page still signs in', async () => {
    f.op.state.decision = verified('eve');
    const replays = (await f.s.eventsNamed('AuthenticationFailed_v1', 0)).filter(
      (e) => e.failure_reason === 'replayed_state',
    ).length;
    const a = await f.begin();
    const first = await f.signIn(a);
    await expectStatus(first.res, 303);
    const again = await f.callBack(first.back, first.cookie);
    const html = await again.clone().text();
    await expectStatus(again, 400);
    expect(again.headers.get('location')).toBeNull();
    expect(messageOf(html)).toBe(
      'This sign-in link from the provider was already used (a reload or the back button). Sign in again.',
    );
    expect(buttons(html)).toEqual(['Acme Staff']);
    const failed = (await f.s.eventsNamed('AuthenticationFailed_v1', replays + 1)).filter(
      (e) => e.failure_reason === 'replayed_state',
    );
    expect(failed).toHaveLength(replays + 1);
    expect(failed.at(-1)).toMatchObject({ failed_authn_method: 'oidc' });
    // The page is a fresh login for the same authorization request: its state, nonce and PKCE.
    const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
    const pressed = await f.pressButton({ cookie: first.cookie, csrfToken });
    await expectStatus(pressed, 303);
    const done = await f.callBack(await f.atProvider(pressed.headers.get('location')!), first.cookie);
    await expectStatus(done, 303);
    const callback = new URL(done.headers.get('location')!);
    expect(callback.searchParams.get('state')).toBe(a.state);
    const { claims } = await f.redeem(a, callback);
    expect(claims.nonce).toBe(a.nonce);
  }, 60_000);

  it('answers an error page, never a code, for a replayed callback from another browser', async () => {
    f.op.state.decision = verified('eve');
    const first = await f.signIn(await f.begin());
    await expectStatus(first.res, 303);
    const stranger = await openLogin((await f.begin()).url);
    const res = await f.callBack(first.back, stranger.cookie);
    const html = await res.text();
    await expectStatus(res, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(html).not.toContain('name="csrf_token"');
    expect(html).toContain('this answer from the provider was already used');
  }, 60_000);

  it('answers an error page for a replayed callback once its authorization request has expired', async () => {
    f.op.state.decision = verified('eve');
    const opened = await openLogin((await f.begin()).url);
    const pressed = await f.pressButton(opened);
    const back = await f.atProvider(pressed.headers.get('location')!);
    await expectStatus(await f.callBack(back, opened.cookie), 303);
    await f.s.service.ctx.storage.db
      .update(oauth2AuthorizeLogins)
      .set({ expiresAt: 0 })
      .where(eq(oauth2AuthorizeLogins.loginHash, await digest(opened.csrfToken)));
    const res = await f.callBack(back, opened.cookie);
    const html = await res.text();
    await expectStatus(res, 400);
    expect(res.headers.get('location')).toBeNull();
    expect(html).not.toContain('name="csrf_token"');
    expect(html).toContain('the sign-in it belonged to has expired');
    expect(await failedWith('replayed_state')).toBeDefined();
  }, 60_000);

  it('shows the page again with a message for a wrong nonce, and the new page still signs in', async () => {
    f.op.state.decision = verified('finn');
    f.op.wrongNonce();
    const a = await f.begin();
    const { res, html, cookie } = await f.signIn(a);
    await expectStatus(res, 400);
    expect(messageOf(html)).toBe('The answer from the provider could not be verified.');
    expect(await failedWith('bad_id_token')).toBeDefined();
    // The page offers a fresh login for the same authorization request.
    const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(html)![1]!;
    const pressed = await f.pressButton({ cookie, csrfToken });
    await expectStatus(pressed, 303);
    const done = await f.callBack(await f.atProvider(pressed.headers.get('location')!), cookie);
    await expectStatus(done, 303);
    const { claims } = await f.redeem(a, new URL(done.headers.get('location')!));
    expect(claims.nonce).toBe(a.nonce);
  }, 60_000);

  it('shows the page with a message when the provider does not vouch for the email', async () => {
    f.op.state.decision = { sub: 'gus-at-acme', email: 'gus@acme.example', email_verified: false };
    const { res, html } = await f.signIn(await f.begin());
    await expectStatus(res, 400);
    expect(messageOf(html)).toContain('does not say your email address is verified');
    expect(await failedWith('unverified_email')).toBeDefined();
  }, 60_000);

  it('shows the page with the hook message, issues no code and stores nobody when token_minted blocks', async () => {
    f.op.state.decision = verified('hal');
    f.s.hook.answer = () => {
      throw new ServiceError(403, 'HOOK_BLOCKED', 'hal may not use this application');
    };
    try {
      const { res, html } = await f.signIn(await f.begin());
      await expectStatus(res, 400);
      expect(res.headers.get('location')).toBeNull();
      expect(messageOf(html)).toBe('hal may not use this application');
      // hal's first sign-in: the person was never stored, so the failure names nobody.
      const failed = await failedWith('token_blocked');
      expect(failed).toBeDefined();
      expect(failed).not.toHaveProperty('person_id');
      expect(failed).not.toHaveProperty('authenticated_methods');
      const named = (e: ServiceEvent) => JSON.stringify(e).includes('hal@acme.example');
      expect((await f.s.eventsNamed('PersonCreated_v1')).filter(named)).toEqual([]);
    } finally {
      f.s.hook.answer = () => undefined;
    }
    // Allowed the next time, hal is stored then, and signs in.
    const { res } = await f.signIn(await f.begin());
    await expectStatus(res, 303);
    expect(
      await eventWhere('PersonCreated_v1', (e) => JSON.stringify(e).includes('hal@acme.example')),
    ).toBeDefined();
  }, 60_000);

  it('signs two first sign-ins of one person racing each other in as the one person stored', async () => {
    f.op.state.decision = verified('jon');
    // Both reach the hook before either stores its person: each holds a prospective person of its own.
    let arrived = 0;
    let bothThere!: () => void;
    const barrier = new Promise<void>((r) => {
      bothThere = r;
    });
    let releasedAt = 0;
    f.s.hook.answer = async () => {
      if (++arrived === 2) {
        // Into a later second than either mint began in, to tell the login's auth_time from the retry's.
        await Bun.sleep(1100);
        releasedAt = Date.now();
        bothThere();
      }
      if (arrived <= 2) await barrier;
      return undefined;
    };
    try {
      const logins = [];
      for (let i = 0; i < 2; i++) {
        const a = await f.begin();
        const opened = await openLogin(a.url);
        const pressed = await f.pressButton(opened);
        await expectStatus(pressed, 303);
        logins.push({ a, opened, back: await f.atProvider(pressed.headers.get('location')!) });
      }
      const answers = await Promise.all(logins.map((l) => f.callBack(l.back, l.opened.cookie)));
      const subs: string[] = [];
      for (const [i, res] of answers.entries()) {
        await expectStatus(res, 303);
        const { claims } = await f.redeem(logins[i]!.a, new URL(res.headers.get('location')!));
        subs.push(claims.sub);
        // Both authenticated before the hook held them; the one minted again keeps its login's time.
        expect(claims.auth_time).toBeLessThan(Math.floor(releasedAt / 1000));
      }
      expect(subs[0]).toBeTruthy();
      expect(subs[1]).toBe(subs[0]!);
      // The one that lost the race asked the hook again, for the person stored.
      expect(arrived).toBe(3);
      expect(f.s.hook.seen.at(-1)!.personId).toBe(subs[0]!);
      const named = (e: ServiceEvent) => JSON.stringify(e).includes('jon@acme.example');
      const created = (await f.s.eventsNamed('PersonCreated_v1')).filter(named);
      expect(created.map((e) => e.person_id)).toEqual([subs[0]]);
      const succeeded = (await f.s.eventsNamed('AuthenticationSucceeded_v1')).filter(
        (e) => e.person_id === subs[0],
      );
      expect(succeeded).toHaveLength(2);
      const minted = (await f.s.eventsNamed('TokenMinted_v1')).filter((e) => e.person_id === subs[0]);
      expect(minted).toHaveLength(2);
      // The race is no failure: nothing reported it as one.
      expect(
        (await f.s.eventsNamed('AuthenticationFailed_v1')).filter((e) => e.person_id === subs[0] || named(e)),
      ).toEqual([]);
    } finally {
      f.s.hook.answer = () => undefined;
    }
  }, 60_000);

  for (const stored of [
    {
      as: 'disabled',
      handle: { verified: true },
      person: { active: false },
      reason: 'person_disabled',
      message: 'This account is disabled.',
    },
    {
      as: 'unverified',
      handle: { verified: false },
      person: {},
      reason: 'unverified_handle',
      message:
        'The account with this email address has not verified it, so this sign-in cannot be linked to it.',
    },
  ])
    it(`refuses a first sign-in whose address the API stored meanwhile for a person ${stored.as}`, async () => {
      const email = `kit-${stored.as}@acme.example`;
      f.op.state.decision = { sub: `kit-${stored.as}-at-acme`, email, email_verified: true };
      const failuresNow = async () =>
        (await f.s.eventsNamed('AuthenticationFailed_v1')).filter((e) => e.failure_reason === stored.reason);
      const before = (await failuresNow()).length;
      let madeId = '';
      // While the hook decides, the organization stores a person with the address through the API.
      f.s.hook.answer = async () => {
        if (madeId) return undefined;
        const made = await f.s.call('POST', '/persons', {
          body: { handles: [{ type: 'email_address', value: email, ...stored.handle }], ...stored.person },
        });
        await expectStatus(made, 201);
        madeId = made.json.result.person_id;
        return undefined;
      };
      try {
        const { res, html } = await f.signIn(await f.begin());
        await expectStatus(res, 400);
        expect(res.headers.get('location')).toBeNull();
        expect(messageOf(html)).toBe(stored.message);
      } finally {
        f.s.hook.answer = () => undefined;
      }
      // Reported once; a disabled person is named (the provider authenticated it), a person whose
      // address is unverified is not (the sign-in is not linked to it).
      const deadline = Date.now() + 5000;
      while ((await failuresNow()).length === before && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      expect((await failuresNow()).slice(before).map((e) => e.person_id)).toEqual([
        stored.as === 'disabled' ? madeId : undefined,
      ]);
      expect(
        (await f.s.eventsNamed('AuthenticationSucceeded_v1')).filter((e) => e.person_id === madeId),
      ).toEqual([]);
    }, 60_000);

  it('stores the person of a first sign-in that asks no openid, and its code is exchanged', async () => {
    f.op.state.decision = verified('ike');
    const a = await f.begin({ scope: 'email read' });
    const { res } = await f.signIn(a);
    await expectStatus(res, 303);
    const code = new URL(res.headers.get('location')!).searchParams.get('code');
    expect(code).toBeTruthy();
    // The hook decided (no ID token is signed), and the person it decided on is stored.
    const personId = f.s.hook.seen.at(-1)!.personId;
    await expectStatus(await f.s.call('GET', `/persons/${personId}`), 200);
    const tokens = await exchange(f.s, f.client, code!, a.verifier, f.redirectUri);
    await expectStatus(tokens, 200);
    expect(tokens.json.id_token).toBeUndefined();
    expect(tokens.json.access_token).toBeTruthy();
  }, 60_000);

  it('refuses to finish the sign-in in another browser than the one that started it', async () => {
    f.op.state.decision = verified('ivy');
    const opened = await openLogin((await f.begin()).url);
    const pressed = await f.pressButton(opened);
    const back = await f.atProvider(pressed.headers.get('location')!);
    const stranger = await openLogin((await f.begin()).url);
    const res = await f.callBack(back, stranger.cookie);
    await expectStatus(res, 403);
    expect(res.headers.get('location')).toBeNull();
    // Refused before the code was exchanged: no person made for the provider's account, the failure said.
    const ivy = await f.s.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address:ivy@acme.example')}`,
    );
    await expectStatus(ivy, 200);
    expect(ivy.json.result).toEqual([]);
    expect(await failedWith('other_browser')).toBeDefined();
    // Without any cookie, the same.
    const again = await f.atProvider(
      (await f.pressButton(await openLogin((await f.begin()).url))).headers.get('location')!,
    );
    await expectStatus(await f.callBack(again, ''), 403);
    const still = await f.s.call(
      'GET',
      `/persons?handle=${encodeURIComponent('email_address:ivy@acme.example')}`,
    );
    expect(still.json.result).toEqual([]);
  }, 60_000);

  it("cannot finish the hosted login's provider answer at SSO sign-in's callback", async () => {
    f.op.state.decision = verified('kim');
    const a = await f.begin();
    const opened = await openLogin(a.url);
    const back = await f.atProvider((await f.pressButton(opened)).headers.get('location')!);
    const elsewhere = await fetch(`${f.signInCallbackUrl}${back.search}`, { redirect: 'manual' });
    await expectStatus(elsewhere, 400);
    expect((await elsewhere.json()).errors[0].message).toContain('no sign-in was started with this state');
    // Untouched by that attempt, the answer still finishes the login it was bound to.
    const res = await f.callBack(back, opened.cookie);
    await expectStatus(res, 303);
    expect(new URL(res.headers.get('location')!).searchParams.get('state')).toBe(a.state);
  }, 60_000);

  for (const which of ['off', 'elsewhere'] as const)
    it(`refuses the answer at another credential's redirect URI (${which === 'off' ? 'this' : 'another'} organization's), sending the code nowhere`, async () => {
      f.op.state.decision = verified(`mix-${which}`);
      const a = await f.begin();
      const opened = await openLogin(a.url);
      const back = await f.atProvider((await f.pressButton(opened)).headers.get('location')!);
      const seen = f.op.requests.length;
      const res = await f.callBack(new URL(`${hosted[which]}${back.search}`), opened.cookie);
      await expectStatus(res, 403);
      const html = await res.text();
      expect(html).toContain('came back to another SSO credential&#39;s redirect URI');
      expect(html).not.toContain('name="csrf_token"');
      expect(res.headers.get('location')).toBeNull();
      expect(f.op.requests.slice(seen).filter((r) => r.url.startsWith('/token'))).toEqual([]);
      expect(await failedWith('wrong_callback')).toBeDefined();
      const person = await f.s.call(
        'GET',
        `/persons?handle=${encodeURIComponent(`email_address:mix-${which}@acme.example`)}`,
      );
      expect(person.json.result).toEqual([]);
    }, 60_000);

  for (const iss of ['missing', 'another issuer'] as const)
    it(`answers the page again for an answer with ${iss === 'missing' ? 'no iss (the metadata says it sends one)' : 'the iss of another issuer'}, before any token request`, async () => {
      f.op.state.decision = verified(`iss-${iss.length}`);
      const a = await f.begin();
      const opened = await openLogin(a.url);
      const back = await f.atProvider((await f.pressButton(opened)).headers.get('location')!);
      if (iss === 'missing') back.searchParams.delete('iss');
      else back.searchParams.set('iss', 'https://elsewhere.example');
      const seen = f.op.requests.length;
      const res = await f.callBack(back, opened.cookie);
      await expectStatus(res, 400);
      expect(messageOf(await res.text())).toBe(
        'The answer did not come from the sign-in provider the sign-in was sent to.',
      );
      expect(f.op.requests.slice(seen).filter((r) => r.url.startsWith('/token'))).toEqual([]);
      expect(await failedWith('issuer_mismatch')).toBeDefined();
    }, 60_000);

  it('answers the retired shared callback with an error page, leaving the answer to its own callback', async () => {
    f.op.state.decision = verified('lou');
    const a = await f.begin();
    const opened = await openLogin(a.url);
    const back = await f.atProvider((await f.pressButton(opened)).headers.get('location')!);
    const seen = f.op.requests.length;
    for (const method of ['GET', 'POST']) {
      const retired = await fetch(`${f.s.url}/oauth2/authorize/sso/callback${back.search}`, {
        method,
        redirect: 'manual',
        headers: { cookie: opened.cookie },
      });
      await expectStatus(retired, 410);
      expect(await retired.text()).toContain('each SSO credential has a redirect URI of its own');
    }
    expect(f.op.requests.slice(seen).filter((r) => r.url.startsWith('/token'))).toEqual([]);
    const res = await f.callBack(back, opened.cookie);
    await expectStatus(res, 303);
    expect(new URL(res.headers.get('location')!).searchParams.get('state')).toBe(a.state);
  }, 60_000);

  it('answers an error page for a state no sign-in was started with', async () => {
    const res = await f.callBack(new URL(`${f.callbackUrl}?state=made-up&code=x`), '');
    await expectStatus(res, 400);
    const html = await res.text();
    expect(html).toContain('no sign-in with a provider was started here with this state');
    expect(html).not.toContain('name="csrf_token"');
    expect(res.headers.get('location')).toBeNull();
  });
});

describe('a provider that posts its answer into the hosted login (form_post, as Sign in with Apple does)', () => {
  it('sends the browser on by GET, where its cookie finishes the login it opened', async () => {
    f.op.state.decision = verified('posta');
    const a = await f.begin();
    const opened = await openLogin(a.url);
    const pressed = await f.pressButton(opened);
    await expectStatus(pressed, 303);
    const back = await f.atProvider(pressed.headers.get('location')!);
    // A cross-site POST: the SameSite=Lax cookie does not come with it.
    const posted = await fetch(f.callbackUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: f.op.issuer },
      body: back.searchParams.toString(),
    });
    await expectStatus(posted, 303);
    const onward = new URL(posted.headers.get('location')!);
    expect(`${onward.origin}${onward.pathname}`).toBe(f.callbackUrl);
    const res = await f.callBack(onward, opened.cookie);
    await expectStatus(res, 303);
    const callback = new URL(res.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(f.redirectUri);
    expect(callback.searchParams.get('state')).toBe(a.state);
    const { claims } = await f.redeem(a, callback);
    expect(claims.nonce).toBe(a.nonce);
  }, 60_000);
});
